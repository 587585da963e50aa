#include "dataplane/api/nodes_format.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

#include <map>

namespace sluice {

namespace {

const char* sourceName(v1::NodeSource s) {
  switch (s) {
    case v1::NODE_SOURCE_STATIC: return "static";
    case v1::NODE_SOURCE_API: return "api";
    case v1::NODE_SOURCE_KUBERNETES: return "kubernetes";
    default: return "-";
  }
}

}  // namespace

std::string formatAge(int64_t since_unix, int64_t now_unix) {
  if (since_unix <= 0) return "-";
  const int64_t s = now_unix > since_unix ? now_unix - since_unix : 0;
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 120 * 60) return absl::StrCat(s / 60, "m");
  if (s < 48 * 3600) return absl::StrCat(s / 3600, "h");
  return absl::StrCat(s / 86400, "d");
}

std::string formatNode(const v1::RemoteNode& n, int64_t now_unix) {
  const std::string cidrs = absl::StrJoin(n.pod_cidrs(), ",");
  const std::string hop = n.next_hop_mac().empty() ? n.next_hop() : n.next_hop() + " (" + n.next_hop_mac() + ")";
  // Its pods' routed prefixes, if any, close the line.
  const std::string prefixes =
      n.routed_prefixes().empty() ? "" : " routes " + absl::StrJoin(n.routed_prefixes(), ",");
  return absl::StrFormat("  %-16s %-10s %-15s %-3u %-24s %-17s %-36s %-10s %s%s\n", n.name(), sourceName(n.source()),
                         n.vtep(), n.tunnel(), cidrs, n.mac(), hop, n.neighbor_state(),
                         formatAge(n.added_unix_seconds(), now_unix), prefixes);
}

std::string formatNodes(const v1::ListNodesResponse& r, int64_t now_unix) {
  std::string out;
  if (r.has_overlay()) {
    const v1::Overlay& o = r.overlay();
    out += absl::StrFormat("VTEP %s (%s), VNI %u, overlay MTU %u, uplink port %u %s, outer IPv4 checksum %s\n",
                           o.vtep(), o.vtep_mac(), o.vni(), o.overlay_mtu(), o.uplink_port(),
                           o.link_up() ? "up" : "down", o.ip_checksum_offload() ? "offloaded" : "in software");
    if (o.has_external()) {
      const v1::ExternalNetwork& x = o.external();
      out += absl::StrFormat("external gateway %s%s at %s (%s)\n", x.gateway(),
                             x.vlan() != 0 ? absl::StrFormat(" VLAN %u", x.vlan()) : std::string(),
                             x.gateway_mac().empty() ? "-" : x.gateway_mac(), x.neighbor_state());
    }
  }
  if (r.has_controller()) {
    const v1::ControllerState& c = r.controller();
    out += absl::StrFormat("node controller (node %s): %s, resourceVersion %s, reported %s ago\n", c.node_name(),
                           c.synced() ? "synced" : "NOT synced",
                           c.resource_version().empty() ? "-" : c.resource_version(),
                           formatAge(c.reported_unix_seconds(), now_unix));
    if (!c.last_error().empty()) out += absl::StrFormat("  last error: %s\n", c.last_error());
    // Sorted by name: a protobuf map has no order.
    std::map<std::string, uint64_t> counters(c.counters().begin(), c.counters().end());
    std::string line;
    for (const auto& [name, value] : counters) absl::StrAppend(&line, line.empty() ? "" : ", ", name, " ", value);
    if (!line.empty()) out += absl::StrFormat("  %s\n", line);
  } else {
    out += "node controller: none reported\n";
  }
  out += absl::StrFormat("  %-16s %-10s %-15s %-3s %-24s %-17s %-36s %-10s %s\n", "NODE", "SOURCE", "VTEP", "TUN",
                         "POD CIDRS", "INNER MAC", "NEXT HOP", "NEIGHBOR", "AGE");
  for (const v1::RemoteNode& n : r.nodes()) out += formatNode(n, now_unix);
  if (r.nodes().empty()) out += "  (no remote nodes)\n";
  return out;
}

std::string formatTunnelCounters(const google::protobuf::RepeatedPtrField<v1::RemoteNode>& tunnels) {
  std::string out = absl::StrFormat("  %-16s %-15s %14s %16s %14s %16s\n", "NODE", "VTEP", "RX PACKETS", "RX BYTES",
                                    "TX PACKETS", "TX BYTES");
  for (const v1::RemoteNode& n : tunnels)
    out += absl::StrFormat("  %-16s %-15s %14u %16u %14u %16u\n", n.name(), n.vtep(), n.rx_packets(), n.rx_bytes(),
                           n.tx_packets(), n.tx_bytes());
  return out;
}

}  // namespace sluice
