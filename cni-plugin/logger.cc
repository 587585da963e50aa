// See logger.h.
#include "cni-plugin/logger.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <sstream>

namespace sluice::cni {

void Logger::write(std::string_view level, std::string_view msg) {
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
  std::ostringstream line;
  line << stamp << frac << " sluice-cni[" << getpid() << "] " << level;
  if (!context_.empty()) line << " " << context_;
  line << ": " << msg << '\n';
  const std::string text = line.str();
  if (file_.get() >= 0) {
    // A failed log write has nowhere better to go; the plugin goes on.
    if (::write(file_.get(), text.data(), text.size()) >= 0) return;
  }
  err_ << text;
  err_.flush();
}

}  // namespace sluice::cni
