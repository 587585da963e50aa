#include "dataplane/api/nodes_format.h"

#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

namespace sluice {

std::string formatNode(const v1::RemoteNode& n) {
  const std::string cidrs = absl::StrJoin(n.pod_cidrs(), ",");
  const std::string hop = n.next_hop_mac().empty() ? n.next_hop() : n.next_hop() + " (" + n.next_hop_mac() + ")";
  return absl::StrFormat("  %-16s %-15s %-3u %-24s %-17s %-36s %-10s\n", n.name(), n.vtep(), n.tunnel(), cidrs,
                         n.mac(), hop, n.neighbor_state());
}

std::string formatNodes(const v1::ListNodesResponse& r) {
  std::string out;
  if (r.has_overlay()) {
    const v1::Overlay& o = r.overlay();
    out += absl::StrFormat("VTEP %s (%s), VNI %u, overlay MTU %u, uplink port %u %s, outer IPv4 checksum %s\n",
                           o.vtep(), o.vtep_mac(), o.vni(), o.overlay_mtu(), o.uplink_port(),
                           o.link_up() ? "up" : "down", o.ip_checksum_offload() ? "offloaded" : "in software");
  }
  out += absl::StrFormat("  %-16s %-15s %-3s %-24s %-17s %-36s %-10s\n", "NODE", "VTEP", "TUN", "POD CIDRS", "INNER MAC",
                         "NEXT HOP", "NEIGHBOR");
  for (const v1::RemoteNode& n : r.nodes()) out += formatNode(n);
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
