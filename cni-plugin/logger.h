// Plugin logging. stdout belongs to the CNI protocol (result or error JSON),
// so logs go to stderr, or to the network config's "logFile" when set.
// Each line is one write(2) on an O_APPEND descriptor, so the lines of
// plugins running at the same time do not interleave within a line.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "cni-plugin/file_util.h"

namespace sluice::cni {

class Logger {
 public:
  explicit Logger(std::ostream& err) : err_(err) {}

  // Appends to this file (opened by the caller inside the node's log
  // directory) from now on, instead of stderr.
  void useFile(UniqueFd fd) { file_ = std::move(fd); }
  // Text put in front of every line (command, container id).
  void setContext(std::string context) { context_ = std::move(context); }

  void info(std::string_view msg) { write("info", msg); }
  void warn(std::string_view msg) { write("warn", msg); }
  void error(std::string_view msg) { write("error", msg); }

 private:
  void write(std::string_view level, std::string_view msg);

  std::ostream& err_;     // the injected stderr
  UniqueFd file_;         // open when logFile is in use
  std::string context_;   // e.g. "ADD 1234abcd/net1"
};

}  // namespace sluice::cni
