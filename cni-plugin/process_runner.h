// Runs a delegate plugin (IPAM) as a child process: the given environment
// and stdin, stdout and stderr captured, killed when it outlives a deadline.
// Uses posix_spawn rather than fork because the process may have gRPC
// threads running (fork in a threaded process may only call async-signal-safe
// functions). Used by the single thread of the sluice-cni process.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cni-plugin/cni_env.h"

namespace sluice::cni {

struct ProcessOutput {
  int exit_code = -1;  // the child's exit status (128+N when killed by signal N)
  std::string out;     // everything it wrote on stdout
  std::string err;     // everything it wrote on stderr
};

// Fails (kDeadlineExceeded) when the child is still running at `timeout`; it
// is then killed and reaped. Fails (kInternal) when it cannot be started.
absl::StatusOr<ProcessOutput> runProcess(const std::string& path, const Environment& env,
                                         std::string_view input, std::chrono::milliseconds timeout);

}  // namespace sluice::cni
