// What this node publishes about its pods' routed prefixes: the local
// ports' prefixes (as sluiced lists them) against what its own Node's
// sluice.dev/routed-prefixes says now → the merge patch to write, if any.
// Only this node's own annotation is ever written, as for its VTEP. Pure;
// the reconcile loop calls it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/node_parser.h"

namespace sluice::agent {

// The merge patch that makes `own`'s annotation list exactly `local` (CIDR
// strings of both families, any order): the annotation set, or removed when
// `local` is empty; std::nullopt when the Node already says so.
std::optional<nlohmann::json> routedPrefixesPatch(const std::vector<std::string>& local, const KubeNode& own);

}  // namespace sluice::agent
