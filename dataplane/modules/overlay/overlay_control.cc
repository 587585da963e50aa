#include "dataplane/modules/overlay/overlay_control.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "common/cidr_overlap.h"
#include "common/remote_node_limits.h"
#include "common/log.h"
#include "dataplane/modules/overlay/arp_frames.h"
#include "dataplane/modules/overlay/nd_frames.h"
#include "dataplane/datapath/flow_translate.h"

namespace sluice {
namespace {

constexpr uint16_t kArpOpReply = 2;  // RFC 826 ar$op

MacAddress innerMacOf(const RemoteNodeConfig& n) {
  if (n.mac) return *n.mac;
  return n.vtep6 ? MacAddress::fromIpv6(*n.vtep6) : MacAddress::fromIpv4(n.vtep);
}

bool sameNode(const RemoteNodeConfig& a, const RemoteNodeConfig& b) {
  return a.name == b.name && a.vtep == b.vtep && a.vtep6 == b.vtep6 && a.pod_cidrs == b.pod_cidrs &&
         a.pod_cidrs_v6 == b.pod_cidrs_v6 && a.routed_prefixes == b.routed_prefixes &&
         a.routed_prefixes_v6 == b.routed_prefixes_v6 && innerMacOf(a) == innerMacOf(b);
}

// The route of an IPv6 CIDR toward a tunnel, as the fast path's tables hold it.
vxlan::RemoteRoute6 routeOf(const Ipv6Cidr& c, uint16_t tunnel) {
  vxlan::RemoteRoute6 r;
  r.net = c.network.bytes;
  r.prefix_len = c.prefix_len;
  r.tunnel = tunnel;
  return r;
}

}  // namespace

const char* nodeSourceName(NodeSource s) {
  switch (s) {
    case NodeSource::kStatic: return "static";
    case NodeSource::kApi: return "api";
    case NodeSource::kKubernetes: return "kubernetes";
  }
  return "api";
}

std::optional<NodeSource> parseNodeSource(std::string_view name) {
  for (NodeSource s : {NodeSource::kStatic, NodeSource::kApi, NodeSource::kKubernetes})
    if (std::string_view(nodeSourceName(s)) == name) return s;
  return std::nullopt;
}

OverlayControl::OverlayControl(const OverlayConfig& config, const LocalPodCidrs& pod_cidr, UplinkIo& uplink,
                               uint16_t uplink_port, size_t n_pmds, NeighborTiming timing)
    : config_(config),
      pod_cidr_(pod_cidr),
      uplink_(uplink),
      uplink_port_(uplink_port),
      neighbors_(timing),
      neighbors6_(timing) {
  for (uint16_t t = 0; t < vxlan::kMaxTunnels; ++t) free_tunnels_.insert(free_tunnels_.end(), t);
  for (size_t p = 0; p < n_pmds; ++p) counters_.push_back(std::make_unique<vxlan::OverlayCounters>());
  for (const StaticNeighbor& s : config_.uplink->static_neighbors) neighbors_.setStatic(s.ip, s.mac);
  std::vector<NodeOp> ops;
  for (const RemoteNodeConfig& n : config.remote_nodes) {
    configured_names_.insert(n.name);
    ops.push_back(NodeOp{NodeOp::Kind::kPut, n, NodeSource::kStatic, false});
  }
  std::vector<absl::StatusOr<NodeChange>> results = applyNodes(ops);
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].ok()) logWarning("remote node ", ops[i].node.name, " not added: ", results[i].status().message());
  config_.remote_nodes.clear();
  rebuild();
}

uint32_t OverlayControl::overlayMtu() const {
  return config_.uplink->mtu - (underlayIpv6() ? vxlan::kOuterLen6 : vxlan::kOuterLen);
}

OverlayView OverlayControl::view() {
  OverlayView v;
  v.enabled = true;
  v.vtep = config_.uplink->vtep;
  v.vtep6 = config_.uplink->vtep6;
  v.vtep_mac = uplink_.mac();
  v.vni = config_.vni;
  v.overlay_mtu = overlayMtu();
  v.uplink_port = uplink_port_;
  v.ip_checksum_offload = uplink_.ipChecksumOffload();
  v.link_up = uplink_.linkUp();
  if (const std::optional<Ipv4Address> gw = externalGateway()) {
    v.external_gateway = gw;
    v.external_vlan = config_.external->vlan;
    v.external_gateway_mac = neighbors_.lookup(*gw);
    const std::optional<NeighborState> state = neighbors_.state(*gw, std::chrono::steady_clock::now());
    v.external_gateway_state = state ? neighborStateName(*state) : "incomplete";
  }
  return v;
}

Ipv4Address OverlayControl::nextHopFor(Ipv4Address vtep) const {
  const UplinkConfig& u = *config_.uplink;
  if (!u.next_hop) return vtep;
  if (u.vtep_prefix < 32) {
    Ipv4Cidr subnet{Ipv4Address{u.vtep.value & (u.vtep_prefix == 0 ? 0 : ~0u << (32 - u.vtep_prefix))},
                    u.vtep_prefix};
    if (subnet.contains(vtep)) return vtep;
  }
  return *u.next_hop;
}

Ipv6Address OverlayControl::nextHopFor6(const Ipv6Address& vtep) const {
  const UplinkConfig& u = *config_.uplink;
  if (!u.next_hop6) return vtep;
  if (u.vtep6_prefix < 128 && Ipv6Cidr{*u.vtep6, u.vtep6_prefix}.contains(vtep)) return vtep;
  return *u.next_hop6;
}

absl::StatusOr<NodeChange> OverlayControl::putNode(RemoteNodeConfig node, NodeSource source, bool replace) {
  absl::StatusOr<NodeChange> r = put(std::move(node), source, replace);
  if (r.ok() && *r != NodeChange::kUnchanged) rebuild();
  return r;
}

bool OverlayControl::deleteNode(const std::string& name) {
  const bool removed = remove(name);
  if (removed) rebuild();
  return removed;
}

std::vector<absl::StatusOr<NodeChange>> OverlayControl::applyNodes(std::vector<NodeOp> ops) {
  std::vector<absl::StatusOr<NodeChange>> results;
  results.reserve(ops.size());
  bool changed = false;
  for (NodeOp& op : ops) {
    if (op.kind == NodeOp::Kind::kRemove) {
      results.emplace_back(remove(op.node.name) ? NodeChange::kRemoved : NodeChange::kUnchanged);
    } else {
      results.push_back(put(std::move(op.node), op.source, op.replace));
    }
    changed = changed || (results.back().ok() && *results.back() != NodeChange::kUnchanged);
  }
  if (changed) rebuild();
  return results;
}

absl::Status OverlayControl::conflicts(const RemoteNodeConfig& node) const {
  if (node.vtep6) {
    if (auto it = by_vtep6_.find(*node.vtep6); it != by_vtep6_.end() && it->second != node.name)
      return absl::AlreadyExistsError(
          absl::StrCat("vtep: ", node.vtep6->toString(), " belongs to node ", it->second));
  } else if (auto it = by_vtep_.find(node.vtep); it != by_vtep_.end() && it->second != node.name) {
    return absl::AlreadyExistsError(absl::StrCat("vtep: ", node.vtep.toString(), " belongs to node ", it->second));
  }
  // A node's pod CIDRs and published prefixes are claimed alike.
  for (const Ipv4Cidr& c : node.claimed())
    if (const CidrClaim* claim = claimOverlapping(c, node.name))
      return absl::AlreadyExistsError(absl::StrCat("pod_cidrs: ", c.toString(), " overlaps ", claim->cidr.toString(),
                                                   " of node ", claim->name));
  for (const Ipv6Cidr& c : node.claimed6())
    if (const CidrClaim6* claim = claimOverlapping(c, node.name))
      return absl::AlreadyExistsError(absl::StrCat("pod_cidrs: ", c.toString(), " overlaps ", claim->cidr.toString(),
                                                   " of node ", claim->name));
  // Nor may they overlap this node's pods' routed prefixes.
  if (local_claims_) return local_claims_(node);
  return absl::OkStatus();
}

const OverlayControl::CidrClaim* OverlayControl::claimOverlapping(const Ipv4Cidr& c,
                                                                  std::string_view other_than) const {
  const uint32_t first = c.network.value, last = c.broadcast().value;
  // Every claim starting at or before our last address that ends at or
  // after our first overlaps; walking down from the last such start, the
  // ends only fall.
  for (auto it = by_cidr_.upper_bound(last); it != by_cidr_.begin();) {
    --it;
    if (it->second.last < first) break;
    if (it->second.name != other_than) return &it->second;
  }
  return nullptr;
}

const OverlayControl::CidrClaim6* OverlayControl::claimOverlapping(const Ipv6Cidr& c,
                                                                   std::string_view other_than) const {
  // The same search over the IPv6 claims.
  const Ipv6Address last = lastAddress(c);
  for (auto it = by_cidr6_.upper_bound(last); it != by_cidr6_.begin();) {
    --it;
    if (it->second.last < c.network) break;
    if (it->second.name != other_than) return &it->second;
  }
  return nullptr;
}

absl::Status OverlayControl::checkLocalPrefixes(const std::vector<Ipv4Cidr>& v4,
                                                const std::vector<Ipv6Cidr>& v6) const {
  // The underlay's own subnet (the VTEPs and the next hop live there) routed
  // to a pod would take the tunnel's traffic with it.
  if (config_.uplink && !config_.uplink->vtep6) {
    const UplinkConfig& u = *config_.uplink;
    const Ipv4Cidr subnet{Ipv4Address{u.vtep.value & (u.vtep_prefix == 0 ? 0 : ~0u << (32 - u.vtep_prefix))},
                          u.vtep_prefix};
    for (const Ipv4Cidr& c : v4)
      if (cidrsOverlap(c, subnet))
        return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", c.toString(),
                                                          " overlaps the underlay subnet ", subnet.toString(),
                                                          " of this node's VTEP ", u.vtep.toString()));
  } else if (config_.uplink) {
    const UplinkConfig& u = *config_.uplink;
    Ipv6Cidr subnet{*u.vtep6, u.vtep6_prefix};
    for (uint32_t bit = u.vtep6_prefix; bit < 128; ++bit)
      subnet.network.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80u >> (bit % 8)));
    for (const Ipv6Cidr& c : v6)
      if (cidrsOverlap(c, subnet))
        return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", c.toString(),
                                                          " overlaps the underlay subnet ", subnet.toString(),
                                                          " of this node's VTEP ", u.vtep6->toString()));
  }
  for (const Ipv4Cidr& c : v4)
    if (const CidrClaim* claim = claimOverlapping(c))
      return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", c.toString(), " overlaps ",
                                                        claim->cidr.toString(), " of remote node ", claim->name));
  for (const Ipv6Cidr& c : v6)
    if (const CidrClaim6* claim = claimOverlapping(c))
      return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", c.toString(), " overlaps ",
                                                        claim->cidr.toString(), " of remote node ", claim->name));
  return absl::OkStatus();
}

void OverlayControl::index(const RemoteNodeConfig& node) {
  if (node.vtep6) by_vtep6_[*node.vtep6] = node.name;
  else by_vtep_[node.vtep] = node.name;
  for (const Ipv4Cidr& c : node.claimed()) by_cidr_[c.network.value] = {c.broadcast().value, c, node.name};
  for (const Ipv6Cidr& c : node.claimed6()) by_cidr6_[c.network] = {lastAddress(c), c, node.name};
  routed_prefix_count_ += node.routed_prefixes.size() + node.routed_prefixes_v6.size();
}

void OverlayControl::unindex(const RemoteNodeConfig& node) {
  if (node.vtep6) by_vtep6_.erase(*node.vtep6);
  else by_vtep_.erase(node.vtep);
  for (const Ipv4Cidr& c : node.claimed()) by_cidr_.erase(c.network.value);
  for (const Ipv6Cidr& c : node.claimed6()) by_cidr6_.erase(c.network);
  routed_prefix_count_ -= node.routed_prefixes.size() + node.routed_prefixes_v6.size();
}

absl::StatusOr<NodeChange> OverlayControl::put(RemoteNodeConfig node, NodeSource source, bool replace) {
  if (absl::Status s = validateRemoteNodeAlone(node, pod_cidr_, config_); !s.ok()) return s;
  if (absl::Status s = conflicts(node); !s.ok()) return s;
  // The table's total of routed prefixes after this put (a replaced node's
  // own no longer count).
  size_t prefixes = routed_prefix_count_ + node.routed_prefixes.size() + node.routed_prefixes_v6.size();
  if (auto it = nodes_.find(node.name); it != nodes_.end())
    prefixes -= it->second.cfg.routed_prefixes.size() + it->second.cfg.routed_prefixes_v6.size();
  if (prefixes > kMaxRemoteRoutedPrefixes)
    return absl::ResourceExhaustedError(absl::StrCat("routed_prefixes: the remote nodes would route ", prefixes,
                                                     " prefixes; at most ", kMaxRemoteRoutedPrefixes, " in all"));
  if (auto it = nodes_.find(node.name); it != nodes_.end()) {
    Node& existing = it->second;
    if (sameNode(existing.cfg, node)) return NodeChange::kUnchanged;
    if (!replace)
      return absl::AlreadyExistsError(
          absl::StrCat("node ", node.name, " exists with other settings (delete it first)"));
    if (existing.source != source)
      return absl::AlreadyExistsError(absl::StrCat("node ", node.name, " exists from source ",
                                                   nodeSourceName(existing.source), ", not replaced by one from ",
                                                   nodeSourceName(source)));
    // In place: the tunnel index stays, so megaflows that encapsulate toward
    // it pick up the new header template with the next snapshot; routes and
    // decap matches change with the tables, and the caller's republish
    // revalidates the megaflows that no longer fit.
    logInfo("remote node ", node.name, " changed: VTEP ", vtepText(existing.cfg), " -> ", vtepText(node));
    unindex(existing.cfg);
    existing.cfg = std::move(node);
    index(existing.cfg);
    return NodeChange::kUpdated;
  }
  if (free_tunnels_.empty())
    return absl::ResourceExhaustedError(absl::StrCat("node table full: ", vxlan::kMaxTunnels, " remote nodes"));
  const uint16_t tunnel = *free_tunnels_.begin();
  free_tunnels_.erase(free_tunnels_.begin());
  baseline_[tunnel] = rawCounters(tunnel);
  logInfo("remote node ", node.name, " added: VTEP ", vtepText(node), ", tunnel ", tunnel);
  const std::string name = node.name;  // not node.name below: node is moved from
  Node& added = nodes_[name] = Node{std::move(node), tunnel, source, std::chrono::system_clock::now()};
  index(added.cfg);
  return NodeChange::kCreated;
}

std::optional<std::pair<RemoteNodeConfig, NodeSource>> OverlayControl::node(const std::string& name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return std::make_pair(it->second.cfg, it->second.source);
}

bool OverlayControl::remove(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  free_tunnels_.insert(it->second.tunnel);
  unindex(it->second.cfg);
  nodes_.erase(it);
  logInfo("remote node ", name, " removed");
  return true;
}

std::vector<std::pair<RemoteNodeConfig, NodeSource>> OverlayControl::addedNodes() const {
  std::vector<std::pair<RemoteNodeConfig, NodeSource>> out;
  for (const auto& [name, n] : nodes_)
    if (n.source != NodeSource::kStatic) out.emplace_back(n.cfg, n.source);
  return out;
}

void OverlayControl::rebuild() {
  std::set<Ipv4Address> wanted;
  std::set<Ipv6Address> wanted6;
  for (const auto& [name, n] : nodes_) {
    if (n.cfg.vtep6) wanted6.insert(nextHopFor6(*n.cfg.vtep6));
    else wanted.insert(nextHopFor(n.cfg.vtep));
  }
  // The external gateway is asked for like a next hop (in its VLAN).
  if (const std::optional<Ipv4Address> gw = externalGateway()) wanted.insert(*gw);
  neighbors_.setWanted(wanted);
  neighbors6_.setWanted(wanted6);

  uint16_t count = 0;
  for (const auto& [name, n] : nodes_) count = std::max(count, static_cast<uint16_t>(n.tunnel + 1));
  std::vector<vxlan::OverlayTables::Tunnel> tunnels(count);
  std::vector<vxlan::RemoteRoute> routes;
  std::vector<vxlan::RemoteRoute6> routes6;
  std::vector<vxlan::EncapTemplate6> templates6;
  if (underlayIpv6()) templates6.resize(count);
  const MacAddress our_mac = uplink_.mac();
  for (const auto& [name, n] : nodes_) {
    // A node's pod CIDRs and the prefixes its pods own are routed alike.
    for (const Ipv4Cidr& c : n.cfg.claimed())
      routes.push_back({c.network.networkOrder(), Ipv4Address{c.mask()}.networkOrder(), n.tunnel});
    for (const Ipv6Cidr& c : n.cfg.claimed6()) routes6.push_back(routeOf(c, n.tunnel));
    const MacAddress inner = innerMacOf(n.cfg);
    if (underlayIpv6()) {
      vxlan::EncapParams6 p{};
      std::memcpy(p.src_mac, our_mac.bytes.data(), 6);
      const std::optional<MacAddress> hop_mac = neighbors6_.lookup(nextHopFor6(*n.cfg.vtep6));
      if (hop_mac) std::memcpy(p.dst_mac, hop_mac->bytes.data(), 6);
      p.resolved = hop_mac.has_value();
      std::memcpy(p.src_ip, config_.uplink->vtep6->bytes.data(), 16);
      std::memcpy(p.dst_ip, n.cfg.vtep6->bytes.data(), 16);
      p.vni = config_.vni;
      std::memcpy(p.inner_dst, inner.bytes.data(), 6);
      p.tunnel = n.tunnel;
      tunnels[n.tunnel].vtep_be = vxlan::tunnelKeyId(n.tunnel);
      tunnels[n.tunnel].vtep6 = n.cfg.vtep6->bytes;
      templates6[n.tunnel] = vxlan::buildEncapTemplate6(p);
      continue;
    }
    vxlan::EncapParams p{};
    std::memcpy(p.src_mac, our_mac.bytes.data(), 6);
    const std::optional<MacAddress> hop_mac = neighbors_.lookup(nextHopFor(n.cfg.vtep));
    if (hop_mac) std::memcpy(p.dst_mac, hop_mac->bytes.data(), 6);
    p.resolved = hop_mac.has_value();
    p.src_ip_be = config_.uplink->vtep.networkOrder();
    p.dst_ip_be = n.cfg.vtep.networkOrder();
    p.vni = config_.vni;
    std::memcpy(p.inner_dst, inner.bytes.data(), 6);
    p.tunnel = n.tunnel;
    tunnels[n.tunnel] = {p.dst_ip_be, vxlan::buildEncapTemplate(p), {}};
  }
  // An IPv6 underlay without nodes still needs its (empty) IPv6 tables.
  if (underlayIpv6() && templates6.empty()) templates6.resize(1);
  tables_ = std::make_shared<const vxlan::OverlayTables>(std::move(tunnels), std::move(routes), std::move(routes6),
                                                         std::move(templates6));
}

bool OverlayControl::poll(Clock::time_point now) {
  const bool changed = underlayIpv6() ? pollNd(now) : pollArp(now);
  if (changed) rebuild();
  return changed;
}

void OverlayControl::countRefusal(std::optional<ArpRefusal> refused) {
  if (!refused) return;
  ++arp_refused_[static_cast<size_t>(*refused)];
  logDebug("neighbor frame from the uplink not learned from: ", arpRefusalName(*refused));
}

bool OverlayControl::pollArp(Clock::time_point now) {
  bool changed = false;
  const Ipv4Address vtep = config_.uplink->vtep;
  const MacAddress our_mac = uplink_.mac();
  uplink_.drainPunted([&](const uint8_t* data, size_t len) {
    auto arp = parseArp(data, len);
    std::optional<ArpRefusal> refused;
    if (!arp) {
      refused = ArpRefusal::kMalformed;
    } else if (arp->op != kArpOpReply) {
      refused = ArpRefusal::kNotAReply;
    } else if (arp->target != vtep) {
      refused = ArpRefusal::kNotToOurVtep;
    } else if (arp->eth_dst != our_mac) {
      // A resolver's reply is unicast to the asker; a broadcast or multicast
      // "reply" is someone announcing itself to everyone.
      refused = ArpRefusal::kNotUnicastToUs;
    } else if (arp->mac.isMulticast() || arp->mac.isZero()) {
      refused = ArpRefusal::kBadSenderMac;
    } else {
      const NeighborTable::Learned learned = neighbors_.learn(arp->ip, arp->mac, now);
      refused = learned.refused;
      if (learned.changed) {
        logInfo("neighbor ", arp->ip.toString(), " is at ", arp->mac.toString());
        changed = true;
      }
    }
    countRefusal(refused);
  });
  bool forgot = false;
  const std::optional<Ipv4Address> external = externalGateway();
  for (Ipv4Address ip : neighbors_.due(now, &forgot)) {
    std::vector<uint8_t> request = buildArpRequest(our_mac, vtep, ip);
    if (ip == external && config_.external->vlan != 0) request = tagFrame(std::move(request), config_.external->vlan);
    if (absl::Status s = uplink_.send(request); !s.ok())
      logWarning("ARP request for ", ip.toString(), ": ", s.message());
  }
  return changed || forgot;
}

// ARP's checks in neighbor discovery's terms: an advertisement (not a
// solicitation or anything else), answering us (to our VTEP, or to the
// all-nodes group only when unsolicited, which the table then refuses),
// unicast to our MAC, a unicast target MAC, then the table's own checks (a
// wanted next hop, not static, a solicitation of ours awaiting it).
bool OverlayControl::pollNd(Clock::time_point now) {
  bool changed = false;
  const Ipv6Address vtep = *config_.uplink->vtep6;
  const MacAddress our_mac = uplink_.mac();
  uplink_.drainPunted([&](const uint8_t* data, size_t len) {
    auto na = parseNeighborAdvertisement(data, len);
    std::optional<ArpRefusal> refused;
    if (!na) {
      refused = ArpRefusal::kMalformed;
    } else if (!na->solicited) {
      refused = ArpRefusal::kNotAReply;
    } else if (na->dst != vtep) {
      refused = ArpRefusal::kNotToOurVtep;
    } else if (na->eth_dst != our_mac) {
      refused = ArpRefusal::kNotUnicastToUs;
    } else if (na->target_mac.isMulticast() || na->target_mac.isZero()) {
      refused = ArpRefusal::kBadSenderMac;
    } else {
      const NeighborTable6::Learned learned = neighbors6_.learn(na->target, na->target_mac, now);
      refused = learned.refused;
      if (learned.changed) {
        logInfo("neighbor ", na->target.toString(), " is at ", na->target_mac.toString());
        changed = true;
      }
    }
    countRefusal(refused);
  });
  bool forgot = false;
  for (const Ipv6Address& ip : neighbors6_.due(now, &forgot)) {
    if (absl::Status s = uplink_.send(buildNeighborSolicitation(our_mac, vtep, ip)); !s.ok())
      logWarning("neighbor solicitation for ", ip.toString(), ": ", s.message());
  }
  return changed || forgot;
}

void OverlayControl::fillSnapshot(vxlan::OverlaySnapshot& s, size_t pmd) const {
  s.enabled = true;
  s.uplink_port = uplink_port_;
  s.decap.vtep_ip_be = config_.uplink->vtep.networkOrder();
  s.decap.vni = config_.vni;
  const MacAddress mac = uplink_.mac();
  s.underlay_ipv6 = underlayIpv6();
  if (s.underlay_ipv6) {
    const Ipv6Address& vtep = *config_.uplink->vtep6;
    std::memcpy(s.decap6.vtep, vtep.bytes.data(), 16);
    s.decap6.vni = config_.vni;
    // Our VTEP as a /128 whose gateway it is, and the link-local address
    // of the uplink's MAC (the kernel peer may ask for either).
    s.vtep_nd.enabled = true;
    s.vtep_nd.prefix_len = 128;
    std::memcpy(s.vtep_nd.net, vtep.bytes.data(), 16);
    std::memcpy(s.vtep_nd.gateway, vtep.bytes.data(), 16);
    std::memcpy(s.vtep_nd.gateway_link_local, linkLocalFromMac(mac).bytes.data(), 16);
  }
  std::memcpy(s.vtep_mac.addr_bytes, mac.bytes.data(), 6);
  s.overlay_mtu = overlayMtu();
  s.tx_ip_checksum_offload = uplink_.ipChecksumOffload();
  s.tables = tables_;
  s.arp_punt = uplink_.puntRing();
  if (pmd == 0) s.control_tx = uplink_.controlTxRing();
  s.counters = counters_[pmd].get();
  if (const std::optional<Ipv4Address> gw = externalGateway()) {
    s.external.enabled = true;
    s.external.vlan = config_.external->vlan;
    s.external.max_frame = maxFrameForMtu(static_cast<uint16_t>(config_.uplink->mtu));
    s.external.uplink_mac = s.vtep_mac;
    if (const std::optional<MacAddress> gw_mac = neighbors_.lookup(*gw)) {
      s.external.resolved = true;
      std::memcpy(s.external.gateway_mac.addr_bytes, gw_mac->bytes.data(), 6);
    }
  }
}

std::array<uint64_t, 4> OverlayControl::rawCounters(uint16_t tunnel) const {
  std::array<uint64_t, 4> sum{};
  for (const auto& c : counters_) {
    const vxlan::TunnelCounters& t = c->tunnels[tunnel];
    sum[0] += t.rx_packets.read();
    sum[1] += t.rx_bytes.read();
    sum[2] += t.tx_packets.read();
    sum[3] += t.tx_bytes.read();
  }
  return sum;
}

RemoteNodeView OverlayControl::viewOf(const Node& n, Clock::time_point now) const {
  RemoteNodeView v;
  v.node = n.cfg;
  v.node.mac = innerMacOf(n.cfg);
  v.source = n.source;
  v.added = n.added;
  v.tunnel = n.tunnel;
  std::optional<NeighborState> state;
  if (n.cfg.vtep6) {
    v.next_hop6 = nextHopFor6(*n.cfg.vtep6);
    v.next_hop_mac = neighbors6_.lookup(*v.next_hop6);
    state = neighbors6_.state(*v.next_hop6, now);
  } else {
    v.next_hop = nextHopFor(n.cfg.vtep);
    v.next_hop_mac = neighbors_.lookup(v.next_hop);
    // Looked up by address: every node has a next hop of its own, so scanning
    // the neighbor list per node made a listing quadratic in the table.
    state = neighbors_.state(v.next_hop, now);
  }
  v.neighbor_state = state ? neighborStateName(*state) : "incomplete";
  const std::array<uint64_t, 4> raw = rawCounters(n.tunnel);
  const std::array<uint64_t, 4>& base = baseline_[n.tunnel];
  v.rx_packets = raw[0] - base[0];
  v.rx_bytes = raw[1] - base[1];
  v.tx_packets = raw[2] - base[2];
  v.tx_bytes = raw[3] - base[3];
  return v;
}

std::vector<RemoteNodeView> OverlayControl::listNodes(Clock::time_point now) const {
  std::vector<RemoteNodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [name, n] : nodes_) out.push_back(viewOf(n, now));
  return out;
}

std::optional<RemoteNodeView> OverlayControl::nodeView(const std::string& name, Clock::time_point now) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return viewOf(it->second, now);
}

}  // namespace sluice
