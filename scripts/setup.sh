#!/usr/bin/env bash
# Installs everything Sluice needs to build, test and run its demo on a fresh
# Debian 12 machine, from Debian's own packages only. Idempotent: safe to rerun.
# The Dockerfile's build stage and .ci/run both call this script, so it is the
# single list of dependencies.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "setup.sh: run as root (it installs packages)" >&2
  exit 1
fi

packages=(
  # toolchain
  build-essential cmake ninja-build lld pkg-config clang libclang-rt-dev
  # DPDK 22.11: libraries, the net PMDs (vhost, virtio_user, pcap, null, tap, ...) and dpdk-testpmd
  libdpdk-dev dpdk dpdk-dev librte-meta-net
  # control plane and API
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libboost-program-options-dev libabsl-dev
  # the metrics endpoint's HTTP server
  libcivetweb-dev
  # the node controller (sluice-agent): HTTPS to the Kubernetes API, kubeconfig (YAML)
  libcurl4-openssl-dev libyaml-cpp-dev
  # tests and benchmarks; ctags measures the core's files and functions (unit_sizes)
  libgtest-dev libgmock-dev googletest libbenchmark-dev universal-ctags
  # a real Prometheus (and promtool) scraping sluiced in the metrics test; curl in the node benchmark
  prometheus curl
  # packet capture tests read pcap files back with libpcap
  libpcap-dev
  # ... and tcpdump reads what sluicectl capture writes, from a file and a pipe
  tcpdump
  # networking tools used by the demo and the end-to-end tests
  iproute2 procps containernetworking-plugins
  # the fake Kubernetes API server of the node controller's tests (python3, openssl)
  python3 openssl
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
echo "setup.sh: all ${#packages[@]} packages present"

# Tools only the tests need: cnitool, containerd and the CRI proto for the
# end-to-end tests (before CMake configures: it looks for the proto), helm and
# the pinned npm validators for the packaging tests. The Dockerfile's build
# stage sets SLUICE_TEST_TOOLS=0: an image needs none of them.
if [[ ${SLUICE_TEST_TOOLS:-1} != 0 ]]; then
  bash "$(dirname "${BASH_SOURCE[0]}")/setup-e2e.sh"
  bash "$(dirname "${BASH_SOURCE[0]}")/setup-packaging.sh"
fi
