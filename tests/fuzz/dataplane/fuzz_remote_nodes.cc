// libFuzzer target: the remote-node table's input from the API, an
// ApplyNodesRequest (the serialized protobuf, as gRPC hands it over) decoded
// op by op and each decoded node checked against the table's rules with the
// nodes accepted before it, as ApplyNodes does. Whatever is accepted must be
// within the per-node bounds, and no two accepted nodes may share an
// address or a VTEP.
#include <cstdint>
#include <vector>

#include "common/cidr_overlap.h"
#include "common/remote_node_limits.h"
#include "dataplane/config/overlay_config.h"
#include "dataplane/modules/overlay/api/remote_node_decode.h"

namespace {

// The most nodes one input keeps: the pairwise check below is quadratic.
constexpr size_t kMaxAccepted = 64;

template <typename Cidr>
bool anyOverlap(const std::vector<Cidr>& a, const std::vector<Cidr>& b) {
  for (const Cidr& x : a)
    for (const Cidr& y : b)
      if (sluice::cidrsOverlap(x, y)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::v1::ApplyNodesRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  static const sluice::LocalPodCidrs ours{*sluice::Ipv4Cidr::parse("10.244.1.0/24"),
                                          sluice::Ipv6Cidr::parse("fd00:10:244:1::/64")};
  static const sluice::OverlayConfig overlay = [] {
    sluice::OverlayConfig c;
    c.uplink.emplace();
    c.uplink->vtep = *sluice::Ipv4Address::parse("192.168.77.1");
    c.uplink->vtep_prefix = 24;
    return c;
  }();
  std::vector<sluice::RemoteNodeConfig> accepted;
  for (const sluice::v1::NodeOp& op : req.ops()) {
    if (!op.has_put()) continue;
    sluice::RemoteNodeConfig node;
    sluice::NodeSource source{};
    if (!sluice::decodeNode(op.put(), node, source).ok()) continue;
    if (node.pod_cidrs.size() > sluice::kMaxPodCidrsPerFamily ||
        node.pod_cidrs_v6.size() > sluice::kMaxPodCidrsPerFamily ||
        node.routed_prefixes.size() + node.routed_prefixes_v6.size() > sluice::kMaxRoutedPrefixesPerNode)
      __builtin_trap();
    if (!sluice::validateRemoteNode(node, ours, overlay, accepted).ok()) continue;
    for (const sluice::RemoteNodeConfig& o : accepted) {
      if (o.name == node.name) continue;
      if ((o.vtep == node.vtep && o.vtep6 == node.vtep6) || anyOverlap(o.claimed(), node.claimed()) ||
          anyOverlap(o.claimed6(), node.claimed6()))
        __builtin_trap();
    }
    if (accepted.size() < kMaxAccepted) accepted.push_back(std::move(node));
  }
  return 0;
}
