#!/usr/bin/env bash
# Runs every Sluice test, as root, after scripts/setup.sh:
#   1. the normal build (warnings are errors) and all CTest suites: unit,
#      integration on real DPDK vdevs, the CNI plugin's, packaging, end-to-end;
#   2. the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the tests that run control and PMD threads together under
#      ThreadSanitizer (label tsan: unit tests, the in-process PMD tests, and
#      the integration tests with sluiced itself built with TSan);
#   4. every libFuzzer target for a bounded number of inputs (clang).
# Ends with the names of the tests that failed, if any, then one summary line
# "N passed, N failed". Exit status 0 only if all passed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${JOBS:-$(nproc)}
passed=0
failed=0
log_dir=$(mktemp -d)

# Line tables only: backtraces and sanitizer reports keep file:line, and the
# four builds take about a quarter less time.
debug_info=(-DSLUICE_DEBUG_INFO=lines)

# Each phase's heading carries the minutes since the start, so a run's log
# shows where its time went (CI allows 90 minutes in all, setup included).
start=$SECONDS
phase() { echo "== $* (at $(((SECONDS - start) / 60)) min)"; }

# Each suite's failed tests, named with the build they ran in, so the end of
# a long log says which ones failed without scrolling back to each suite.
failed_names="$log_dir/failed-tests"
: >"$failed_names"
list_failures() {
  if [[ -s $failed_names ]]; then
    echo "== failed tests"
    cat "$failed_names"
  fi
}

die() {
  echo "test.sh: $*" >&2
  list_failures
  echo "${passed} passed, $((failed + 1)) failed"
  exit 1
}

# Runs ctest with the given arguments in a build dir and adds up its counts.
run_ctest() {
  local dir=$1
  shift
  local out="$log_dir/ctest-$(basename "$dir").log"
  (cd "$dir" && ctest --output-on-failure "$@") 2>&1 | tee "$out"
  local line total bad
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$out" | tail -1)
  if [[ -z $line ]]; then
    if grep -q "No tests were found" "$out"; then die "no tests found in $dir ($*)"; fi
    die "ctest in $dir did not finish"
  fi
  bad=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  sed -n '/The following tests FAILED:/,/^$/p' "$out" | grep -E '^[[:space:]]+[0-9]+ - ' |
    sed -E "s/^[[:space:]]+/$(basename "$dir"): /" >>"$failed_names"
  passed=$((passed + total - bad))
  failed=$((failed + bad))
}

phase "build (RelWithDebInfo, -Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${debug_info[@]}" >/dev/null || die "cmake configure failed"
cmake --build build -j "$jobs" || die "build failed"

phase "all test suites"
run_ctest build

phase "unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug "${debug_info[@]}" -DSLUICE_SANITIZE=ON -DSLUICE_BENCH=OFF >/dev/null ||
  die "cmake configure (asan) failed"
cmake --build build-asan -j "$jobs" --target sanitized_unit_tests || die "build (asan) failed"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest build-asan -L unit

phase "tests with threads under ThreadSanitizer"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "${debug_info[@]}" -DSLUICE_TSAN=ON -DSLUICE_BENCH=OFF >/dev/null ||
  die "cmake configure (tsan) failed"
cmake --build build-tsan -j "$jobs" --target tsan_tests || die "build (tsan) failed"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" \
  run_ctest build-tsan -L tsan

phase "fuzz targets, bounded runs"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DSLUICE_FUZZ=ON "${debug_info[@]}" -DSLUICE_BENCH=OFF >/dev/null ||
  die "cmake configure (fuzz) failed"
cmake --build build-fuzz -j "$jobs" --target fuzz_targets || die "build (fuzz) failed"
run_ctest build-fuzz -R '^fuzz_'

phase "done"
list_failures
rm -rf "$log_dir"
echo "${passed} passed, ${failed} failed"
((failed == 0))
