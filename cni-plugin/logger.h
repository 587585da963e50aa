// Plugin logging. stdout belongs to the CNI protocol (result or error JSON),
// so logs go to stderr, or to the network config's "logFile" when set.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <fstream>
#include <ostream>
#include <string>
#include <string_view>

namespace sluice::cni {

class Logger {
 public:
  explicit Logger(std::ostream& err) : err_(err) {}

  // Appends to `path` from now on; on failure keeps logging to stderr and
  // says so there (a bad log path must not fail the pod's network set-up).
  void openFile(const std::string& path);
  // Text put in front of every line (command, container id).
  void setContext(std::string context) { context_ = std::move(context); }

  void info(std::string_view msg) { write("info", msg); }
  void warn(std::string_view msg) { write("warn", msg); }
  void error(std::string_view msg) { write("error", msg); }

 private:
  void write(std::string_view level, std::string_view msg);

  std::ostream& err_;     // the injected stderr
  std::ofstream file_;    // open when logFile is in use
  std::string context_;   // e.g. "ADD 1234abcd/net1"
};

}  // namespace sluice::cni
