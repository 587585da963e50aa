#!/usr/bin/env bash
# Checks a built Sluice image's contents and configuration (what the
# Dockerfile promises): the four programs, stripped, each loading all of its
# libraries from inside the image (the runtime base's loader resolves them
# there), DPDK's PMD plugins likewise; no compiler, headers or static libraries;
# the slim base's dpkg excludes in force; the shell tools the chart's init
# containers run; entrypoint, user, volume and health check.
# Usage: check-image.sh ROOTFS IMAGE_CONFIG_JSON
#   ROOTFS: the image's file system (e.g. `buildah mount`)
#   IMAGE_CONFIG_JSON: the image's Docker-format config (`buildah inspect`'s
#   .Docker.config), which is where HEALTHCHECK lives
set -euo pipefail

rootfs=${1:?usage: check-image.sh ROOTFS IMAGE_CONFIG_JSON}
config=$(cat "${2:?usage: check-image.sh ROOTFS IMAGE_CONFIG_JSON}")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

programs=(sluiced sluicectl sluice-cni sluice-agent)
for p in "${programs[@]}"; do
  f=$rootfs/usr/local/bin/$p
  [[ -f $f && -x $f ]] && ok "/usr/local/bin/$p" || fail "/usr/local/bin/$p missing or not executable"
  # Debug sections would more than double the image; the install strips them.
  # (Counted, not grep -q: under pipefail a readelf still writing when grep
  # stopped at a match would fail the pipeline and hide the sections.)
  if [[ -f $f ]] && (($(readelf -S -W "$f" | grep -c '\.debug_') > 0)); then fail "$p has debug sections"; fi
done

# The loader of the image lists every object's libraries as resolved inside
# the image; "not found" there is a library collect-runtime.sh missed.
pmd_dir=$(find "$rootfs/usr/lib" -maxdepth 3 -type d -name 'pmds-*' | head -n1)
[[ -n $pmd_dir ]] && ok "DPDK PMD directory ${pmd_dir#"$rootfs"}" || fail "no DPDK PMD directory"
objects=("${programs[@]/#//usr/local/bin/}")
nplugins=0
if [[ -n $pmd_dir ]]; then
  for f in "$pmd_dir"/*.so*; do
    [[ -L $f ]] || { objects+=("${f#"$rootfs"}"); nplugins=$((nplugins + 1)); }
  done
fi
unresolved=0
for o in "${objects[@]}"; do
  out=$(chroot "$rootfs" /lib64/ld-linux-x86-64.so.2 --list "$o" 2>&1) || { fail "$o: $out"; continue; }
  if grep -q 'not found' <<<"$out"; then
    fail "$o: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ')"
    unresolved=$((unresolved + 1))
  fi
done
((unresolved)) || ok "the programs and $nplugins PMD plugins resolve every library inside the image"

# Nothing of the build stage: compilers, build tools, headers, static
# libraries (Debian's base has an empty /usr/include).
before=$fails
for t in gcc g++ cc c++ clang clang++ cmake ld make cpp protoc; do
  [[ ! -e $rootfs/usr/bin/$t ]] || fail "/usr/bin/$t present"
done
headers=$(find "$rootfs/usr/include" "$rootfs/usr/local/include" ! -type d 2>/dev/null | head -n3)
[[ -z $headers ]] || fail "headers present: ${headers//$rootfs/}"
statics=$(find "$rootfs/usr" -name '*.a' | head -n3)
[[ -z $statics ]] || fail "static libraries present: ${statics//$rootfs/}"
[[ ! -e $rootfs/usr/lib/gcc ]] || fail "/usr/lib/gcc present"
((fails > before)) || ok "no compilers, build tools, headers or static libraries"

# The slim base: manuals and translations are never unpacked, documentation
# only keeps the copyright files.
extra_docs=$(find "$rootfs/usr/share/doc" -type f ! -name copyright 2>/dev/null | head -n3)
mans=$(find "$rootfs/usr/share/man" "$rootfs/usr/share/locale" -type f 2>/dev/null | head -n3)
[[ -z $extra_docs && -z $mans ]] && ok "slim base: no manuals, translations or documentation but copyright files" ||
  fail "slim base has documentation: ${extra_docs//$rootfs/} ${mans//$rootfs/}"

# The chart's init containers run /bin/sh with cp, chmod, mv, sed, grep, cat.
for t in sh cp chmod mv sed grep cat; do
  [[ -x $rootfs/bin/$t || -x $rootfs/usr/bin/$t ]] || fail "$t missing (the chart's init containers use it)"
done
ok "the init containers' shell tools are present"

check_config() {
  local expr=$1 what=$2
  jq -e "$expr" <<<"$config" >/dev/null && ok "$what" || fail "$what: $(jq -c . <<<"$config")"
}
check_config '.Entrypoint == ["/usr/local/bin/sluiced"]' 'entrypoint /usr/local/bin/sluiced'
check_config '.User == "0:0"' 'user 0:0'
check_config '.Volumes | keys == ["/var/run/sluice"]' 'volume /var/run/sluice'
check_config '.Healthcheck.Test == ["CMD", "/usr/local/bin/sluicectl", "--socket", "/var/run/sluice/sluice.sock", "health"]' \
  'health check: sluicectl health on /var/run/sluice/sluice.sock'

[[ $fails -eq 0 ]] || { echo "$fails image check(s) failed"; exit 1; }
echo "image checks passed"
