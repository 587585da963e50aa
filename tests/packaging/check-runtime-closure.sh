#!/usr/bin/env bash
# Shows that scripts/collect-runtime.sh (the Dockerfile's runtime-stage input)
# gathers everything a DPDK program needs: collects dpdk-testpmd (a stand-in
# for sluiced, which links DPDK the same way) into an empty tree, adds only what
# the runtime base image provides (glibc and the loader), and runs it chrooted
# there with a net_null port, in a private mount namespace. It passes only if
# the EAL loads its PMD plugins from the collected plugin directory and the port
# comes up.
set -euo pipefail

root=${1:?usage: check-runtime-closure.sh REPO_ROOT}
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd missing (scripts/setup.sh installs dpdk)"; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

bash "$root/scripts/collect-runtime.sh" "$stage" "$(command -v dpdk-testpmd)"

# Stand-in for debian:12-slim: merged /usr, glibc and the loader.
ln -s usr/lib "$stage/lib"
ln -s usr/lib64 "$stage/lib64"
mkdir -p "$stage/usr/lib64" "$stage/usr/lib/x86_64-linux-gnu" "$stage/proc" "$stage/sys" "$stage/dev" \
  "$stage/tmp" "$stage/var/run"
testpmd=$(command -v dpdk-testpmd)
while read -r lib; do
  cp -L "$lib" "$stage/usr/lib/x86_64-linux-gnu/${lib##*/}"
done < <(ldd "$testpmd" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\// && $i ~ /(ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so)/) print $i }')
ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$stage/usr/lib64/ld-linux-x86-64.so.2"

pmd_dir=$(find "$stage" -type d -name 'pmds-*' | head -n1)
[[ -n $pmd_dir ]] || { echo "FAIL: no PMD plugin directory collected"; exit 1; }
echo "collected $(find "$pmd_dir" -name '*.so*' ! -type l | wc -l) PMD plugins into ${pmd_dir#"$stage"}"

out=$stage/tmp/testpmd.log
unshare -m --propagation private sh -ec '
  stage=$1
  mount -t proc proc "$stage/proc"
  mount --rbind /sys "$stage/sys"
  mount --rbind /dev "$stage/dev"
  chroot "$stage" /usr/bin/dpdk-testpmd --no-huge --no-pci -m 256 --no-shconf \
    --log-level=lib.eal:debug --vdev net_null0 -- --total-num-mbufs=2048 </dev/null
' sh "$stage" >"$out" 2>&1 || { cat "$out"; echo "FAIL: dpdk-testpmd did not run in the collected tree"; exit 1; }

grep -E 'open shared lib .*/pmds-[0-9.]+/librte_net_null' "$out" || { cat "$out"; echo "FAIL: net_null not loaded from the plugin directory"; exit 1; }
grep -E '^Port 0: ' "$out" || { cat "$out"; echo "FAIL: the net_null port did not come up"; exit 1; }
echo "ok: dpdk-testpmd ran in the collected tree with its PMD plugins"
