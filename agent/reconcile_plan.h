// What the node controller should change in sluiced's remote-node table:
// the Nodes it knows from the API (desired) against the table sluiced lists
// (current) → nodes to add or change, nodes to remove, and why every other
// Node is left out. Pure (the caller passes the time), so that the rules are
// tested without an API server or a sluiced:
//   - only nodes whose source is kubernetes are changed or removed; a Node
//     whose name a static or API node holds is left out (kForeignName);
//   - this node itself is never a remote node;
//   - a Node without the Sluice annotation, with another VNI, without an
//     IPv4 pod CIDR is left out (its IPv6 ones ride beside IPv4 ones);
//   - a Node NotReady for longer than the grace period is left out (and so
//     removed); within it, it stays;
//   - a Node whose VTEP can be no node's (an address class no VTEP can be,
//     common/vtep_address.h; inside its own pod CIDRs or routed prefixes, or
//     this node's) is left out (kBadVtep), and so, unless the underlay is
//     declared another network, is one whose VTEP is none of its Node's
//     InternalIP addresses (kVtepNotInternalIp): an annotation is anyone's
//     to write who may patch the Node, the addresses are the kubelet's;
//   - a Node whose pod CIDR or routed prefix overlaps one already taken
//     (our own CIDRs and prefixes, a static or API node's, or another
//     Node's; IPv4 and IPv6 each against their own family) or whose VTEP
//     another node has is refused. Who keeps a
//     CIDR is stable: nodes already in the table first, then the others by
//     name;
//   - a Node's routed prefix is routed only inside the administrator's
//     allowed ranges, outside the cluster's pod CIDR ranges (where nodes yet
//     to join get theirs) and outside the special ranges (loopback,
//     link-local, multicast...); the others are refused and reported, the
//     Node itself kept with the rest.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/node_parser.h"
#include "common/cidr_overlap.h"
#include "common/net_address.h"
#include "common/prefix_ranges.h"

namespace sluice::agent {

// A remote node as sluiced's table holds it, or as the controller wants it.
struct TableNode {
  std::string name;
  Ipv4Address vtep;
  std::optional<MacAddress> mac;
  std::vector<Ipv4Cidr> pod_cidrs;
  std::vector<Ipv6Cidr> pod_cidrs_v6;
  bool kubernetes = true;  // its source is kubernetes (else static or API: never touched)
  std::optional<Ipv6Address> vtep6{};  // an IPv6 underlay's VTEP (vtep then 0.0.0.0)
  // The prefixes its pods own (its sluice.dev/routed-prefixes), claimed and
  // routed like its pod CIDRs.
  std::vector<Ipv4Cidr> routed_prefixes = {};
  std::vector<Ipv6Cidr> routed_prefixes_v6 = {};
  bool operator==(const TableNode&) const = default;
  std::string vtepText() const { return vtep6 ? vtep6->toString() : vtep.toString(); }
};

enum class LeftOut {
  kOwnNode,
  kNoAnnotation,
  kBadAnnotation,
  kNoPodCidr,
  kVniMismatch,
  kNotReady,      // NotReady longer than the grace period
  kOverlap,       // a pod CIDR or routed prefix overlaps one already taken
  kVtepConflict,  // its VTEP is another node's
  kForeignName,   // a static or API node has its name
  kBadVtep,       // its VTEP can be no node's (loopback, link-local, inside pod CIDRs, ...)
  kVtepNotInternalIp,  // its VTEP is none of its Node's InternalIP addresses
};
const char* leftOutName(LeftOut r);

struct PlanInput {
  std::string own_name;
  uint32_t vni = 0;  // this node's (nodes of another VNI cannot be reached)
  std::map<std::string, KubeNode> nodes;
  std::vector<TableNode> current;
  std::chrono::system_clock::time_point now;
  std::chrono::seconds not_ready_grace{0};
  // Take a VTEP that is none of the Node's InternalIPs (the VXLAN underlay
  // is a network of its own, which the kubelet does not report).
  bool allow_vtep_outside_internal_ips = false;
  // The ranges other nodes' routed prefixes must lie inside (empty: none is
  // routed), and the cluster's pod CIDR ranges none may overlap.
  PrefixRanges routed_prefix_ranges;
  PrefixRanges cluster_pod_cidrs;
};

struct Plan {
  std::vector<TableNode> add;     // not in the table
  std::vector<TableNode> update;  // in the table (kubernetes) with other settings
  std::vector<std::string> remove;
  // Every Node left out, with why and a detail for the log.
  struct Skip {
    std::string name;
    LeftOut reason;
    std::string detail;
  };
  std::vector<Skip> skipped;
  // Every routed prefix refused (its Node kept without it), with why.
  struct RefusedPrefix {
    std::string name;    // the Node's
    std::string prefix;  // the CIDR as text
    std::string why;
  };
  std::vector<RefusedPrefix> refused_prefixes;
  size_t desired = 0;  // Nodes that should be in the table
  // When the next NotReady Node's grace period ends (the plan changes then).
  std::optional<std::chrono::system_clock::time_point> next_expiry;
};

Plan planReconcile(const PlanInput& in);

// Whether `vtep` is one of `node`'s InternalIP addresses (of its family).
bool vtepIsInternalIp(const KubeNode& node, const VtepInfo& vtep);


}  // namespace sluice::agent
