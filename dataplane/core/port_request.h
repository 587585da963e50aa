// A request to plug a pod into the dataplane, in typed form, and the checks
// that make it safe to act on: every name that becomes part of a file path is
// confined to the socket directory (the interface name is escaped there). Pure functions; used by the control thread
// (and reused by tests and fuzzers without DPDK).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/net_address.h"
#include "dataplane/datapath/port_mtu.h"
#include "dataplane/core/vdev_devargs.h"

namespace sluice {

// kDpdkVdev: a DPDK vdev given by devargs standing in for a pod (benchmarks
// and tests: a pcap file as input, net_null as a sink); sluiced refuses it
// unless its config allows it (allow-vdev-ports).
enum class PortKind { kVhostUser, kSriovVf, kDpdkVdev };
enum class VhostMode { kServer, kClient };

struct AttachmentId {
  std::string container_id;
  std::string ifname;
  auto operator<=>(const AttachmentId&) const = default;
};

struct PortRequest {
  AttachmentId attachment;
  std::string pod_namespace;
  std::string pod_name;
  // The pod interface's IPv4 address; 0.0.0.0 (never a pod's: the network
  // address of any pod CIDR) for an IPv6-only attachment.
  Ipv4Address ip;
  std::optional<Ipv6Address> ipv6;  // its IPv6 address, if it has one
  // Always set after validation (derived from ip, or for an IPv6-only
  // attachment from ipv6, if not given).
  MacAddress mac;
  PortKind kind = PortKind::kVhostUser;
  VhostMode vhost_mode = VhostMode::kServer;
  std::string socket_subdir;  // optional single path component
  std::string devargs;        // kDpdkVdev only: "<driver>[,key=value...]", validated (vdev_devargs.h)
  // Server-mode vhost-user only: the socket's group (mode 0660 with it).
  std::optional<uint32_t> socket_group;
  // The port's IP MTU as applied: the request's, or the node's default
  // (port-mtu) when it named none.
  uint32_t mtu = kDefaultPortMtu;
  // Whether the fast path drops the pod's packets whose source MAC or IP is
  // not its own (source_check.h); off for a pod that routes others' traffic.
  bool source_validation = true;
  // Prefixes routed to the port (a UPF's UE pools, a router pod's subnets):
  // neither each other's nor the node's pod CIDRs' or gateways' addresses
  // (checked here); other ports' and remote nodes' are the control's to check.
  std::vector<Ipv4Cidr> routed_prefixes;
  std::vector<Ipv6Cidr> routed_prefixes_v6;
  // The PMD that polls the port's rx queue, as the request pinned it (an
  // index below the PMD count, which the control checks); none: sluiced
  // places it (rxq_placement.h).
  std::optional<unsigned> pmd;
  // Queue pairs the port offers (vhost-user; 1 for a vdev): at least 1 here,
  // at most the node's max-queues-per-port (which the control checks).
  unsigned queues = 1;

  bool hasIpv4() const { return ip.value != 0; }
  bool sameParameters(const PortRequest& other) const;
};

// The raw text fields as they arrive from the API, before parsing.
struct RawPortRequest {
  std::string container_id, ifname, pod_namespace, pod_name, ip, mac, socket_subdir;
  std::string devargs = {};  // kDpdkVdev only (a default, so positional initialisers may stop before it)
  PortKind kind = PortKind::kVhostUser;
  VhostMode vhost_mode = VhostMode::kServer;
  std::optional<uint32_t> socket_group = {};
  std::string ipv6 = {};  // empty: no IPv6
  uint32_t mtu = 0;       // 0: the node's default (port-mtu)
  bool source_validation = true;  // AddPortRequest.source_validation (unset: on)
  std::vector<std::string> routed_prefixes = {};  // CIDRs of either family, as requested
  std::optional<unsigned> pmd = {};               // AddPortRequest.pmd (unset: placed by sluiced)
  std::optional<unsigned> queues = {};            // AddPortRequest.queues (unset: 1)
};

// Routed prefixes one port may own: a UPF has a pool or a few per slice.
inline constexpr size_t kMaxRoutedPrefixes = 64;

// This node's IPv6 pod network (pod-cidr-v6 and gateway-v6).
struct Ipv6PodCidr {
  Ipv6Cidr cidr;
  Ipv6Address gateway;
};

// Parses and validates every field. InvalidArgument names the field and says
// what is wrong; FailedPrecondition when the IP cannot belong to a pod of this
// node (outside the pod CIDR, the network, broadcast or gateway address), and
// when ipv6 is given but the node has no IPv6 pod CIDR (`v6` empty), or it is
// outside it or its network or gateway address. At least one of ip and ipv6.
// A kDpdkVdev port's devargs are checked against `vdev` (vdev_devargs.h); the
// default policy allows no pcap file. The MTU must be 0 (`default_mtu`) or
// kMinPortMtu..kMaxPortMtu, and at least kMinIpv6PortMtu with an ipv6
// (InvalidArgument). Routed prefixes: InvalidArgument for one that is no
// CIDR with host bits zero, more than kMaxRoutedPrefixes, or two that
// overlap; FailedPrecondition for one overlapping a pod CIDR of this node
// (its gateways are inside them).
absl::StatusOr<PortRequest> parsePortRequest(const RawPortRequest& raw, const Ipv4Cidr& pod_cidr,
                                             Ipv4Address gateway, const VdevPolicy& vdev = {},
                                             const std::optional<Ipv6PodCidr>& v6 = std::nullopt,
                                             uint32_t default_mtu = kDefaultPortMtu);

// What this node allows a new port beyond its request's own checks.
struct PortLimits {
  bool allow_vdev_ports = false;  // allow-vdev-ports (benchmarks, tests)
  size_t pmds = 0;                // how many PMDs run (a pinned port's must be one of them)
  unsigned max_queues_per_port = 1;
};

// Whether this node can make the port `req` asks for (AddPort, after
// parsePortRequest): Unimplemented for an SR-IOV VF (a module's to make),
// FailedPrecondition for a vdev without allow-vdev-ports, InvalidArgument
// for a PMD this sluiced does not run or more queues than it allows.
absl::Status checkPortAllowed(const PortRequest& req, const PortLimits& limits);

// InvalidArgument unless `netns` (a pod's netns path, CNI_NETNS) is empty or
// an absolute path: it is only ever stat()ed, never opened.
absl::Status validateNetnsPath(const std::string& netns);

// Checks an attachment id alone (DeletePort takes only that).
absl::Status validateAttachment(const AttachmentId& id);

// Where the port's vhost-user socket lives: <socket_dir>/<subdir>/<ifname>.sock,
// or <socket_dir>/<container_id[:12]>-<hash>-<ifname>.sock without a subdir,
// where <hash> is 16 hex digits of a 64-bit hash of the whole container id
// and <ifname> has every byte outside [A-Za-z0-9_.-] (and a leading '.')
// written as %xx. InvalidArgument if the result would not fit a unix socket
// address.
absl::StatusOr<std::string> vhostSocketPath(const std::string& socket_dir, const PortRequest& req);

// Whether `recorded` (a checkpointed socket path) is the port's socket: what
// vhostSocketPath gives now, or what sluiced gave before the hash
// (<socket_dir>/<container_id[:12]>-<ifname>.sock), so that ports made by an
// older sluiced survive an upgrade on their sockets.
bool vhostSocketPathMatches(const std::string& socket_dir, const PortRequest& req, const std::string& recorded);

}  // namespace sluice
