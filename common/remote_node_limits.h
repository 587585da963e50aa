// How much one remote node may claim, and all of them together: the bounds
// sluiced's remote-node table (AddNode, ApplyNodes, the config file) and the
// node controller's Node parse both enforce, so that one Node's annotation
// or one API call cannot grow the routing tables (which control scans per
// flow miss) without limit. Pure constants; any thread.
#pragma once

#include <cstddef>

namespace sluice {

// Pod CIDRs per family per node: Kubernetes gives a Node at most one per
// family (spec.podCIDRs); two leave room for a CIDR being replaced.
inline constexpr size_t kMaxPodCidrsPerFamily = 2;
// Routed prefixes per node: as many as one port may own (a node whose pods
// own more is not what routed prefixes are for).
inline constexpr size_t kMaxRoutedPrefixesPerNode = 64;
// Routed prefixes of all remote nodes together: one per tunnel on average
// (vxlan::kMaxTunnels is 8192), so the routes a miss is translated against
// stay within a few times the pod CIDRs'.
inline constexpr size_t kMaxRemoteRoutedPrefixes = 8192;

}  // namespace sluice
