#include "common/log.h"

#include <chrono>
#include <ctime>

namespace sluice {

std::string logTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

bool setLogLevel(const std::string& name) {
  LogLevel level;
  if (name == "error") level = LogLevel::kError;
  else if (name == "warning") level = LogLevel::kWarning;
  else if (name == "info") level = LogLevel::kInfo;
  else if (name == "debug") level = LogLevel::kDebug;
  else return false;
  logThreshold().store(level);
  return true;
}

}  // namespace sluice
