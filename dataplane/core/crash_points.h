// A test hook: kills sluiced at a named step of AddPort, to prove that a
// restart finds every port either whole or absent (never half-made).
// SLUICE_CRASH_AT=<name> in sluiced's environment picks one point of
// crash_points.def; without it nothing ever fires. Control path only:
// AddPort's steps and the checkpoint save run on API threads; no PMD calls
// crashPoint().
//
// Main reads the variable once at start (an unknown name is refused there)
// and arms it only after the restore, so that the restart being tested is
// not killed by its own checkpoint write.
#pragma once

#include <absl/status/status.h>

#include <string_view>

namespace sluice {

enum class CrashPoint {
#define SLUICE_CRASH_POINT(id, name, state) id,
#include "dataplane/core/crash_points.def"
#undef SLUICE_CRASH_POINT
};

// The name SLUICE_CRASH_AT takes for `point`.
std::string_view crashPointName(CrashPoint point);

// Reads SLUICE_CRASH_AT (unset or empty: no point). InvalidArgument, listing
// the known names, when it names none of them.
absl::Status loadCrashPointFromEnvironment();
// From now on, reaching the loaded point kills sluiced.
void armCrashPoint();
// Kills sluiced with SIGKILL (no destructor, no clean-up: like kill -9)
// when `point` is the armed one; otherwise does nothing.
void crashPoint(CrashPoint point);

}  // namespace sluice
