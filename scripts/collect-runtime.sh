#!/usr/bin/env bash
# Copies programs and everything they load at run time into DESTDIR, laid out
# as on this machine, for the Dockerfile's runtime stage: the programs, the
# shared libraries ldd resolves for them, and DPDK's PMD plugin directory with
# the libraries of every plugin in it (the EAL dlopens each file there at start
# and refuses to start if one fails to load). glibc itself is left out: the
# runtime base image (same Debian release) has it.
# Usage: collect-runtime.sh DESTDIR PROGRAM...
set -euo pipefail

dest=${1:?usage: collect-runtime.sh DESTDIR PROGRAM...}
shift
(($#)) || { echo "collect-runtime.sh: no programs given" >&2; exit 1; }

# The plugin directory the EAL was built to search (RTE_EAL_PMD_PATH), from
# rte_build_config.h in one of DPDK's include directories.
pmd_dir=
for inc in $(pkg-config --cflags-only-I libdpdk); do
  h=${inc#-I}/rte_build_config.h
  [[ -f $h ]] && pmd_dir=$(sed -n 's/^#define RTE_EAL_PMD_PATH "\(.*\)"$/\1/p' "$h")
  [[ -z $pmd_dir ]] || break
done
[[ -n $pmd_dir && -d $pmd_dir ]] || { echo "collect-runtime.sh: DPDK PMD directory not found" >&2; exit 1; }

# Copies a path with its directories; a symlink is copied as a link and its
# target follows, so sonames keep resolving inside DESTDIR. Each path once:
# the 76 plugins share most of their libraries, and resolving a path costs
# several processes.
declare -A copied
copy() {
  local p=$1
  [[ -z ${copied[$p]:-} ]] || return 0
  copied[$p]=1
  while :; do
    # Physical directory: on merged-/usr systems ldd says /lib/..., which is a
    # symlink to /usr/lib/... in the image too; copy to the real place.
    p=$(cd "$(dirname "$p")" && pwd -P)/${p##*/}
    if [[ ! -e $dest$p && ! -L $dest$p ]]; then
      mkdir -p "$dest$(dirname "$p")"
      cp -a "$p" "$dest$p"
    fi
    [[ -L $p ]] || break
    local t
    t=$(readlink "$p")
    [[ $t == /* ]] || t=$(dirname "$p")/$t
    p=$t
  done
}

# glibc and the dynamic loader come with the base image.
is_base() {
  case ${1##*/} in
    ld-linux*.so*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|libutil.so*) return 0 ;;
  esac
  return 1
}

# The plugin classes sluiced uses: buses, mempools and ports; the drivers'
# common code comes in as the libraries they link. The crypto, compression,
# event, baseband, regex, raw, DMA and vDPA drivers in the same directory (and
# the common code only they link, which brings intel-ipsec-mb, 12 MB) are never
# used by it; the EAL loads what the directory holds, so leaving them out of
# the copy is all it takes.
plugin_classes='bus|mempool|net'

objects=("$@")
mkdir -p "$dest$(cd "$pmd_dir" && pwd -P)"
for f in "$pmd_dir"/*.so*; do
  [[ ${f##*/} =~ ^librte_($plugin_classes)_ ]] || continue
  copy "$f"  # the soname links too, as the directory has them
  [[ -L $f ]] || objects+=("$f")  # each plugin's libraries once, not once per link
done

mkdir -p "$dest"
for o in "${objects[@]}"; do
  copy "$o"
  deps=$(ldd "$o")
  # ldd lines: "libfoo.so.1 => /path/libfoo.so.1 (0x...)"; a "not found"
  # means the build stage itself is incomplete, which must not pass silently.
  if grep -q 'not found' <<<"$deps"; then
    echo "collect-runtime.sh: $o: $(grep 'not found' <<<"$deps")" >&2
    exit 1
  fi
  while read -r lib; do
    is_base "$lib" || copy "$lib"
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 }' <<<"$deps")
done
echo "collect-runtime.sh: $# programs, $(find "$dest" -type f | wc -l) files, $(du -sh "$dest" | cut -f1) in $dest"
