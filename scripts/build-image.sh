#!/usr/bin/env bash
# Builds the Sluice container image on a machine with no Docker engine and no
# registry: the Dockerfile's base images from Debian's own packages
# (mmdebstrap, from the apt mirror this machine is configured with), imported
# into buildah's local storage as debian:12 and debian:12-slim so that the
# Dockerfile's FROM lines resolve without a pull, then the Dockerfile built by
# buildah, then optionally exported as an OCI archive (which `ctr images
# import` takes).
#
# Usage: build-image.sh [options]
#   --tag REF          image name (default sluice:<the chart's appVersion>)
#   --oci-archive F    also write the image to F (OCI archive, named REF)
#   --root DIR         buildah storage root (default: buildah's own)
#   --driver NAME      storage driver (default vfs: overlay on overlay, as in
#                      most CI containers, does not mount)
#   --deb-cache DIR    where mmdebstrap keeps the .deb files between the two
#                      base images and between runs (default
#                      /var/cache/sluice-image/debs)
#   --rebuild-bases    make the base images again even if the storage has them
#   --bases-only       stop after the base images
#   --from-build DIR   instead of building from source inside the image, take
#                      the programs of the CMake build in DIR (built on this
#                      same Debian 12): they are installed and collected by
#                      scripts/collect-runtime.sh exactly as the Dockerfile's
#                      build stage does, and the Dockerfile's runtime stage,
#                      unchanged, makes the image from that tree
# Prints the image's size at the end.
set -euo pipefail

root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tag=sluice:$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root_dir/helm/sluice/Chart.yaml")
archive= storage_root= driver=vfs deb_cache=/var/cache/sluice-image/debs rebuild_bases=0 bases_only=0 from_build=
while (($#)); do
  case $1 in
    --tag) tag=$2; shift 2 ;;
    --oci-archive) archive=$2; shift 2 ;;
    --root) storage_root=$2; shift 2 ;;
    --driver) driver=$2; shift 2 ;;
    --deb-cache) deb_cache=$2; shift 2 ;;
    --rebuild-bases) rebuild_bases=1; shift ;;
    --bases-only) bases_only=1; shift ;;
    --from-build) from_build=$(cd "$2" && pwd); shift 2 ;;
    *) echo "build-image.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "build-image.sh: run as root (mmdebstrap, buildah storage)" >&2; exit 1; }
for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "build-image.sh: $tool missing: run scripts/setup.sh" >&2; exit 1; }
done

storage=(--storage-driver "$driver")
[[ -z $storage_root ]] || storage+=(--root "$storage_root/root" --runroot "$storage_root/run")
bah() { buildah "${storage[@]}" "$@"; }
# Chroot isolation: RUN steps need no OCI runtime set-up inside this
# sandbox; only the build stage has RUN steps, and it runs as root anyway.
# Docker format: the OCI image config has no HEALTHCHECK, buildah would drop it.
bud=(bud --pull=never --isolation chroot --layers=false --format docker)

tmp=$(mktemp -d /var/tmp/sluice-image.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
step() { echo "build-image.sh: $* ($(date -u +%T))"; }

# The apt sources this machine uses for Debian itself (not third-party ones):
# the image's packages come from the same mirror as the build machine's.
sources=/etc/apt/sources.list.d/debian.sources
[[ -f $sources ]] || sources=/etc/apt/sources.list

# debian:12 as the official image is: the minbase variant (essential packages
# and apt). debian:12-slim is the same with what the official slim image leaves
# out through dpkg path excludes (documentation but the copyright files,
# manuals, info pages, translations); the excludes stay in the image's dpkg
# configuration, so packages installed later are slimmed the same way.
slim_opts=(
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/groff/*'
  --dpkgopt='path-exclude=/usr/share/linda/*'
  --dpkgopt='path-exclude=/usr/share/lintian/overrides/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
)

# Makes base image $1 with mmdebstrap options $2...; the .deb files are kept in
# $deb_cache so that the second image and later runs download nothing again.
make_base() {
  local name=$1
  shift
  if ((!rebuild_bases)) && bah inspect --type image "docker.io/library/$name" >/dev/null 2>&1; then
    step "base image $name already in the storage"
    return
  fi
  step "base image $name: mmdebstrap bookworm from $sources"
  mkdir -p "$deb_cache" "$tmp/$name"
  # merged-usr hook: /usr merged by mmdebstrap itself, not by installing the
  # usrmerge package (which brings perl). force-unsafe-io: no fsync per
  # unpacked file, as the official images configure dpkg too.
  mmdebstrap --variant=minbase --mode=root --format=tar --quiet "$@" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --dpkgopt=force-unsafe-io \
    --skip=essential/unlink \
    --setup-hook="mkdir -p '$deb_cache' \"\$1\"/var/cache/apt/archives/" \
    --setup-hook="sync-in '$deb_cache' /var/cache/apt/archives/" \
    --customize-hook="sync-out /var/cache/apt/archives '$deb_cache'" \
    bookworm "$tmp/$name/rootfs.tar" "$sources" >"$tmp/$name.log" 2>&1 || {
    tail -30 "$tmp/$name.log" >&2
    echo "build-image.sh: mmdebstrap failed for $name" >&2
    exit 1
  }
  printf 'FROM scratch\nADD rootfs.tar /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nCMD ["bash"]\n' >"$tmp/$name/Containerfile"
  bah "${bud[@]}" --quiet -f "$tmp/$name/Containerfile" -t "docker.io/library/$name" "$tmp/$name" >/dev/null
  rm -rf "${tmp:?}/$name"
  step "base image $name: $(bah images --format '{{.Size}}' "docker.io/library/$name")"
}
make_base debian:12
make_base debian:12-slim "${slim_opts[@]}"
((!bases_only)) || exit 0

if [[ -z $from_build ]]; then
  step "building $tag from source through the Dockerfile"
  bah "${bud[@]}" -f "$root_dir/Dockerfile" -t "$tag" "$root_dir"
else
  # The build stage's last two steps (install, then collect the runtime tree)
  # done on this machine: /usr/local is a private empty tmpfs in a mount
  # namespace of our own, so the install lands where the Dockerfile's does
  # (collect-runtime.sh records physical paths) and nothing else sees it.
  step "collecting the runtime tree of the build in $from_build"
  mkdir -p "$tmp/ctx"
  unshare -m --propagation private bash -ec '
    mount -t tmpfs tmpfs /usr/local
    cmake --install "$1" --strip >/dev/null
    bash "$2/scripts/collect-runtime.sh" "$3/runtime" \
      /usr/local/bin/sluiced /usr/local/bin/sluicectl /usr/local/bin/sluice-cni /usr/local/bin/sluice-agent
  ' sh "$from_build" "$root_dir" "$tmp/ctx"
  # The product Dockerfile's runtime stage verbatim (from its second FROM to
  # the end), behind a build stage that holds only that tree.
  {
    printf 'FROM debian:12 AS build\nCOPY runtime/ /runtime/\n'
    awk '/^FROM /{n++} n>=2' "$root_dir/Dockerfile"
  } >"$tmp/ctx/Containerfile"
  step "building $tag: the Dockerfile's runtime stage on the collected tree"
  bah "${bud[@]}" -f "$tmp/ctx/Containerfile" -t "$tag" "$tmp/ctx"
fi

if [[ -n $archive ]]; then
  # Named as a kubelet would pull the chart's short name (docker.io/library/...).
  ref=$tag
  [[ $ref == */* ]] || ref=docker.io/library/$ref
  rm -f "$archive"
  bah push --quiet "$tag" "oci-archive:$archive:$ref"
  step "wrote $archive ($(du -h "$archive" | cut -f1)), image named $ref"
fi
step "image $tag: $(bah images --format '{{.Size}}' "$tag") (uncompressed; base debian:12-slim $(bah images --format '{{.Size}}' docker.io/library/debian:12-slim))"
