// Minimal leveled logging to stderr for control threads and tools (never
// called on a PMD's per-packet path). One line per call, prefixed with the
// level, so container logs stay greppable.
#pragma once

#include <atomic>
#include <cstdio>
#include <sstream>
#include <string>

namespace sluice {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

inline std::atomic<LogLevel>& logThreshold() {
  static std::atomic<LogLevel> level{LogLevel::kInfo};
  return level;
}

bool setLogLevel(const std::string& name);  // false for an unknown name
std::string logTimestamp();                 // UTC, millisecond resolution

template <typename... Args>
void logAt(LogLevel level, const char* tag, const Args&... args) {
  if (level > logThreshold().load(std::memory_order_relaxed)) return;
  std::ostringstream line;
  line << logTimestamp() << ' ' << tag << ": ";
  (line << ... << args) << '\n';
  std::fputs(line.str().c_str(), stderr);
}

template <typename... Args>
void logError(const Args&... a) { logAt(LogLevel::kError, "error", a...); }
template <typename... Args>
void logWarning(const Args&... a) { logAt(LogLevel::kWarning, "warning", a...); }
template <typename... Args>
void logInfo(const Args&... a) { logAt(LogLevel::kInfo, "info", a...); }
template <typename... Args>
void logDebug(const Args&... a) { logAt(LogLevel::kDebug, "debug", a...); }

}  // namespace sluice
