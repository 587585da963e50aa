// The overlay's control state: the uplink, the remote node table
// (node -> VTEP, pod CIDRs, tunnel index), the neighbor table resolving each
// VTEP's next hop, and the immutable OverlayTables built from them for the
// PMDs' snapshots and the slow path's translations. Control threads only,
// under the control core's locks (a change; a read for the listings): a
// change that returns true is followed by a republish, which publishes the
// tables and revalidates megaflows against them.
//
// What a change does to cached flows: a node added, removed or changed alters
// routes and known VTEPs, which megaflows encode (encap actions name a
// tunnel; decap megaflows match tun_src), so the republish's revalidation
// kills the affected ones. A neighbor change only alters a tunnel's header
// template, which megaflows do not hold (they name the tunnel index): the
// next snapshot carries the new template and no megaflow needs to change.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dataplane/modules/overlay/neighbor_table.h"
#include "dataplane/config/overlay_config.h"
#include "dataplane/modules/overlay/uplink_io.h"
#include "dataplane/datapath/overlay/overlay_snapshot.h"

namespace sluice {

// Where a remote node came from: the config file, the API (sluicectl), or
// the node controller that follows the Kubernetes API. The controller only
// changes and removes its own.
enum class NodeSource { kStatic, kApi, kKubernetes };
const char* nodeSourceName(NodeSource s);  // "static" | "api" | "kubernetes"
std::optional<NodeSource> parseNodeSource(std::string_view name);

// What a node change did (kRemoved: only a removal; removing an unknown
// name is kUnchanged).
enum class NodeChange { kUnchanged, kCreated, kUpdated, kRemoved };

// One change of a batch (applyNodes): a put (putNode's arguments) or a
// removal of `node.name`.
struct NodeOp {
  enum class Kind { kPut, kRemove };
  Kind kind = Kind::kPut;
  RemoteNodeConfig node;  // kRemove: the name only
  NodeSource source = NodeSource::kApi;
  bool replace = false;
};

struct RemoteNodeView {
  RemoteNodeConfig node;  // mac filled (configured or derived)
  NodeSource source = NodeSource::kApi;
  std::chrono::system_clock::time_point added;  // by this process (restored ones: at restore)
  uint16_t tunnel = 0;
  Ipv4Address next_hop;
  std::optional<Ipv6Address> next_hop6;  // an IPv6 underlay's (next_hop unused)
  std::optional<MacAddress> next_hop_mac;
  std::string neighbor_state;  // incomplete | reachable | stale | static
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
};

struct OverlayView {
  bool enabled = false;
  Ipv4Address vtep;
  std::optional<Ipv6Address> vtep6;  // an IPv6 underlay's (vtep unused)
  MacAddress vtep_mac;
  uint32_t vni = 0;
  uint32_t overlay_mtu = 0;
  uint16_t uplink_port = 0;
  bool ip_checksum_offload = false;
  bool link_up = false;
  // The external network (external-gateway; unset: none), its VLAN and the
  // gateway's neighbor entry.
  std::optional<Ipv4Address> external_gateway;
  uint16_t external_vlan = 0;
  std::optional<MacAddress> external_gateway_mac;
  std::string external_gateway_state;  // incomplete | reachable | stale | static
};

class OverlayControl {
 public:
  using Clock = NeighborTable::Clock;

  // `config.uplink` must be set; config.remote_nodes validated already.
  OverlayControl(const OverlayConfig& config, const LocalPodCidrs& pod_cidr, UplinkIo& uplink, uint16_t uplink_port,
                 size_t n_pmds, NeighborTiming timing = NeighborTiming());
  OverlayControl(const OverlayControl&) = delete;
  OverlayControl& operator=(const OverlayControl&) = delete;

  uint16_t uplinkPort() const { return uplink_port_; }
  rte_spinlock_t* uplinkTxLock() { return uplink_.txLock(); }
  uint16_t uplinkDpdkPort() const { return uplink_.dpdkPort(); }
  // Largest inner IP packet (IPv4 or IPv6): the uplink MTU minus 50 bytes of
  // outer headers (70 on an IPv6 underlay).
  uint32_t overlayMtu() const;
  // The uplink's IP MTU (what the external network's packets may be).
  uint32_t uplinkMtu() const { return config_.uplink->mtu; }
  OverlayView view();
  // The external network's gateway, when there is one on an IPv4 underlay.
  std::optional<Ipv4Address> externalGateway() const {
    if (!config_.external || underlayIpv6()) return std::nullopt;
    return config_.external->gateway;
  }

  // Adds a node: true if created, false if it exists with the same settings;
  // InvalidArgument / AlreadyExists (conflict with another node or the same
  // name with other settings) / ResourceExhausted (kMaxTunnels nodes).
  absl::StatusOr<bool> addNode(RemoteNodeConfig node) {
    absl::StatusOr<NodeChange> c = putNode(std::move(node), NodeSource::kApi, false);
    if (!c.ok()) return c.status();
    return *c == NodeChange::kCreated;
  }
  // addNode with a source, and with `replace` a node of the same name and
  // source but other settings is changed in place: its tunnel index and
  // counters kept, the tables rebuilt (kUpdated). A node of another source is
  // never replaced (AlreadyExists). Same settings: kUnchanged, whatever the
  // source.
  absl::StatusOr<NodeChange> putNode(RemoteNodeConfig node, NodeSource source, bool replace);
  bool deleteNode(const std::string& name);
  // Many changes as one: each checked and applied in order against the
  // table as the ones before it left it (so a removal frees a name, VTEP or
  // CIDR for a later put of the same batch, and a name twice is two changes),
  // a refused one changing nothing and not stopping the others; the tables
  // are rebuilt once at the end if anything changed. One result per op.
  std::vector<absl::StatusOr<NodeChange>> applyNodes(std::vector<NodeOp> ops);
  // A node's settings and source, if there is one of that name.
  std::optional<std::pair<RemoteNodeConfig, NodeSource>> node(const std::string& name) const;
  // The nodes added by addNode after construction (the API's and the node
  // controller's, or restored from the checkpoint), by name, with their
  // source: what the checkpoint keeps. The config file's nodes are not among
  // them (the file brings them back).
  std::vector<std::pair<RemoteNodeConfig, NodeSource>> addedNodes() const;
  // Whether the config file lists a node of that name (added or not).
  bool configured(const std::string& name) const { return configured_names_.contains(name); }
  std::vector<RemoteNodeView> listNodes(Clock::time_point now) const;
  // One node's entry of listNodes (nullopt: no node of that name), at the
  // cost of one node, not of the table.
  std::optional<RemoteNodeView> nodeView(const std::string& name, Clock::time_point now) const;
  std::vector<NeighborTable::View> listNeighbors(Clock::time_point now) const { return neighbors_.list(now); }
  // ARP frames (IPv6 underlay: neighbor advertisements) from the uplink
  // that taught nothing, per reason, since start.
  const ArpRefusalCounts& arpRefusals() const { return arp_refused_; }

  // Neighbor upkeep: learns from punted ARP, sends due requests, forgets
  // stale MACs. Returns whether the tables changed (the caller republishes).
  bool poll(Clock::time_point now);

  std::shared_ptr<const vxlan::OverlayTables> tables() const { return tables_; }

  // What a remote node must also not overlap: this node's pods' routed
  // prefixes (FailedPrecondition naming the conflict; set by the module
  // that knows the ports). Unset: nothing more is checked.
  void setLocalClaims(std::function<absl::Status(const RemoteNodeConfig&)> check) { local_claims_ = std::move(check); }
  // FailedPrecondition when a local port's routed prefixes overlap a remote
  // node's pod CIDR or published prefix.
  absl::Status checkLocalPrefixes(const std::vector<Ipv4Cidr>& v4, const std::vector<Ipv6Cidr>& v6) const;
  // The overlay part of PMD `pmd`'s next snapshot.
  void fillSnapshot(vxlan::OverlaySnapshot& s, size_t pmd) const;

 private:
  struct Node {
    RemoteNodeConfig cfg;
    uint16_t tunnel = 0;
    NodeSource source = NodeSource::kApi;  // kStatic: from the config file at construction
    std::chrono::system_clock::time_point added;
  };
  // A pod CIDR some node holds, indexed by its first address. The table's
  // CIDRs never overlap each other, so ordered by first address they are
  // ordered by last address too, and the ones that can overlap a new CIDR
  // are found by one search instead of a scan of every node.
  struct CidrClaim {
    uint32_t last = 0;  // host order
    Ipv4Cidr cidr;
    std::string name;
  };
  // The same for IPv6 pod CIDRs, indexed by their first address's bytes
  // (network order compares as the numbers do).
  struct CidrClaim6 {
    Ipv6Address last;
    Ipv6Cidr cidr;
    std::string name;
  };
  // putNode and deleteNode without the rebuild (applyNodes rebuilds once).
  absl::StatusOr<NodeChange> put(RemoteNodeConfig node, NodeSource source, bool replace);
  bool remove(const std::string& name);
  // AlreadyExists if another node than node.name holds its VTEP or a CIDR
  // overlapping one of its CIDRs.
  absl::Status conflicts(const RemoteNodeConfig& node) const;
  // A claim overlapping `c` of a node other than `other_than` (empty: of
  // any node), if there is one.
  const CidrClaim* claimOverlapping(const Ipv4Cidr& c, std::string_view other_than = {}) const;
  const CidrClaim6* claimOverlapping(const Ipv6Cidr& c, std::string_view other_than = {}) const;
  void index(const RemoteNodeConfig& node);
  void unindex(const RemoteNodeConfig& node);
  Ipv4Address nextHopFor(Ipv4Address vtep) const;
  Ipv6Address nextHopFor6(const Ipv6Address& vtep) const;
  bool underlayIpv6() const { return config_.uplink->vtep6.has_value(); }
  // poll's halves per family: learn from punted frames, ask what is due.
  bool pollArp(Clock::time_point now);
  bool pollNd(Clock::time_point now);
  void countRefusal(std::optional<ArpRefusal> refused);
  RemoteNodeView viewOf(const Node& n, Clock::time_point now) const;
  void rebuild();
  std::array<uint64_t, 4> rawCounters(uint16_t tunnel) const;

  OverlayConfig config_;
  LocalPodCidrs pod_cidr_;
  UplinkIo& uplink_;
  uint16_t uplink_port_;
  NeighborTable neighbors_;
  NeighborTable6 neighbors6_;  // an IPv6 underlay's next hops
  std::map<std::string, Node> nodes_;
  std::set<std::string> configured_names_;  // the config file's remote-nodes
  std::map<Ipv4Address, std::string> by_vtep_;  // every node's VTEP → its name
  std::map<Ipv6Address, std::string> by_vtep6_;  // the same on an IPv6 underlay
  std::map<uint32_t, CidrClaim> by_cidr_;        // every node's pod CIDRs by first address
  std::map<Ipv6Address, CidrClaim6> by_cidr6_;   // every node's IPv6 pod CIDRs by first address
  // Routed prefixes of every node in the table, both families: bounded by
  // kMaxRemoteRoutedPrefixes (common/remote_node_limits.h).
  size_t routed_prefix_count_ = 0;
  std::set<uint16_t> free_tunnels_;             // lowest first: indices are reused from the bottom
  // Counter values of a tunnel index when its node was added (indices are reused).
  std::vector<std::array<uint64_t, 4>> baseline_ = std::vector<std::array<uint64_t, 4>>(vxlan::kMaxTunnels);
  std::vector<std::unique_ptr<vxlan::OverlayCounters>> counters_;  // one per PMD
  std::shared_ptr<const vxlan::OverlayTables> tables_;
  ArpRefusalCounts arp_refused_{};
  std::function<absl::Status(const RemoteNodeConfig&)> local_claims_;
};

}  // namespace sluice
