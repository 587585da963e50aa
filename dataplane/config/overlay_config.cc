#include "dataplane/config/overlay_config.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <absl/strings/numbers.h>

#include "common/cidr_overlap.h"
#include "common/vtep_address.h"
#include "common/prefix_ranges.h"
#include "common/remote_node_limits.h"
#include "dataplane/config/config_error.h"

namespace sluice {
namespace {

// A node's CIDRs of one family against ours of that family and each other.
template <typename Cidr>
absl::Status checkOwnCidrs(const std::vector<Cidr>& cidrs, const std::optional<Cidr>& ours) {
  for (size_t i = 0; i < cidrs.size(); ++i) {
    const Cidr& c = cidrs[i];
    if (ours && cidrsOverlap(c, *ours))
      return absl::InvalidArgumentError(
          absl::StrCat("pod_cidrs: ", c.toString(), " overlaps this node's pod CIDR ", ours->toString()));
    for (size_t j = 0; j < i; ++j)
      if (cidrsOverlap(c, cidrs[j]))
        return absl::InvalidArgumentError(absl::StrCat("pod_cidrs: ", c.toString(), " overlaps ", cidrs[j].toString()));
  }
  return absl::OkStatus();
}

// A node's CIDRs of one family against another node's.
template <typename Cidr>
absl::Status checkOtherCidrs(const std::vector<Cidr>& cidrs, const std::vector<Cidr>& others, const std::string& other) {
  for (const Cidr& c : cidrs)
    for (const Cidr& oc : others)
      if (cidrsOverlap(c, oc))
        return absl::AlreadyExistsError(
            absl::StrCat("pod_cidrs: ", c.toString(), " overlaps ", oc.toString(), " of node ", other));
  return absl::OkStatus();
}

// A VTEP must be reachable without a zone: global or unique-local unicast,
// not the unspecified address, loopback, multicast or link-local.
bool isUnicastVtep6(const Ipv6Address& a) {
  Ipv6Address loopback;
  loopback.bytes[15] = 1;
  return !a.isZero() && !a.isMulticast() && !a.isLinkLocal() && a != loopback;
}

absl::Status parseUplink(const nlohmann::json& v, UplinkConfig& u) {
  if (!v.is_object()) return invalidKey("uplink", "must be an object");
  for (const auto& [k, field] : v.items()) {
    const std::string key = "uplink." + k;
    if (k == "devargs") {
      if (!field.is_string() || field.get<std::string>().empty()) return invalidKey(key, "must be a non-empty string");
      u.devargs = field.get<std::string>();
    } else if (k == "vtep" || k == "vtep-ip") {
      if (!field.is_string()) return invalidKey(key, "must be a string");
      std::string text = field.get<std::string>();
      std::vector<std::string> parts = absl::StrSplit(text, '/');
      if (auto ip6 = Ipv6Address::parse(parts[0])) {
        uint32_t prefix6 = 128;
        if (parts.size() > 2 || (parts.size() == 2 && (!absl::SimpleAtoi(parts[1], &prefix6) || prefix6 > 128)))
          return invalidKey(key, absl::StrCat("'", text, "' is not an IPv6 address (optionally /prefix)"));
        if (!isUnicastVtep6(*ip6)) return invalidKey(key, "must be a global or unique-local unicast address");
        u.vtep6 = *ip6;
        u.vtep6_prefix = static_cast<uint8_t>(prefix6);
        continue;
      }
      auto ip = Ipv4Address::parse(parts[0]);
      uint32_t prefix = 32;
      if (!ip || parts.size() > 2 || (parts.size() == 2 && (!absl::SimpleAtoi(parts[1], &prefix) || prefix > 32)))
        return invalidKey(key, absl::StrCat("'", text, "' is not an IPv4 address (optionally /prefix)"));
      if (ip->value == 0 || (ip->value >> 28) >= 14) return invalidKey(key, "must be a unicast address");
      u.vtep = *ip;
      u.vtep_prefix = static_cast<uint8_t>(prefix);
    } else if (k == "mac") {
      auto mac = field.is_string() ? MacAddress::parse(field.get<std::string>()) : std::nullopt;
      if (!mac || mac->isMulticast() || mac->isZero()) return invalidKey(key, "must be a unicast MAC");
      u.mac = *mac;
    } else if (k == "next-hop") {
      const std::string text = field.is_string() ? field.get<std::string>() : std::string();
      if (auto ip6 = Ipv6Address::parse(text)) {
        u.next_hop6 = *ip6;
        continue;
      }
      auto ip = Ipv4Address::parse(text);
      if (!ip) return invalidKey(key, "must be an IPv4 or IPv6 address");
      u.next_hop = *ip;
    } else if (k == "mtu") {
      // 68: IPv4's minimum; 9216: common jumbo ceiling.
      if (!field.is_number_unsigned() || field.get<uint64_t>() < 68 + 50 || field.get<uint64_t>() > 9216)
        return invalidKey(key, "must be an integer in 118..9216");
      u.mtu = static_cast<uint32_t>(field.get<uint64_t>());
    } else if (k == "static-neighbors") {
      if (!field.is_array()) return invalidKey(key, "must be an array of {ip, mac}");
      for (const auto& n : field) {
        auto ip = n.is_object() && n.contains("ip") && n["ip"].is_string() ? Ipv4Address::parse(n["ip"].get<std::string>())
                                                                           : std::nullopt;
        auto mac = n.is_object() && n.contains("mac") && n["mac"].is_string()
                       ? MacAddress::parse(n["mac"].get<std::string>())
                       : std::nullopt;
        if (!ip || !mac || mac->isMulticast() || mac->isZero())
          return invalidKey(key, "each entry needs an IPv4 \"ip\" and a unicast \"mac\"");
        u.static_neighbors.push_back({*ip, *mac});
      }
    } else {
      return invalidKey(key, "unknown setting");
    }
  }
  if (u.devargs.empty()) return invalidKey("uplink.devargs", "is required");
  if (u.vtep.value == 0 && !u.vtep6) return invalidKey("uplink.vtep", "is required");
  if (u.vtep6 && u.next_hop) return invalidKey("uplink.next-hop", "must be IPv6 on an IPv6 underlay (vtep is IPv6)");
  if (!u.vtep6 && u.next_hop6) return invalidKey("uplink.next-hop", "must be IPv4 on an IPv4 underlay (vtep is IPv4)");
  if (u.vtep6 && !u.static_neighbors.empty())
    return invalidKey("uplink.static-neighbors", "are IPv4 only (an IPv6 underlay resolves its next hops)");
  // 1280: IPv6's minimum link MTU, which the inner packets need too.
  if (u.vtep6 && u.mtu < 1280 + 70) return invalidKey("uplink.mtu", "must be at least 1350 on an IPv6 underlay");
  return absl::OkStatus();
}

}  // namespace

absl::Status parseRemoteNode(const nlohmann::json& v, const std::string& where, RemoteNodeConfig& n) {
  if (!v.is_object()) return invalidKey(where, "must be an object");
  for (const auto& [k, field] : v.items()) {
    const std::string key = absl::StrCat(where, ".", k);
    if (k == "name") {
      if (!field.is_string()) return invalidKey(key, "must be a string");
      n.name = field.get<std::string>();
    } else if (k == "vtep") {
      if (!field.is_string() || !parseVtep(field.get<std::string>(), n))
        return invalidKey(key, "must be an IPv4 or IPv6 address");
    } else if (k == "pod-cidr" || k == "pod-cidrs" || k == "routed-prefixes") {
      // Pod CIDRs and the prefixes its pods own read alike, into their own lists.
      const bool prefixes = k == "routed-prefixes";
      std::vector<nlohmann::json> items;
      if (field.is_array()) items.assign(field.begin(), field.end());
      else items.push_back(field);
      for (const auto& c : items) {
        const std::string text = c.is_string() ? c.get<std::string>() : std::string();
        if (auto v4 = Ipv4Cidr::parse(text)) {
          (prefixes ? n.routed_prefixes : n.pod_cidrs).push_back(*v4);
        } else if (auto v6 = Ipv6Cidr::parse(text)) {
          (prefixes ? n.routed_prefixes_v6 : n.pod_cidrs_v6).push_back(*v6);
        } else {
          return invalidKey(key, "must hold CIDRs like 10.244.1.0/24 or fd00:10:244:1::/64 (host bits zero)");
        }
      }
    } else if (k == "mac") {
      auto mac = field.is_string() ? MacAddress::parse(field.get<std::string>()) : std::nullopt;
      if (!mac || mac->isMulticast() || mac->isZero()) return invalidKey(key, "must be a unicast MAC");
      n.mac = *mac;
    } else {
      return invalidKey(key, "unknown setting");
    }
  }
  return absl::OkStatus();
}

std::string vtepText(const RemoteNodeConfig& node) {
  return node.vtep6 ? node.vtep6->toString() : node.vtep.toString();
}

bool parseVtep(std::string_view text, RemoteNodeConfig& node) {
  if (auto v6 = Ipv6Address::parse(text)) {
    node.vtep = Ipv4Address{};
    node.vtep6 = *v6;
    return true;
  }
  auto v4 = Ipv4Address::parse(text);
  if (!v4) return false;
  node.vtep = *v4;
  node.vtep6.reset();
  return true;
}

namespace {

absl::Status vtepRefused(const std::string& vtep, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("vtep: ", vtep, " is ", why, ", no remote node's VTEP"));
}

template <typename Cidr>
std::optional<Cidr> cidrHolding(const std::vector<Cidr>& cidrs, const decltype(Cidr::network)& ip) {
  for (const Cidr& c : cidrs)
    if (c.contains(ip)) return c;
  return std::nullopt;
}

absl::Status checkVtep4(const RemoteNodeConfig& node, const LocalPodCidrs& ours, const OverlayConfig& overlay) {
  const Ipv4Address vtep = node.vtep;
  const std::string text = vtep.toString();
  if (std::optional<std::string> problem = vtepAddressClassProblem(vtep)) return vtepRefused(text, *problem);
  if (!overlay.uplink) return absl::OkStatus();
  const UplinkConfig& u = *overlay.uplink;
  if (u.vtep6)
    return absl::InvalidArgumentError(absl::StrCat("vtep: ", text, " is IPv4 but this node's underlay is IPv6 (vtep ",
                                                   u.vtep6->toString(), "); one family per underlay"));
  if (vtep == u.vtep)
    return absl::InvalidArgumentError(absl::StrCat("vtep: ", text, " is this node's own VTEP"));
  if (u.next_hop && vtep == *u.next_hop) return vtepRefused(text, "the uplink's next hop (a router)");
  if (overlay.external && vtep == overlay.external->gateway) return vtepRefused(text, "the external gateway");
  // A /31 or /32 has no broadcast address (RFC 3021).
  Ipv4Cidr subnet{{}, u.vtep_prefix};
  subnet.network.value = u.vtep.value & subnet.mask();
  if (u.vtep_prefix <= 30 && vtep == subnet.broadcast())
    return vtepRefused(text, absl::StrCat("the broadcast address of the uplink's subnet ", subnet.toString()));
  if (ours.v4.contains(vtep)) return vtepRefused(text, absl::StrCat("inside this node's pod CIDR ", ours.v4.toString()));
  if (ours.gateway && vtep == *ours.gateway) return vtepRefused(text, "this node's pods' gateway");
  if (std::optional<Ipv4Cidr> c = cidrHolding(node.claimed(), vtep))
    return vtepRefused(text, absl::StrCat("inside its own pod CIDR or routed prefix ", c->toString()));
  return absl::OkStatus();
}

absl::Status checkVtep6(const RemoteNodeConfig& node, const LocalPodCidrs& ours, const OverlayConfig& overlay) {
  const Ipv6Address& vtep = *node.vtep6;
  const std::string text = vtep.toString();
  if (std::optional<std::string> problem = vtepAddressClassProblem(vtep)) return vtepRefused(text, *problem);
  if (!overlay.uplink) return absl::OkStatus();
  const UplinkConfig& u = *overlay.uplink;
  if (!u.vtep6)
    return absl::InvalidArgumentError(absl::StrCat("vtep: ", text, " is IPv6 but this node's underlay is IPv4 (vtep ",
                                                   u.vtep.toString(), "); one family per underlay"));
  if (vtep == *u.vtep6) return absl::InvalidArgumentError(absl::StrCat("vtep: ", text, " is this node's own VTEP"));
  if (u.next_hop6 && vtep == *u.next_hop6) return vtepRefused(text, "the uplink's next hop (a router)");
  if (ours.v6 && ours.v6->contains(vtep))
    return vtepRefused(text, absl::StrCat("inside this node's pod CIDR ", ours.v6->toString()));
  if (ours.gateway_v6 && vtep == *ours.gateway_v6) return vtepRefused(text, "this node's pods' gateway");
  if (std::optional<Ipv6Cidr> c = cidrHolding(node.claimed6(), vtep))
    return vtepRefused(text, absl::StrCat("inside its own pod CIDR or routed prefix ", c->toString()));
  return absl::OkStatus();
}

}  // namespace

absl::Status validateRemoteNodeAlone(const RemoteNodeConfig& node, const LocalPodCidrs& ours,
                                     const OverlayConfig& overlay) {
  // A Kubernetes Node's name (a DNS subdomain) fits, so the node controller
  // can use it as it is.
  if (node.name.empty() || node.name.size() > 253 ||
      node.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat("name: '", node.name, "' is not 1-253 of [a-z0-9.-]"));
  if (absl::Status s = node.vtep6 ? checkVtep6(node, ours, overlay) : checkVtep4(node, ours, overlay); !s.ok())
    return s;
  if (node.pod_cidrs.empty() && node.pod_cidrs_v6.empty())
    return absl::InvalidArgumentError("pod_cidrs: at least one is required");
  if (node.pod_cidrs.size() > kMaxPodCidrsPerFamily || node.pod_cidrs_v6.size() > kMaxPodCidrsPerFamily)
    return absl::InvalidArgumentError(absl::StrCat("pod_cidrs: ", node.pod_cidrs.size(), " IPv4 and ",
                                                   node.pod_cidrs_v6.size(), " IPv6; at most ",
                                                   kMaxPodCidrsPerFamily, " per family"));
  if (node.routed_prefixes.size() + node.routed_prefixes_v6.size() > kMaxRoutedPrefixesPerNode)
    return absl::InvalidArgumentError(
        absl::StrCat("routed_prefixes: ", node.routed_prefixes.size() + node.routed_prefixes_v6.size(),
                     "; at most ", kMaxRoutedPrefixesPerNode, " per node"));
  // No node's pods may attract loopback, link-local or multicast traffic,
  // whoever vouches for the claim.
  for (const Ipv4Cidr& c : node.routed_prefixes)
    if (std::optional<std::string> special = specialRangeOf(c))
      return absl::InvalidArgumentError(absl::StrCat("routed_prefixes: ", c.toString(), " overlaps ", *special));
  for (const Ipv6Cidr& c : node.routed_prefixes_v6)
    if (std::optional<std::string> special = specialRangeOf(c))
      return absl::InvalidArgumentError(absl::StrCat("routed_prefixes: ", c.toString(), " overlaps ", *special));
  if (absl::Status s = checkOwnCidrs(node.claimed(), std::optional<Ipv4Cidr>(ours.v4)); !s.ok()) return s;
  return checkOwnCidrs(node.claimed6(), ours.v6);
}

absl::Status validateRemoteNode(const RemoteNodeConfig& node, const LocalPodCidrs& ours, const OverlayConfig& overlay,
                                const std::vector<RemoteNodeConfig>& others) {
  if (absl::Status s = validateRemoteNodeAlone(node, ours, overlay); !s.ok()) return s;
  for (const RemoteNodeConfig& o : others) {
    if (o.name == node.name) continue;
    if (o.vtep == node.vtep && o.vtep6 == node.vtep6)
      return absl::AlreadyExistsError(absl::StrCat("vtep: ", vtepText(node), " belongs to node ", o.name));
    if (absl::Status s = checkOtherCidrs(node.claimed(), o.claimed(), o.name); !s.ok()) return s;
    if (absl::Status s = checkOtherCidrs(node.claimed6(), o.claimed6(), o.name); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status applyOverlayJson(const std::string& key, const nlohmann::json& value, OverlayConfig& c, bool* handled) {
  *handled = true;
  if (key == "uplink") {
    UplinkConfig u;
    if (absl::Status s = parseUplink(value, u); !s.ok()) return s;
    c.uplink = std::move(u);
  } else if (key == "vni") {
    if (!value.is_number_unsigned() || value.get<uint64_t>() < 1 || value.get<uint64_t>() > 0xffffff)
      return invalidKey(key, "must be an integer in 1..16777215");
    c.vni = static_cast<uint32_t>(value.get<uint64_t>());
  } else if (key == "remote-nodes") {
    if (!value.is_array()) return invalidKey(key, "must be an array of {name, vtep, pod-cidrs}");
    c.remote_nodes.clear();
    for (size_t i = 0; i < value.size(); ++i) {
      RemoteNodeConfig n;
      if (absl::Status s = parseRemoteNode(value[i], absl::StrCat(key, "[", i, "]"), n); !s.ok()) return s;
      c.remote_nodes.push_back(std::move(n));
    }
  } else {
    *handled = false;
  }
  return absl::OkStatus();
}

absl::Status validateOverlay(const OverlayConfig& c, const LocalPodCidrs& ours) {
  if (!c.remote_nodes.empty() && !c.uplink) return invalidKey("remote-nodes", "need an uplink");
  std::vector<RemoteNodeConfig> seen;
  for (const RemoteNodeConfig& n : c.remote_nodes) {
    for (const RemoteNodeConfig& o : seen)
      if (o.name == n.name) return invalidKey("remote-nodes", absl::StrCat("node ", n.name, " is listed twice"));
    if (absl::Status s = validateRemoteNode(n, ours, c, seen); !s.ok())
      return invalidKey(absl::StrCat("remote-nodes[", n.name, "]"), std::string(s.message()));
    seen.push_back(n);
  }
  return absl::OkStatus();
}

}  // namespace sluice
