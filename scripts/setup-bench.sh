#!/usr/bin/env bash
# Installs what the node benchmark (bench/node/node_bench.sh) needs beyond
# scripts/setup.sh: Open vSwitch with DPDK (the peer it is compared with),
# dpdk-testpmd (the harness floor) and gnuplot (the plots). Not run by CI: the
# test suite's smoke run skips OVS when it is absent.
# The benchmark starts OVS privately (own database, run directory, network
# namespace) and calls the DPDK build of ovs-vswitchd by its path, so this
# neither starts the system's OVS service nor changes which ovs-vswitchd the
# system's alternatives select.
set -euo pipefail
[[ $EUID -eq 0 ]] || { echo "setup-bench.sh: run as root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

# Keep package scripts from starting services during the install (Debian's
# policy-rc.d convention), unless the machine already has its own policy.
policy=/usr/sbin/policy-rc.d
own_policy=
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  own_policy=1
fi
trap '[[ -n $own_policy ]] && rm -f "$policy"' EXIT

apt-get update
apt-get install -y --no-install-recommends openvswitch-switch-dpdk dpdk gnuplot-nox iproute2

test -x /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
echo "setup-bench.sh: OVS $(ovs-vsctl --version | head -1 | awk '{print $NF}') with DPDK, testpmd and gnuplot are installed"
