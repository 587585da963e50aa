// The CNI_* environment of one plugin invocation: which verb, which
// attachment, the CNI_ARGS pairs and the plugin search path, validated per
// the spec's rules for each verb (missing or malformed → error code 4).
// The environment is passed in as a map so tests can run the plugin
// in-process. Used by the single thread of the sluice-cni process.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice::cni {

// The process environment (or a test's stand-in), name → value.
using Environment = std::map<std::string, std::string>;

enum class Command { kAdd, kDel, kCheck, kVersion, kStatus, kGc };

std::string_view commandName(Command command);

struct CniEnv {
  Command command = Command::kVersion;
  std::string container_id;  // CNI_CONTAINERID, validated
  std::string netns;         // CNI_NETNS, may be empty for DEL
  std::string ifname;        // CNI_IFNAME, validated
  // CNI_ARGS as "K=V;K=V" pairs, in order.
  std::vector<std::pair<std::string, std::string>> args;
  std::vector<std::string> path;  // CNI_PATH entries, empty ones dropped

  std::optional<std::string> arg(std::string_view key) const;
};

// Reads CNI_COMMAND alone (VERSION needs nothing else).
absl::StatusOr<Command> parseCommand(const Environment& env);

// Reads and validates every variable the verb requires (spec 1.1 §"Parameters").
absl::StatusOr<CniEnv> parseEnv(const Environment& env);

// Spec: starts with an alphanumeric, then alphanumerics, '_', '.', '-'.
// We also cap the length so it always fits in a file name.
absl::Status validateContainerId(std::string_view id);
// Spec: not empty, not "." or "..", under 16 bytes, no '/', ':' or whitespace.
absl::Status validateIfname(std::string_view ifname);

}  // namespace sluice::cni
