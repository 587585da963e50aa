#include "common/log.h"

namespace sluice {

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
