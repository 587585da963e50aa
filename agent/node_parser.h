// Reads the parts of a Kubernetes Node object the node controller uses: its
// name and resourceVersion, pod CIDRs, InternalIP, Ready condition and the
// Sluice VTEP annotation; and the events of a Node watch. Input comes from
// the API server, so nothing here trusts it: every problem is a value
// (a NodeProblem with a fixed kind the controller counts), never an
// exception. Pure; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/net_address.h"

namespace sluice::agent {

// The annotation a Sluice node publishes on its own Node: one JSON object,
// {"version": 1, "vtep": "192.168.77.1", "mac": "02:..", "vni": 7}; the
// "vtep" of an IPv6 underlay is an IPv6 address (same version: a reader that
// knows only IPv4 reports it as a bad annotation and leaves the node out).
inline constexpr char kVtepAnnotation[] = "sluice.dev/vtep";
// The annotation's format version this controller writes and reads.
inline constexpr uint32_t kVtepAnnotationVersion = 1;

// The prefixes routed to a node's pods (a UPF's UE pools), which that
// node's controller publishes on its own Node beside its VTEP: a JSON array
// of IPv4 and IPv6 CIDR strings, ["10.100.0.0/16", "fd00:100::/48"]; absent
// when it has none. Every other node routes them toward it like its pod CIDRs.
inline constexpr char kRoutedPrefixesAnnotation[] = "sluice.dev/routed-prefixes";

// A node's VTEP as its own sluiced reported it.
struct VtepInfo {
  Ipv4Address vtep;  // 0.0.0.0 when vtep6 is set
  MacAddress mac;
  uint32_t vni = 0;
  uint32_t version = kVtepAnnotationVersion;
  std::optional<Ipv6Address> vtep6{};  // an IPv6 underlay's VTEP
  bool operator==(const VtepInfo&) const = default;
  std::string vtepText() const { return vtep6 ? vtep6->toString() : vtep.toString(); }
};

// What can be wrong with a Node, each counted under its own name.
enum class NodeProblem {
  kNoAnnotation,         // no sluice.dev/vtep: the node does not run Sluice (skipped)
  kBadAnnotation,        // sluice.dev/vtep is not the JSON object above
  kUnknownAnnotation,    // sluice.dev/vtep of a version this controller does not read
  kBadCidr,              // a pod CIDR that is no CIDR, or beyond two of its family: that CIDR ignored
  kNoPodCidr,            // no IPv4 pod CIDR: not a Sluice node (IPv6 only rides beside IPv4)
  kBadRoutedPrefixes,    // sluice.dev/routed-prefixes is not an array of at most 64 CIDRs: no prefix of it routed
};
const char* nodeProblemName(NodeProblem p);

struct KubeNode {
  std::string name;
  std::string resource_version;
  std::vector<Ipv4Cidr> pod_cidrs;           // IPv4 ones, in the Node's order
  std::vector<Ipv6Cidr> pod_cidrs_v6;        // IPv6 ones (a dual-stack Node's second), in the Node's order
  // status.addresses of type InternalIP, per family, in the Node's order:
  // where the kubelet says the node is reached, which a VTEP must be one of
  // unless the controller is told the underlay is another network.
  std::vector<Ipv4Address> internal_ips;
  std::vector<Ipv6Address> internal_ips_v6;
  // The Ready condition: true only for status "True"; a Node without one is
  // not ready (its kubelet never reported), since the transition time unknown.
  bool ready = false;
  std::optional<std::chrono::system_clock::time_point> ready_since;  // lastTransitionTime
  std::optional<VtepInfo> vtep;              // the parsed annotation
  // sluice.dev/routed-prefixes, per family, in the annotation's order.
  std::vector<Ipv4Cidr> routed_prefixes;
  std::vector<Ipv6Cidr> routed_prefixes_v6;
  // What was wrong (with the detail to log), in the order found.
  std::vector<std::pair<NodeProblem, std::string>> problems;
};

// A Node object; an error (for the log) when it is not a Node at all (not an
// object, no metadata.name).
struct ParsedNode {
  std::optional<KubeNode> node;
  std::string error;
};
ParsedNode parseNode(const nlohmann::json& object);

// The annotation's value; std::nullopt with the problem and why.
struct ParsedVtep {
  std::optional<VtepInfo> vtep;
  NodeProblem problem = NodeProblem::kBadAnnotation;
  std::string error;
};
ParsedVtep parseVtepAnnotation(std::string_view value);
std::string formatVtepAnnotation(const VtepInfo& v);

// sluice.dev/routed-prefixes' value into `v4` and `v6`; false (and both
// left empty, `why` saying what is wrong) when it is not a JSON array of at
// most kMaxRoutedPrefixesPerNode CIDR strings with host bits zero.
bool parseRoutedPrefixesAnnotation(std::string_view value, std::vector<Ipv4Cidr>& v4, std::vector<Ipv6Cidr>& v6,
                                   std::string* why = nullptr);
// The value for these prefixes (sorted, so that the same set is the same text).
std::string formatRoutedPrefixesAnnotation(std::vector<std::string> prefixes);

// One line of a watch stream.
struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kError;
  std::string resource_version;  // the object's (a BOOKMARK carries only this)
  std::optional<KubeNode> node;  // ADDED / MODIFIED / DELETED
  int error_code = 0;            // ERROR: the Status object's code (410: expired)
  std::string error_message;
};
// A watch line; std::nullopt and `error` set when it is no event (bad JSON,
// unknown type, an ADDED/MODIFIED/DELETED whose object is no Node).
std::optional<WatchEvent> parseWatchEvent(std::string_view line, std::string* error);

// RFC 3339 as the API writes times ("2026-12-02T03:04:05Z", fractions and
// offsets accepted).
std::optional<std::chrono::system_clock::time_point> parseRfc3339(std::string_view text);

}  // namespace sluice::agent
