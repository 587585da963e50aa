#!/usr/bin/env bash
# Runs every Sluice test, as root, after scripts/setup.sh:
#   1. the normal build (gcc, warnings are errors) and all CTest suites but
#      the unit test programs: integration on real DPDK vdevs, the CNI
#      plugin's, packaging, end-to-end;
#   2. one clang tree with AddressSanitizer + UndefinedBehaviorSanitizer and
#      libFuzzer's coverage: the unit tests (only here) under the sanitizers,
#      then every libFuzzer target for a bounded number of inputs;
#   3. the tests that run control and PMD threads together under
#      ThreadSanitizer (label tsan: unit tests, the in-process PMD tests, and
#      the integration tests with sluiced itself built with TSan).
# Ends with the names of the tests that failed or were skipped, then one
# summary line "N passed, N failed, N skipped". Exit status 0 only if nothing
# failed and every skip is one .ci/expected-skips names (with its reason).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${JOBS:-$(nproc)}
passed=0
failed=0
skipped=0
ctest_runs=0
log_dir=$(mktemp -d)
mapfile -t expected_skips < <(sed -E 's/#.*//; s/[[:space:]]+$//; /^$/d' .ci/expected-skips)

# Every tree: Ninja (it schedules compiles and links across the whole tree,
# not per directory) and lld (about 55 programs link gRPC, Abseil and DPDK).
# Line tables only: backtraces and sanitizer reports keep file:line, and the
# builds take about a quarter less time.
common=(-G Ninja -DSLUICE_DEBUG_INFO=lines -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld
  -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld)

# Each phase's heading carries the minutes since the start, so a run's log
# shows where its time went (CI allows 90 minutes in all, setup included).
start=$SECONDS
phase() { echo "== $* (at $(((SECONDS - start) / 60)) min)"; }

# Each suite's failed and skipped tests, named with the build they ran in, so
# the end of a long log says which ones they were without scrolling back.
failed_names="$log_dir/failed-tests"
skipped_names="$log_dir/skipped-tests"
unexpected_skips="$log_dir/unexpected-skips"
: >"$failed_names"
: >"$skipped_names"
: >"$unexpected_skips"
list_outcomes() {
  if [[ -s $skipped_names ]]; then
    echo "== skipped tests"
    cat "$skipped_names"
  fi
  if [[ -s $unexpected_skips ]]; then
    echo "== skips .ci/expected-skips does not name (each fails the run)"
    cat "$unexpected_skips"
  fi
  if [[ -s $failed_names ]]; then
    echo "== failed tests"
    cat "$failed_names"
  fi
}

die() {
  echo "test.sh: $*" >&2
  list_outcomes
  echo "${passed} passed, $((failed + 1)) failed, ${skipped} skipped"
  exit 1
}

is_expected_skip() {
  local name
  for name in "${expected_skips[@]}"; do [[ $name == "$1" ]] && return 0; done
  return 1
}

# Runs ctest with the given arguments in a build dir and adds up its counts:
# a test CTest lists under "did not run" as Skipped is counted as skipped,
# never as passed.
run_ctest() {
  local dir=$1
  shift
  local tree out line total bad skips name
  tree=$(basename "$dir")
  ctest_runs=$((ctest_runs + 1))
  out="$log_dir/ctest-$ctest_runs-$tree.log"  # one tree may run ctest twice
  (cd "$dir" && ctest --output-on-failure "$@") 2>&1 | tee "$out"
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$out" | tail -1)
  if [[ -z $line ]]; then
    if grep -q "No tests were found" "$out"; then die "no tests found in $dir ($*)"; fi
    die "ctest in $dir did not finish"
  fi
  bad=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  sed -n '/The following tests FAILED:/,/^$/p' "$out" | grep -E '^[[:space:]]+[0-9]+ - ' |
    sed -E "s/^[[:space:]]+/$tree: /" >>"$failed_names"
  skips=0
  while read -r name; do
    [[ -n $name ]] || continue
    skips=$((skips + 1))
    echo "$tree: $name" >>"$skipped_names"
    is_expected_skip "$name" || echo "$tree: $name" >>"$unexpected_skips"
  done < <(sed -n '/The following tests did not run:/,/^$/p' "$out" |
    sed -nE 's/^[[:space:]]+[0-9]+ - (.*) \((Skipped|Disabled)\)$/\1/p')
  passed=$((passed + total - bad - skips))
  failed=$((failed + bad))
  skipped=$((skipped + skips))
}

# The image test's two base images (debian:12 and -slim, made with mmdebstrap
# from the apt mirror) are made while the compilers run: mostly downloads
# and unpacking, minutes the image test would otherwise spend on its own.
image_store=
base_images_pid=
if [[ -z ${SLUICE_IMAGE_STORAGE:-} ]] && command -v buildah >/dev/null && command -v mmdebstrap >/dev/null; then
  image_store=$(mktemp -d /var/tmp/sluice-test-images.XXXXXX)
  bash scripts/build-image.sh --root "$image_store" --bases-only >"$log_dir/base-images.log" 2>&1 &
  base_images_pid=$!
fi
cleanup() {
  [[ -z $base_images_pid ]] || kill "$base_images_pid" 2>/dev/null
  [[ -z $image_store ]] || rm -rf "$image_store"
  rm -rf "$log_dir"
}
trap cleanup EXIT

phase "build (gcc, RelWithDebInfo, -Werror)"
# Without the unit test programs: the clang tree below builds and runs them
# (under the sanitizers), so gcc compiling them a second time adds nothing
# but minutes. Every other suite runs here.
cmake -S . -B build "${common[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_UNIT_TESTS=OFF >/dev/null ||
  die "cmake configure failed"
cmake --build build -j "$jobs" || die "build failed"

if [[ -n $base_images_pid ]]; then
  phase "waiting for the image test's base images"
  if wait "$base_images_pid"; then
    export SLUICE_IMAGE_STORAGE=$image_store
  else
    # The image test makes them itself then, and says why if it cannot.
    echo "test.sh: the base images were not made ahead (tail of the log follows); the image test makes its own"
    tail -20 "$log_dir/base-images.log"
  fi
  base_images_pid=
fi

phase "all test suites"
# Tests marked RUN_SERIAL (integration, end-to-end: busy-polling PMD
# threads) still run alone; the rest run two at a time.
run_ctest build -j "$jobs"

phase "clang tree: unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# One tree for both: the fuzz targets need the same sanitizers (and clang),
# and sharing the libraries halves what this phase compiles. It links the
# normal tree's generated API code (SLUICE_PROTO_FROM); the TSan tree does
# not: there, protobuf's map code compiled with and without TSan in one
# program crashed (SEGV in Map::TableEntryIsNonEmptyList). Being
# clang's, this tree also checks the lock annotations (-Wthread-safety as an
# error).
CC=clang CXX=clang++ cmake -S . -B build-asan "${common[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DSLUICE_SANITIZE=ON -DSLUICE_FUZZ=ON -DSLUICE_BENCH=OFF -DSLUICE_THREAD_SAFETY=ON \
  -DSLUICE_PROTO_FROM="$root/build" >/dev/null ||
  die "cmake configure (asan) failed"
cmake --build build-asan -j "$jobs" --target sanitized_unit_tests fuzz_targets || die "build (asan) failed"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest build-asan -L unit -j "$jobs"

phase "fuzz targets, bounded runs"
run_ctest build-asan -L fuzz -j "$jobs"

phase "tests with threads under ThreadSanitizer"
# sluice-cni and sluicectl are single-threaded: the TSan tests run the
# normal tree's (SLUICE_TOOLS_FROM) instead of building them a second time.
cmake -S . -B build-tsan "${common[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_TSAN=ON -DSLUICE_BENCH=OFF \
  -DSLUICE_TOOLS_FROM="$root/build" >/dev/null || die "cmake configure (tsan) failed"
cmake --build build-tsan -j "$jobs" --target tsan_tests || die "build (tsan) failed"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
  run_ctest build-tsan -L tsan -j "$jobs"

phase "done"
list_outcomes
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
((failed == 0)) && [[ ! -s $unexpected_skips ]]
