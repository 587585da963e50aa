// The VXLAN overlay's configuration: the uplink, the network's VNI
// and the static remote-node table, as read from sluiced's JSON config file
// (keys "uplink", "vni", "remote-nodes"), plus the validation of one remote
// node that the gRPC API shares. Parsed on the main thread at start; the
// API's node calls run validateRemoteNode on API threads (pure).
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/net_address.h"

namespace sluice {

// A neighbor whose MAC is fixed by configuration: never asked for, never
// expired (the static override of the ARP-learned table).
struct StaticNeighbor {
  Ipv4Address ip;
  MacAddress mac;
};

struct UplinkConfig {
  // DPDK device: a vdev ("net_af_packet0,iface=eth1", "net_tap0,iface=x")
  // or a PCI address already probed by EAL ("0000:3b:00.0").
  std::string devargs;
  // Our VTEP address (outer source IP); with a prefix length ("/24") the
  // remote VTEPs inside that subnet are reached directly, others via
  // next_hop. Without one, every VTEP is on-link unless next_hop is set.
  Ipv4Address vtep;
  uint8_t vtep_prefix = 32;
  // An IPv6 VTEP instead ("vtep": "fd00:77::1/64"): the underlay is IPv6,
  // every remote VTEP must be IPv6 too (one family per node's underlay), and
  // next hops are resolved by neighbor discovery. `vtep` stays 0.0.0.0.
  std::optional<Ipv6Address> vtep6;
  uint8_t vtep6_prefix = 128;
  // Uplink MAC; unset: the device's own.
  std::optional<MacAddress> mac;
  // Router toward VTEPs outside our subnet, of our VTEP's family.
  std::optional<Ipv4Address> next_hop;
  std::optional<Ipv6Address> next_hop6;
  // The uplink's IP MTU; the overlay MTU is this minus the 50 bytes of outer
  // headers (1500 -> 1450, as the Linux kernel's VXLAN default), or 70 on an
  // IPv6 underlay (1500 -> 1430, as the kernel's VXLAN over IPv6).
  uint32_t mtu = 1500;
  // IPv4 next hops only (an IPv6 underlay resolves every next hop).
  std::vector<StaticNeighbor> static_neighbors;
};

struct RemoteNodeConfig {
  std::string name;
  Ipv4Address vtep;  // 0.0.0.0 when vtep6 is set
  // An IPv6 VTEP (the config file's, the API's and the checkpoint's "vtep"
  // of that family): only for a node whose own underlay is IPv6.
  std::optional<Ipv6Address> vtep6;
  std::vector<Ipv4Cidr> pod_cidrs;
  // Its IPv6 pod CIDRs, carried over the same IPv4 underlay (in the config
  // file, the API and the checkpoint they share one list with the IPv4 ones,
  // each entry's family telling them apart).
  std::vector<Ipv6Cidr> pod_cidrs_v6;
  // The inner Ethernet destination toward this node: the MAC of its VTEP
  // device (a Linux VXLAN device drops frames not addressed to it). Unset:
  // derived from the VTEP address (MacAddress::fromIpv4), which a remote
  // sluiced accepts (it does not check inner destination MACs).
  std::optional<MacAddress> mac;
  // Prefixes its pods own (a UPF's UE pools), published by that node: routed
  // toward it as its pod CIDRs are, and claimed like them (no other node's
  // CIDR or prefix, nor this node's, may overlap them).
  std::vector<Ipv4Cidr> routed_prefixes;
  std::vector<Ipv6Cidr> routed_prefixes_v6;

  // Everything routed toward the node, per family: pod CIDRs, then routed prefixes.
  std::vector<Ipv4Cidr> claimed() const {
    std::vector<Ipv4Cidr> all = pod_cidrs;
    all.insert(all.end(), routed_prefixes.begin(), routed_prefixes.end());
    return all;
  }
  std::vector<Ipv6Cidr> claimed6() const {
    std::vector<Ipv6Cidr> all = pod_cidrs_v6;
    all.insert(all.end(), routed_prefixes_v6.begin(), routed_prefixes_v6.end());
    return all;
  }
};

// This node's own pod networks, which no remote node's CIDR may overlap
// and no remote node's VTEP may be inside of. Implicit from an IPv4 CIDR
// alone: a node without IPv6.
struct LocalPodCidrs {
  LocalPodCidrs(const Ipv4Cidr& v4_cidr, std::optional<Ipv6Cidr> v6_cidr = std::nullopt)  // NOLINT: implicit
      : v4(v4_cidr), v6(v6_cidr) {}
  Ipv4Cidr v4;
  std::optional<Ipv6Cidr> v6;  // pod-cidr-v6, when set
  // The pods' gateways (keys gateway, gateway-v6), which may lie outside
  // the CIDRs: this node's own addresses, no remote node's VTEP.
  std::optional<Ipv4Address> gateway;
  std::optional<Ipv6Address> gateway_v6;
};

// A remote node's VTEP as text, whichever family.
std::string vtepText(const RemoteNodeConfig& node);
// Parses a VTEP of either family into node.vtep / node.vtep6; false if the
// text is neither an IPv4 nor an IPv6 address.
bool parseVtep(std::string_view text, RemoteNodeConfig& node);

// The external network on the uplink (config keys external-gateway and
// external-vlan): where pod traffic to destinations outside the cluster goes.
struct ExternalNetworkConfig {
  Ipv4Address gateway;  // a router on the uplink's IPv4 subnet
  uint16_t vlan = 0;    // 802.1Q VLAN ID; 0: untagged
};

struct OverlayConfig {
  std::optional<UplinkConfig> uplink;  // unset: single node, no overlay
  std::optional<ExternalNetworkConfig> external;  // unset: no external network
  uint32_t vni = 1;                    // 1..16777215
  std::vector<RemoteNodeConfig> remote_nodes;
};

// Applies one of the overlay's JSON keys; InvalidArgument naming the key.
// Returns false in *handled for any other key.
absl::Status applyOverlayJson(const std::string& key, const nlohmann::json& value, OverlayConfig& c,
                              bool* handled);

// Parses one remote node object ({"name", "vtep", "pod-cidrs": [...] or
// "pod-cidr": "...", "mac"}; the CIDRs IPv4 or IPv6); `where` prefixes
// error messages.
absl::Status parseRemoteNode(const nlohmann::json& value, const std::string& where, RemoteNodeConfig& out);

// The checks of validateRemoteNode that need no other node: name, VTEP, its
// own CIDRs against ours and each other (per family). The overlay's table
// checks the rest against its indexes (a node at a time against thousands).
// The VTEP must be of the uplink's family (one family per underlay) and a
// unicast address another host can own: not of a class no VTEP can be
// (vtep_address.h), not our VTEP, the uplink's next hop, the external
// gateway or our uplink subnet's broadcast, not inside our pod CIDRs or the
// node's own pod CIDRs and routed prefixes, not the pods' gateway: traffic
// for the node's pods would otherwise be tunnelled to ourselves, a router
// or a pod.
absl::Status validateRemoteNodeAlone(const RemoteNodeConfig& node, const LocalPodCidrs& ours,
                                     const OverlayConfig& overlay);

// Checks one remote node against this node's settings and the other nodes:
// a name (1-253 of [a-z0-9.-], as a Kubernetes Node's), a VTEP as
// validateRemoteNodeAlone says and no other node's, at least one pod CIDR
// (of either family), none overlapping our pod CIDR of its family or
// another node's.
absl::Status validateRemoteNode(const RemoteNodeConfig& node, const LocalPodCidrs& ours, const OverlayConfig& overlay,
                                const std::vector<RemoteNodeConfig>& others);

// Cross-field checks after the whole file is read.
absl::Status validateOverlay(const OverlayConfig& c, const LocalPodCidrs& ours);

}  // namespace sluice
