// IPAM by delegation, as the reference plugins do it: find the plugin named
// by "ipam.type" in CNI_PATH, run it with our stdin and our environment
// (CNI_COMMAND and the attachment overridable, for undo and GC), and turn its
// output into a validated Result or its error JSON into a status with the
// delegate's own code. Used by the single thread of the sluice-cni process.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/cni_env.h"
#include "cni-plugin/cni_result.h"
#include "cni-plugin/logger.h"

namespace sluice::cni {

class IpamDelegate {
 public:
  // `env` is the invocation's environment; `cni_path` its CNI_PATH entries.
  IpamDelegate(const Environment& env, std::vector<std::string> cni_path, std::string type,
               std::chrono::milliseconds timeout, Logger& log);

  // ADD: the delegate's stdout. An error means the delegate reported a
  // failure (and, as IPAM plugins do, allocated nothing) unless its status
  // code is kDeadlineExceeded: then it was killed and may have allocated.
  absl::StatusOr<std::string> addRaw(std::string_view conf);
  // Validates addRaw()'s output: a result with at least one IP and no
  // interface indexes (they are ours to fill in). The delegate answers in
  // the config's own version (or 1.0.0, see execNegotiated); the Result
  // holds it in the one form every version is made from.
  absl::StatusOr<Result> parseAddResult(std::string_view output) const;
  // DEL for the invocation's attachment, or for `attachment` (GC).
  absl::Status del(std::string_view conf, const std::optional<std::pair<std::string, std::string>>& attachment = {});
  absl::Status check(std::string_view conf);
  // Spec 1.1 verbs; only sent when the delegate says it speaks 1.1.0.
  absl::Status gc(std::string_view conf);
  absl::Status status(std::string_view conf);
  // The delegate's VERSION answer ("supportedVersions").
  absl::StatusOr<std::vector<std::string>> supportedVersions();

 private:
  absl::StatusOr<std::string> findPlugin() const;
  // Runs the delegate once; returns its stdout on exit 0.
  absl::StatusOr<std::string> exec(std::string_view command, std::string_view conf, const Environment& env);
  // exec(), retried once with "cniVersion": "1.0.0" when the delegate
  // refuses a 1.1.0 config as incompatible (code 1). Debian's host-local
  // (plugins 1.1.1) speaks up to 1.0.0, and the IPAM part of a 1.1.0 result
  // is identical to 1.0.0's, so nothing is lost by asking in 1.0.0.
  absl::StatusOr<std::string> execNegotiated(std::string_view command, std::string_view conf,
                                             const Environment& env);

  const Environment& env_;             // the invocation's environment
  std::vector<std::string> cni_path_;  // directories searched for the plugin
  std::string type_;                   // plugin name, a single path component
  std::chrono::milliseconds timeout_;  // per exec
  Logger& log_;
};

}  // namespace sluice::cni
