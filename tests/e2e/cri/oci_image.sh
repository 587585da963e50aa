#!/usr/bin/env bash
# Assembles an OCI image archive from static binaries, for `ctr image
# import`: the pod sandbox ("pause") image and the containers' image of the
# containerd e2e tests (no registry is reachable here, and Debian ships no
# such images).
# Usage: oci_image.sh IMAGE_REF OUT.tar ENTRYPOINT BINARY...
# Each BINARY lands at /<its base name>; ENTRYPOINT names one of them.
# Layout (OCI image-layout 1.0): oci-layout, index.json, blobs/sha256/<digest>
# for one uncompressed layer holding the binaries, the image config and the
# manifest.
set -euo pipefail
ref=$1 out=$2 entry=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/rootfs" "$dir/image/blobs/sha256"
names=()
for bin in "$@"; do
  install -m 0755 "$bin" "$dir/rootfs/$(basename "$bin")"
  names+=("$(basename "$bin")")
done
[[ -x $dir/rootfs/$entry ]] || { echo "oci_image.sh: entrypoint $entry is none of the binaries" >&2; exit 2; }

# Stores stdin as a blob; prints "digest size".
blob() {
  local tmp="$dir/blob.tmp" digest
  cat >"$tmp"
  digest=$(sha256sum "$tmp" | cut -d' ' -f1)
  mv "$tmp" "$dir/image/blobs/sha256/$digest"
  echo "$digest $(stat -c %s "$dir/image/blobs/sha256/$digest")"
}

# Fixed owner and time so the same binaries give the same digest.
read -r layer layer_size < <(tar -C "$dir/rootfs" --owner=0 --group=0 --numeric-owner \
  --mtime=@0 --sort=name -cf - "${names[@]}" | blob)
read -r config config_size < <(jq -cn --arg l "sha256:$layer" --arg e "/$entry" '{
  architecture: "amd64", os: "linux",
  config: {Entrypoint: [$e], WorkingDir: "/"},
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
