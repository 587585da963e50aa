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
  // DEL only: why CNI_IFNAME is not a name ADD accepts (empty when it is).
  // ADD refused it, so no attachment by that name exists and DEL has nothing
  // to do; failing instead would fail every retry and leak the sandbox.
  std::string refused_ifname;
  // DEL, GC, STATUS: why CNI_ARGS was ignored (empty when it parsed). These
  // verbs need none of it, and must not fail because a runtime garbled it.
  std::string ignored_args;

  std::optional<std::string> arg(std::string_view key) const;
};

// Reads CNI_COMMAND alone (VERSION needs nothing else).
absl::StatusOr<Command> parseCommand(const Environment& env);

// Reads and validates every variable the verb requires (the CNI spec's parameters).
absl::StatusOr<CniEnv> parseEnv(const Environment& env);

// Spec: starts with an alphanumeric, then alphanumerics, '_', '.', '-'.
// We also cap the length so it always fits in a file name.
absl::Status validateContainerId(std::string_view id);
// Linux's rule for a netdev name (dev_valid_name): 1..15 bytes, not "." or
// "..", no '/', ':', NUL or whitespace as the kernel's isspace() counts it
// (which includes the Latin-1 no-break space, 0xA0). The CNI spec's rule is
// the same; anything the kernel accepts ("net@1", Multus's style) passes.
absl::Status validateIfname(std::string_view ifname);

}  // namespace sluice::cni
