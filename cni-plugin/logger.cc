// See logger.h.
#include "cni-plugin/logger.h"

#include <unistd.h>

#include <chrono>
#include <ctime>

namespace sluice::cni {

void Logger::openFile(const std::string& path) {
  file_.open(path, std::ios::app);
  if (!file_) {
    err_ << "sluice-cni: cannot open log file " << path << ", logging to stderr\n";
  }
}

void Logger::write(std::string_view level, std::string_view msg) {
  std::ostream& out = file_.is_open() ? static_cast<std::ostream&>(file_) : err_;
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(millis));
  out << stamp << frac << " sluice-cni[" << getpid() << "] " << level;
  if (!context_.empty()) out << " " << context_;
  out << ": " << msg << '\n';
  out.flush();
}

}  // namespace sluice::cni
