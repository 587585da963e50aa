#!/usr/bin/env bash
# Installs what the end-to-end tests (tests/e2e/) need, from Debian's packages
# only, and builds the tools Debian ships as source alone. Idempotent.
#   - cnitool: upstream CNI's test client. Debian ships it only in the source
#     package golang-github-appc-cni; it builds offline in GOPATH mode against
#     libcni from golang-github-appc-cni-dev. Installed as $prefix/cnitool.
#   - the CRI API proto (runtime/v1/api.proto): only in Debian's containerd
#     source package (vendor/k8s.io/cri-api). Installed as
#     $share/cri-api/runtime/v1/api.proto; tests/e2e generates its client from it.
# Source packages need a deb-src entry: we add one mirroring the machine's own
# Debian entries (same mirror, suites and keyring), nothing else.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "setup-e2e.sh: run as root (it installs packages)" >&2
  exit 1
fi

prefix=/usr/local/lib/sluice-e2e
share=/usr/local/share/sluice-e2e

packages=(
  # building cnitool: the Go toolchain, libcni, and dpkg-source to unpack the source package
  golang-go golang-github-appc-cni-dev dpkg-dev
  # the runtime path kubelet uses: containerd's CRI plugin and runc
  containerd runc
  # test scripts: netns, JSON assertions, a static pause binary for the sandbox image
  iproute2 jq containernetworking-plugins libc6-dev gcc
  # the VXLAN interop test pings a pod from a kernel-VXLAN "remote node"
  iputils-ping
  # the image test (scripts/build-image.sh): base images from Debian's packages,
  # the Dockerfile built without a Docker engine, the chart's manifest read as YAML
  mmdebstrap buildah python3-yaml
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A deb-src twin of the machine's Debian entries (deb822 or one-line format).
src_list=/etc/apt/sources.list.d/sluice-e2e-src.sources
add_deb_src() {
  local tmp
  tmp=$(mktemp)
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$tmp"
  elif [[ -f /etc/apt/sources.list ]]; then
    src_list=/etc/apt/sources.list.d/sluice-e2e-src.list
    sed -n 's/^deb \(.*debian.*\)$/deb-src \1/p' /etc/apt/sources.list >"$tmp"
  fi
  if [[ ! -s $tmp ]]; then
    rm -f "$tmp"
    echo "setup-e2e.sh: no Debian apt entry to derive a deb-src entry from" >&2
    return 1
  fi
  install -m 0644 "$tmp" "$src_list"
  rm -f "$tmp"
  apt-get update -qq
}

need_cnitool=0 need_proto=0
[[ -x $prefix/cnitool ]] || need_cnitool=1
[[ -f $share/cri-api/runtime/v1/api.proto ]] || need_proto=1
if ((need_cnitool || need_proto)); then
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    add_deb_src
  fi
  work=$(mktemp -d /tmp/sluice-e2e-setup.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  # apt drops privileges to _apt for downloads; it must be able to write here.
  chmod 0755 "$work"
  chown _apt "$work" 2>/dev/null || true

  if ((need_cnitool)); then
    (cd "$work" && apt-get source -qq golang-github-appc-cni >/dev/null 2>&1) || {
      echo "setup-e2e.sh: apt-get source golang-github-appc-cni failed" >&2
      exit 1
    }
    src=$(find "$work" -maxdepth 3 -path '*/cnitool/cnitool.go' -print -quit)
    [[ -n $src ]] || { echo "setup-e2e.sh: cnitool/cnitool.go not in the source package" >&2; exit 1; }
    # GOPATH mode: our copy of cnitool under the first GOPATH entry, libcni
    # (and its dependencies) from Debian's /usr/share/gocode.
    pkg="$work/gopath/src/github.com/containernetworking/cni/cnitool"
    mkdir -p "$pkg" "$prefix"
    cp "$src" "$pkg/"
    (cd "$pkg" && GO111MODULE=off GOPATH="$work/gopath:/usr/share/gocode" GOCACHE="$work/gocache" \
      GOFLAGS= CGO_ENABLED=0 go build -o "$prefix/cnitool" .)
  fi

  if ((need_proto)); then
    (cd "$work" && apt-get source -qq --download-only containerd >/dev/null 2>&1) || {
      echo "setup-e2e.sh: apt-get source containerd failed" >&2
      exit 1
    }
    orig=$(find "$work" -maxdepth 1 -name 'containerd_*.orig.tar.*' -print -quit)
    [[ -n $orig ]] || { echo "setup-e2e.sh: containerd's orig tarball not found" >&2; exit 1; }
    # (grep reads the whole list: an early exit would fail tar under pipefail)
    member=$(tar tf "$orig" | grep 'vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto$' || true)
    member=${member%%$'\n'*}
    [[ -n $member ]] || { echo "setup-e2e.sh: the CRI v1 api.proto is not in $orig" >&2; exit 1; }
    tar xf "$orig" -C "$work" "$member"
    install -D -m 0644 "$work/$member" "$share/cri-api/runtime/v1/api.proto"
  fi
fi
echo "setup-e2e.sh: cnitool at $prefix/cnitool, CRI proto at $share/cri-api/runtime/v1/api.proto"
