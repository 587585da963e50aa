#include "dataplane/core/crash_points.h"

#include <absl/strings/str_cat.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <string>

#include "common/log.h"

namespace sluice {
namespace {

constexpr std::string_view kNames[] = {
#define SLUICE_CRASH_POINT(id, name, state) name,
#include "dataplane/core/crash_points.def"
#undef SLUICE_CRASH_POINT
};
constexpr int kNoPoint = -1;

// Written by main before the API serves (no AddPort runs yet), read by API
// threads: relaxed is enough, the threads start after the store.
std::atomic<int> g_loaded{kNoPoint};
std::atomic<int> g_armed{kNoPoint};

}  // namespace

std::string_view crashPointName(CrashPoint point) { return kNames[static_cast<int>(point)]; }

absl::Status loadCrashPointFromEnvironment() {
  const char* wanted = std::getenv("SLUICE_CRASH_AT");
  if (wanted == nullptr || *wanted == '\0') return absl::OkStatus();
  std::string known;
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i) {
    if (kNames[i] == wanted) {
      g_loaded.store(i, std::memory_order_relaxed);
      logWarning("*** SLUICE_CRASH_AT=", wanted, ": sluiced will kill itself there (a test hook) ***");
      return absl::OkStatus();
    }
    known += std::string(i == 0 ? "" : ", ") + std::string(kNames[i]);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("SLUICE_CRASH_AT=", wanted, " names no crash point (known: ", known, ")"));
}

void armCrashPoint() { g_armed.store(g_loaded.load(std::memory_order_relaxed), std::memory_order_relaxed); }

void crashPoint(CrashPoint point) {
  if (g_armed.load(std::memory_order_relaxed) != static_cast<int>(point)) return;
  // The test reads this line to know where sluiced died.
  logError("crash point ", crashPointName(point), " reached: killing sluiced");
  std::raise(SIGKILL);
}

}  // namespace sluice
