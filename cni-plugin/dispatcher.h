// The one entry point of sluice-cni: reads CNI_COMMAND, validates the
// environment and the network config, runs the verb and writes the spec's
// result or error JSON. Environment, stdin, stdout and stderr are injected,
// so tests run the whole plugin in-process; main.cc passes the real ones.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <ostream>
#include <string_view>

#include "cni-plugin/cni_env.h"

namespace sluice::cni {

struct PluginIo {
  const Environment& env;       // CNI_* variables (and anything else, passed to IPAM)
  std::string_view stdin_data;  // the network config
  std::ostream& out;            // result or error JSON only
  std::ostream& err;            // logs, unless the config names a logFile
};

// Returns the process exit code: 0 on success, 1 with an error object on
// stdout otherwise.
int runPlugin(const PluginIo& io);

}  // namespace sluice::cni
