#!/usr/bin/env bash
# Assembles an OCI image archive around one static binary, for `ctr image
# import`: the pod sandbox image of the containerd e2e test (no registry is
# reachable here, and Debian ships no pause image).
# Usage: pause_image.sh BINARY IMAGE_REF OUT.tar
# Layout (OCI image-layout 1.0): oci-layout, index.json, blobs/sha256/<digest>
# for one uncompressed layer holding /pause, the image config and the manifest.
set -euo pipefail
bin=$1 ref=$2 out=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/rootfs" "$dir/image/blobs/sha256"
install -m 0755 "$bin" "$dir/rootfs/pause"

# Stores stdin as a blob; prints "digest size".
blob() {
  local tmp="$dir/blob.tmp" digest
  cat >"$tmp"
  digest=$(sha256sum "$tmp" | cut -d' ' -f1)
  mv "$tmp" "$dir/image/blobs/sha256/$digest"
  echo "$digest $(stat -c %s "$dir/image/blobs/sha256/$digest")"
}

# Fixed owner and time so the same binary gives the same digest.
read -r layer layer_size < <(tar -C "$dir/rootfs" --owner=0 --group=0 --numeric-owner \
  --mtime=@0 --sort=name -cf - pause | blob)
read -r config config_size < <(jq -cn --arg l "sha256:$layer" '{
  architecture: "amd64", os: "linux",
  config: {Entrypoint: ["/pause"], WorkingDir: "/"},
  rootfs: {type: "layers", diff_ids: [$l]}}' | blob)
read -r manifest manifest_size < <(jq -cn --arg c "sha256:$config" --argjson cs "$config_size" \
  --arg l "sha256:$layer" --argjson ls "$layer_size" '{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' | blob)
jq -cn --arg m "sha256:$manifest" --argjson ms "$manifest_size" --arg ref "$ref" '{
  schemaVersion: 2,
  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
               platform: {architecture: "amd64", os: "linux"},
               annotations: {"io.containerd.image.name": $ref,
                             "org.opencontainers.image.ref.name": ($ref | sub(".*:"; ""))}}]}' \
  >"$dir/image/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/image/oci-layout"
tar -C "$dir/image" --owner=0 --group=0 --numeric-owner -cf "$out" oci-layout index.json blobs
