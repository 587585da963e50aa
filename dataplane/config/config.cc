#include "dataplane/config/config.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <absl/strings/numbers.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/device_names.h"
#include "dataplane/config/config_error.h"
#include "dataplane/config/config_keys.h"
#include "dataplane/config/ipv4_allow_list.h"
#include "dataplane/config/provider_names.h"
#include "dataplane/datapath/host_path.h"
#include "dataplane/datapath/limits.h"

namespace sluice {
namespace po = boost::program_options;
namespace {

// offload-max-flows: marks are twice the cap and must fit MarkTable's 24 bits.
constexpr uint64_t kMarkTableLimit = 1u << 22;

bool isBooleanKey(const std::string& key) {
  const ConfigKey* known = findConfigKey(key);
  return known != nullptr && known->kind == ConfigKeyKind::kBoolean;
}

absl::StatusOr<std::vector<unsigned>> parseCoreList(const std::string& key, const std::string& text) {
  std::vector<unsigned> cores;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    unsigned core = 0;
    if (!absl::SimpleAtoi(part, &core) || core >= 128)
      return invalidKey(key, absl::StrCat("'", part, "' is not an lcore id 0-127"));
    cores.push_back(core);
  }
  if (cores.empty()) return invalidKey(key, "needs at least one lcore");
  if (cores.size() > kMaxPmds) return invalidKey(key, absl::StrCat("at most ", kMaxPmds, " PMD cores"));
  std::set<unsigned> unique(cores.begin(), cores.end());
  if (unique.size() != cores.size()) return invalidKey(key, "lists an lcore twice");
  return cores;
}

}  // namespace

// Flags, JSON values and run-time changes all come through here.
absl::Status applySetting(SluicedConfig& c, const std::string& key, const std::string& value) {
  auto number = [&](uint64_t max, uint64_t min = 0) -> absl::StatusOr<uint64_t> {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(value, &v) || v < min || v > max)
      return invalidKey(key, absl::StrCat("'", value, "' is not an integer in ", min, "..", max));
    return v;
  };
  if (key == "api-socket") {
    if (value.empty() || value[0] != '/') return invalidKey(key, "must be an absolute path");
    c.api_socket = value;
  } else if (key == "agent-api-socket") {
    if (!value.empty() && value[0] != '/') return invalidKey(key, "must be an absolute path (or empty: none)");
    c.agent_api_socket = value;
  } else if (key == "agent-api-gid") {
    auto v = number(std::numeric_limits<uint32_t>::max() - 1);  // (gid_t)-1 means "no change" to chown
    if (!v.ok()) return v.status();
    c.agent_api_gid = static_cast<uint32_t>(*v);
  } else if (key == "socket-dir") {
    if (value.empty() || value[0] != '/') return invalidKey(key, "must be an absolute path");
    c.socket_dir = value;
  } else if (key == "pmd-cores") {
    auto cores = parseCoreList(key, value);
    if (!cores.ok()) return cores.status();
    c.pmd_cores = *cores;
  } else if (key == "main-core") {
    auto v = number(127);
    if (!v.ok()) return v.status();
    c.main_core = static_cast<unsigned>(*v);
  } else if (key == "eal") {
    c.eal_args = value;
  } else if (key == "pod-cidr") {
    auto cidr = Ipv4Cidr::parse(value);
    if (!cidr) return invalidKey(key, absl::StrCat("'", value, "' is not an IPv4 CIDR like 10.244.1.0/24 (host bits zero)"));
    if (cidr->prefix_len < 8 || cidr->prefix_len > 30) return invalidKey(key, "prefix length must be 8..30");
    c.pod_cidr = *cidr;
  } else if (key == "gateway") {
    auto ip = Ipv4Address::parse(value);
    if (!ip) return invalidKey(key, absl::StrCat("'", value, "' is not an IPv4 address"));
    c.gateway = *ip;
  } else if (key == "pod-cidr-v6") {
    if (value.empty()) {
      c.pod_cidr_v6.reset();
      return absl::OkStatus();
    }
    auto cidr = Ipv6Cidr::parse(value);
    if (!cidr)
      return invalidKey(key, absl::StrCat("'", value, "' is not an IPv6 CIDR like fd00:10:244:1::/64 (host bits zero)"));
    // /124 leaves 15 addresses beside the network one; longer ones (/128 is
    // a single address) cannot hold a gateway and pods. Shorter than /16 is
    // no node's share of a cluster.
    if (cidr->prefix_len < 16 || cidr->prefix_len > 124)
      return invalidKey(key, absl::StrCat("prefix length /", cidr->prefix_len,
                                       " must be 16..124 (a /125 or longer leaves too few pod addresses)"));
    if (cidr->network.isMulticast() || cidr->network.isLinkLocal())
      return invalidKey(key, "must be a unicast network, not multicast or link-local (fe80::/10)");
    c.pod_cidr_v6 = *cidr;
  } else if (key == "gateway-v6") {
    if (value.empty()) {
      c.gateway_v6.reset();
      return absl::OkStatus();
    }
    auto ip = Ipv6Address::parse(value);
    if (!ip) return invalidKey(key, absl::StrCat("'", value, "' is not an IPv6 address"));
    c.gateway_v6 = *ip;
  } else if (key == "ipv6-router-lifetime") {
    auto v = number(kMaxRouterLifetimeS);
    if (!v.ok()) return v.status();
    c.ipv6_router_lifetime_s = static_cast<uint16_t>(*v);
  } else if (key == "external-gateway") {
    if (value.empty()) {
      c.external_gateway.reset();
      return absl::OkStatus();
    }
    auto ip = Ipv4Address::parse(value);
    if (!ip) return invalidKey(key, absl::StrCat("'", value, "' is not an IPv4 address (the external network is IPv4 only)"));
    c.external_gateway = *ip;
  } else if (key == "external-vlan") {
    // 0 and 4095 are reserved VLAN IDs (IEEE 802.1Q); 0 here means untagged.
    auto v = number(4094);
    if (!v.ok()) return v.status();
    c.external_vlan = static_cast<uint16_t>(*v);
  } else if (key == "gateway-mac") {
    auto mac = MacAddress::parse(value);
    if (!mac || mac->isMulticast() || mac->isZero())
      return invalidKey(key, absl::StrCat("'", value, "' is not a unicast MAC like 02:00:00:00:00:01"));
    c.gateway_mac = *mac;
  } else if (key == "host-interface") {
    if (!value.empty() && !isNetdevName(value))
      return invalidKey(key, absl::StrCat("'", value, "' is not an interface name (1..15 characters, no '/', ':' or space)"));
    c.host_interface = value;
  } else if (key == "host-addresses") {
    HostAddresses a;
    for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      const std::string text(absl::StripAsciiWhitespace(part));
      if (auto v4 = Ipv4Address::parse(text)) {
        if (a.v4) return invalidKey(key, absl::StrCat("more than one IPv4 address (", a.v4->toString(), ", ", text, ")"));
        if (v4->value == 0 || (v4->value >> 28) >= 14 || (v4->value >> 24) == 127)
          return invalidKey(key, absl::StrCat(text, " is not a unicast address of a node"));
        a.v4 = *v4;
      } else if (auto v6 = Ipv6Address::parse(text)) {
        if (a.v6) return invalidKey(key, absl::StrCat("more than one IPv6 address (", a.v6->toString(), ", ", text, ")"));
        if (v6->isZero() || v6->isMulticast() || v6->isLinkLocal())
          return invalidKey(key, absl::StrCat(text, " is not a global unicast address of a node"));
        a.v6 = *v6;
      } else {
        return invalidKey(key, absl::StrCat("'", text, "' is not an IPv4 or IPv6 address"));
      }
    }
    c.host_addresses = a;
  } else if (key == "host-path-allowed-ports") {
    HostPathPorts ports;
    if (absl::StripAsciiWhitespace(value) == "all") {
      ports.all = true;
      c.host_path_allowed_ports = ports;
      return absl::OkStatus();
    }
    for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      const std::string text(absl::StripAsciiWhitespace(part));
      const size_t slash = text.find('/');
      const std::string proto = slash == std::string::npos ? std::string() : text.substr(slash + 1);
      uint32_t port = 0;
      if (slash == std::string::npos || (proto != "tcp" && proto != "udp") ||
          !absl::SimpleAtoi(text.substr(0, slash), &port) || port == 0 || port > 65535)
        return invalidKey(key, absl::StrCat("'", text, "' is not PORT/tcp or PORT/udp with a port in 1..65535 (or give all)"));
      if (port >= kHostReplyPortsFrom)
        return invalidKey(key, absl::StrCat("'", text, "': ports from ", kHostReplyPortsFrom,
                                         " up are always open (the node's own connections get their answers there)"));
      std::vector<uint16_t>& list = proto == "tcp" ? ports.tcp : ports.udp;
      if (std::find(list.begin(), list.end(), port) != list.end())
        return invalidKey(key, absl::StrCat("'", text, "' is listed twice"));
      if (list.size() == kMaxHostPathPorts)
        return invalidKey(key, absl::StrCat("more than ", kMaxHostPathPorts, " ", proto, " ports"));
      list.push_back(static_cast<uint16_t>(port));
    }
    std::sort(ports.tcp.begin(), ports.tcp.end());
    std::sort(ports.udp.begin(), ports.udp.end());
    c.host_path_allowed_ports = ports;
  } else if (key == "routed-prefix-ranges" || key == "service-cidr") {
    absl::StatusOr<PrefixRanges> ranges = parsePrefixRanges(value);
    if (!ranges.ok()) return invalidKey(key, std::string(ranges.status().message()));
    (key == "service-cidr" ? c.service_cidrs : c.routed_prefix_ranges) = *ranges;
  } else if (key == "tx-flush-interval") {
    auto v = number(1'000'000);  // 1 s: anything longer is surely a unit mistake
    if (!v.ok()) return v.status();
    c.tx_flush_interval_us = static_cast<uint32_t>(*v);
  } else if (key == "pmd-max-sleep-us") {
    auto v = number(kPmdMaxSleepLimitUs);
    if (!v.ok()) return v.status();
    c.pmd_max_sleep_us = static_cast<uint32_t>(*v);
  } else if (key == "max-ports") {
    auto v = number(kMaxPortsLimit, 1);
    if (!v.ok()) return v.status();
    c.max_ports = static_cast<uint16_t>(*v);
  } else if (key == "max-queues-per-port") {
    auto v = number(kMaxQueuesPerPort, 1);
    if (!v.ok()) return v.status();
    c.max_queues_per_port = static_cast<uint16_t>(*v);
  } else if (key == "metrics-address") {
    in6_addr buf{};
    if (::inet_pton(AF_INET, value.c_str(), &buf) != 1 && ::inet_pton(AF_INET6, value.c_str(), &buf) != 1)
      return invalidKey(key, absl::StrCat("'", value, "' is not an IPv4 or IPv6 address"));
    c.metrics_address = value;
  } else if (key == "metrics-allowed-cidrs") {
    auto list = Ipv4AllowList::parse(value);
    if (!list.ok()) return invalidKey(key, std::string(list.status().message()));
    c.metrics_allowed_cidrs = value;
  } else if (key == "metrics-pod-labels") {
    if (value == "true" || value == "1") c.metrics_pod_labels = true;
    else if (value == "false" || value == "0") c.metrics_pod_labels = false;
    else return invalidKey(key, absl::StrCat("'", value, "' is not true or false"));
  } else if (key == "metrics-port") {
    auto v = number(65535);
    if (!v.ok()) return v.status();
    c.metrics_port = static_cast<uint16_t>(*v);
  } else if (key == "mbufs") {
    auto v = number(4'194'304, 1024);
    if (!v.ok()) return v.status();
    c.mbufs = static_cast<uint32_t>(*v);
  } else if (key == "mbuf-size") {
    // 16384: twice the largest port MTU's frame, and within the 16-bit
    // buffer length with DPDK's headroom.
    auto v = number(16384, 2048);
    if (!v.ok()) return v.status();
    c.mbuf_size = static_cast<uint32_t>(*v);
  } else if (key == "emc-entries") {
    auto v = number(1u << 20, 2);  // 1M entries = 128 MB: beyond that it is no cache
    if (!v.ok()) return v.status();
    if ((*v & (*v - 1)) != 0) return invalidKey(key, absl::StrCat("'", value, "' is not a power of two"));
    c.emc_entries = static_cast<uint32_t>(*v);
  } else if (key == "emc-insert-inv-prob") {
    auto v = number(1'000'000);  // 0 = EMC off, 1 = always insert
    if (!v.ok()) return v.status();
    c.emc_insert_inv_prob = static_cast<uint32_t>(*v);
  } else if (key == "smc-enable") {
    if (value == "true" || value == "1") c.smc_enable = true;
    else if (value == "false" || value == "0") c.smc_enable = false;
    else return invalidKey(key, absl::StrCat("'", value, "' is not true or false"));
  } else if (key == "flow-limit") {
    auto v = number(4'000'000, 1);  // 4M megaflows = 1.5 GB per PMD
    if (!v.ok()) return v.status();
    c.flow_limit = static_cast<uint32_t>(*v);
  } else if (key == "flow-idle-timeout-ms") {
    auto v = number(3'600'000, 10);  // 10 ms .. 1 h
    if (!v.ok()) return v.status();
    c.flow_idle_timeout_ms = static_cast<uint32_t>(*v);
  } else if (key == "upcall-rate") {
    auto v = number(10'000'000, 1);
    if (!v.ok()) return v.status();
    c.upcall_rate = static_cast<uint32_t>(*v);
  } else if (key == "upcall-burst") {
    auto v = number(1'000'000, 1);
    if (!v.ok()) return v.status();
    c.upcall_burst = static_cast<uint32_t>(*v);
  } else if (key == "icmp-error-rate") {
    auto v = number(10'000'000);  // 0 = never send
    if (!v.ok()) return v.status();
    c.icmp_error_rate = static_cast<uint32_t>(*v);
  } else if (key == "port-mtu") {
    auto v = number(kMaxPortMtu, kMinPortMtu);
    if (!v.ok()) return v.status();
    c.port_mtu = static_cast<uint32_t>(*v);
  } else if (key == "state-dir") {
    if (value.empty() || value[0] != '/') return invalidKey(key, "must be an absolute path");
    c.state_dir = value;
  } else if (key == "checkpoint-fsync") {
    if (value == "true" || value == "1") c.checkpoint_fsync = true;
    else if (value == "false" || value == "0") c.checkpoint_fsync = false;
    else return invalidKey(key, absl::StrCat("'", value, "' is not true or false"));
  } else if (key == "gc-interval-ms") {
    auto v = number(86'400'000);  // a day; 0 switches the periodic check off
    if (!v.ok()) return v.status();
    c.gc_interval_ms = static_cast<uint32_t>(*v);
  } else if (key == "offload-provider") {
    if (value != "off" && !isProviderName(key, value))
      return invalidKey(key, absl::StrCat("must be ", providerChoices(key, {"off"})));
    c.offload_provider = value;
  } else if (key == "offload-max-flows") {
    auto v = number(kMarkTableLimit, 1);
    if (!v.ok()) return v.status();
    c.offload_max_flows = static_cast<uint32_t>(*v);
  } else if (key == "offload-port") {
    if (!value.empty() && value.find('/') == std::string::npos)
      return invalidKey(key, "must be container-id/ifname of a pod port");
    c.offload_port = value;
  } else if (key == "sysfs-root") {
    if (value.empty() || value[0] != '/') return invalidKey(key, "must be an absolute path");
    c.sysfs_root = value;
  } else if (key == "sriov-pf-control") {
    // The stand-in ("fake") programs nothing: tests only.
    if (!isProviderName(key, value))
      return invalidKey(key, absl::StrCat("must be ", providerChoices(key), " (tests only)"));
    c.sriov_pf_control = value;
  } else if (key == "allow-vdev-ports") {
    if (value == "true" || value == "1") c.allow_vdev_ports = true;
    else if (value == "false" || value == "0") c.allow_vdev_ports = false;
    else return invalidKey(key, absl::StrCat("'", value, "' is not true or false"));
  } else if (key == "log-level") {
    static const std::set<std::string> levels = {"error", "warning", "info", "debug"};
    if (!levels.contains(value)) return invalidKey(key, "must be error, warning, info or debug");
    c.log_level = value;
  } else {
    return invalidKey(key, "unknown setting");
  }
  return absl::OkStatus();
}

namespace {

// The external network's cross-field checks: a unicast host of the uplink's
// IPv4 subnet that is neither our VTEP nor inside a pod CIDR (this node's or
// a configured remote node's), and a VLAN only with it.
absl::Status validateExternalNetwork(const SluicedConfig& c) {
  if (!c.external_gateway) {
    if (c.external_vlan != 0) return invalidKey("external-vlan", "needs external-gateway");
    return absl::OkStatus();
  }
  const Ipv4Address gw = *c.external_gateway;
  const std::string key = "external-gateway";
  if (!c.overlay.uplink) return invalidKey(key, "needs an uplink (the external network is reached through it)");
  const UplinkConfig& u = *c.overlay.uplink;
  if (u.vtep6) return invalidKey(key, "the external network is IPv4 only; this uplink's VTEP is IPv6");
  if (gw.value == 0 || (gw.value >> 28) >= 14 || (gw.value >> 24) == 127)
    return invalidKey(key, absl::StrCat(gw.toString(), " is not a unicast host address"));
  if (gw == u.vtep) return invalidKey(key, absl::StrCat(gw.toString(), " is this node's VTEP address"));
  if (u.vtep_prefix < 32) {
    const Ipv4Cidr subnet{Ipv4Address{u.vtep.value & (u.vtep_prefix == 0 ? 0 : ~0u << (32 - u.vtep_prefix))},
                          u.vtep_prefix};
    if (!subnet.contains(gw) || gw == subnet.network || gw == subnet.broadcast())
      return invalidKey(key, absl::StrCat(gw.toString(), " is not a host address on the uplink's subnet ",
                                       subnet.toString()));
  }
  if (c.pod_cidr.contains(gw))
    return invalidKey(key, absl::StrCat(gw.toString(), " lies inside pod-cidr ", c.pod_cidr.toString()));
  for (const RemoteNodeConfig& n : c.overlay.remote_nodes)
    for (const Ipv4Cidr& cidr : n.claimed())
      if (cidr.contains(gw))
        return invalidKey(key, absl::StrCat(gw.toString(), " lies inside ", cidr.toString(), " of remote node ", n.name));
  return absl::OkStatus();
}

// The host path's keys together: addresses without an interface (or the
// reverse) configure nothing, and a host address inside a pod CIDR would be
// two destinations at once.
absl::Status validateHostPath(const SluicedConfig& c) {
  const HostAddresses& a = c.host_addresses;
  if (c.host_interface.empty()) {
    if (!a.empty()) return invalidKey("host-addresses", "needs host-interface (the TAP the node is reached through)");
    if (c.host_path_allowed_ports != HostPathPorts{})
      return invalidKey("host-path-allowed-ports", "needs host-interface (the TAP the node is reached through)");
    return absl::OkStatus();
  }
  if (a.empty()) return invalidKey("host-interface", "needs host-addresses (the node's addresses pods may reach)");
  if (a.v4 && c.pod_cidr.contains(*a.v4))
    return invalidKey("host-addresses", absl::StrCat(a.v4->toString(), " is inside pod-cidr ", c.pod_cidr.toString()));
  if (a.v6 && !c.pod_cidr_v6) return invalidKey("host-addresses", absl::StrCat(a.v6->toString(), ": IPv6 needs pod-cidr-v6"));
  if (a.v6 && c.pod_cidr_v6->contains(*a.v6))
    return invalidKey("host-addresses",
                   absl::StrCat(a.v6->toString(), " is inside pod-cidr-v6 ", c.pod_cidr_v6->toString()));
  return absl::OkStatus();
}

// Cross-field checks, after every source has been applied.
absl::Status validate(SluicedConfig& c, bool gateway_given, bool gateway_mac_given) {
  if (!gateway_given) c.gateway = Ipv4Address{c.pod_cidr.network.value + 1};
  if (!gateway_mac_given) c.gateway_mac = MacAddress::fromIpv4(c.gateway);
  if (!c.pod_cidr.contains(c.gateway) || c.gateway == c.pod_cidr.network ||
      c.gateway == c.pod_cidr.broadcast())
    return invalidKey("gateway", absl::StrCat(c.gateway.toString(), " is not a host address in pod-cidr ",
                                           c.pod_cidr.toString()));
  if (c.pod_cidr_v6) {
    if (!c.gateway_v6) c.gateway_v6 = c.pod_cidr_v6->host(1);
    if (!c.pod_cidr_v6->contains(*c.gateway_v6) || *c.gateway_v6 == c.pod_cidr_v6->network)
      return invalidKey("gateway-v6", absl::StrCat(c.gateway_v6->toString(), " is not a host address in pod-cidr-v6 ",
                                                c.pod_cidr_v6->toString()));
    if (c.port_mtu < kMinIpv6PortMtu)
      return invalidKey("port-mtu", absl::StrCat(c.port_mtu, " is below IPv6's minimum link MTU ", kMinIpv6PortMtu,
                                              " (pod-cidr-v6 is set)"));
  } else if (c.gateway_v6) {
    return invalidKey("gateway-v6", "needs pod-cidr-v6 (the node serves no IPv6 without it)");
  } else if (c.ipv6_router_lifetime_s != 0) {
    return invalidKey("ipv6-router-lifetime", "needs pod-cidr-v6 (the node serves no IPv6 without it)");
  }
  for (unsigned core : c.pmd_cores)
    if (core == c.main_core)
      return invalidKey("pmd-cores", absl::StrCat("lcore ", core, " is also main-core"));
  LocalPodCidrs ours(c.pod_cidr, c.pod_cidr_v6);
  ours.gateway = c.gateway;
  ours.gateway_v6 = c.gateway_v6;
  if (absl::Status s = validateOverlay(c.overlay, ours); !s.ok()) return s;
  if (absl::Status s = validateExternalNetwork(c); !s.ok()) return s;
  if (absl::Status s = validateHostPath(c); !s.ok()) return s;
  return absl::OkStatus();
}

// "sriov-pools": [{"pf": "ens1f0", "sysfs-root": "/sys", "vfs": 8,
// "mode": "vfio"}, ...] (a bare string is a PF with the global sysfs root).
// "vfs" and "mode" (the chart's pool keys) make sluiced create the VFs and
// bind their driver at start (vf_provisioner.h); other keys are reported in
// `ignored`, not fatal.
absl::StatusOr<std::vector<sriov::PoolConfig>> parseSriovPools(const nlohmann::json& value,
                                                                std::vector<std::string>& ignored) {
  const std::string key = "sriov-pools";
  // PCIe's TotalVFs is a 16-bit field: no PF has more.
  constexpr uint64_t kMaxVfs = 65535;
  if (!value.is_array())
    return invalidKey(key, "must be an array of {\"pf\": NAME, \"sysfs-root\": PATH, \"vfs\": N, \"mode\": MODE}");
  std::vector<sriov::PoolConfig> pools;
  for (const nlohmann::json& entry : value) {
    sriov::PoolConfig pool;
    if (entry.is_string()) {
      pool.pf = entry.get<std::string>();
    } else if (entry.is_object()) {
      for (const auto& [k, v] : entry.items()) {
        if (k == "vfs") {
          if (!v.is_number_unsigned() || v.get<uint64_t>() > kMaxVfs)
            return invalidKey(key, absl::StrCat("\"vfs\" must be a VF count 0..", kMaxVfs));
          pool.vfs = v.get<uint32_t>();
          continue;
        }
        if (k == "mode") {
          const std::string mode = v.is_string() ? v.get<std::string>() : std::string();
          if (mode == "vfio") pool.mode = sriov::VfDriverMode::kVfio;
          else if (mode == "kernel") pool.mode = sriov::VfDriverMode::kKernel;
          else return invalidKey(key, "\"mode\" must be \"vfio\" or \"kernel\"");
          continue;
        }
        if (k != "pf" && k != "sysfs-root") {
          ignored.push_back(absl::StrCat("sriov-pools[].", k));
          continue;
        }
        if (!v.is_string()) return invalidKey(key, absl::StrCat("\"", k, "\" must be a string"));
        (k == "pf" ? pool.pf : pool.sysfs_root) = v.get<std::string>();
      }
    } else {
      return invalidKey(key, "entries must be objects or PF names");
    }
    if (!isNetdevName(pool.pf)) return invalidKey(key, absl::StrCat("pf '", pool.pf, "' is not a netdev name"));
    if (!pool.sysfs_root.empty() && pool.sysfs_root[0] != '/')
      return invalidKey(key, absl::StrCat("pf ", pool.pf, ": sysfs-root must be an absolute path"));
    for (const sriov::PoolConfig& other : pools)
      if (other.pf == pool.pf) return invalidKey(key, absl::StrCat("pf ", pool.pf, " is listed twice"));
    pools.push_back(pool);
  }
  return pools;
}

}  // namespace

absl::StatusOr<SluicedConfig> applyConfigJson(const std::string& json_text, SluicedConfig c) {
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("config: not valid JSON");
  if (!doc.is_object()) return absl::InvalidArgumentError("config: top level must be an object");
  for (const auto& [key, value] : doc.items()) {
    if (key == "sriov-pools") {
      auto pools = parseSriovPools(value, c.ignored_keys);
      if (!pools.ok()) return pools.status();
      c.sriov_pools = *pools;
      continue;
    }
    bool overlay_key = false;
    if (absl::Status s = applyOverlayJson(key, value, c.overlay, &overlay_key); !s.ok()) return s;
    if (overlay_key) continue;
    if (key == "offload") {
      // The chart's switch: true = the NIC's flow engine on the uplink, false = off.
      if (value.is_boolean()) {
        c.offload_provider = value.get<bool>() ? "rte_flow" : "off";
        continue;
      }
      // {"provider": "...", "max-flows": N, "port": "..."} -> offload-* settings.
      if (!value.is_object()) return invalidKey(key, "must be true, false or an object");
      for (const auto& [sub, v] : value.items()) {
        std::string text;
        if (v.is_string()) text = v.get<std::string>();
        else if (v.is_number_unsigned()) text = std::to_string(v.get<uint64_t>());
        else return invalidKey("offload." + sub, absl::StrCat("has the wrong type (", v.type_name(), ")"));
        if (sub != "provider" && sub != "max-flows" && sub != "port") return invalidKey("offload." + sub, "unknown setting");
        if (absl::Status s = applySetting(c, "offload-" + sub, text); !s.ok()) return s;
      }
      continue;
    }
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_boolean() && isBooleanKey(key)) {
      text = value.get<bool>() ? "true" : "false";
    } else if (value.is_number_unsigned()) {
      text = std::to_string(value.get<uint64_t>());
    } else if ((key == "host-addresses" || key == "routed-prefix-ranges" || key == "service-cidr") &&
               value.is_array()) {
      for (const auto& address : value) {
        if (!address.is_string()) return invalidKey(key, "array must hold address or CIDR strings");
        text += (text.empty() ? "" : ",") + address.get<std::string>();
      }
    } else if (key == "host-path-allowed-ports" && value.is_array()) {
      for (const auto& port : value) {
        if (!port.is_string()) return invalidKey(key, "array must hold strings like \"10250/tcp\"");
        text += (text.empty() ? "" : ",") + port.get<std::string>();
      }
    } else if (key == "pmd-cores" && value.is_array()) {
      for (const auto& core : value) {
        if (!core.is_number_unsigned()) return invalidKey(key, "array must hold lcore numbers");
        text += (text.empty() ? "" : ",") + std::to_string(core.get<uint64_t>());
      }
    } else {
      return invalidKey(key, absl::StrCat("has the wrong type (", value.type_name(), ")"));
    }
    if (absl::Status s = applySetting(c, key, text); !s.ok()) return s;
  }
  return c;
}

absl::StatusOr<std::vector<ConfigFileText>> readConfigFiles(const std::vector<std::string>& paths) {
  std::vector<ConfigFileText> files;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(absl::StrCat("config: cannot read ", path));
    std::stringstream text;
    text << in.rdbuf();
    files.push_back({path, text.str()});
  }
  return files;
}

absl::StatusOr<SluicedConfig> composeSluicedConfig(const std::vector<ConfigFileText>& files,
                                                   const std::vector<std::pair<std::string, std::string>>& flags,
                                                   std::set<std::string>* file_keys) {
  SluicedConfig c;
  bool gateway_given = false, gateway_mac_given = false;
  for (const ConfigFileText& file : files) {
    auto parsed = applyConfigJson(file.text, c);
    if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(file.path, ": ", parsed.status().message()));
    c = *parsed;
    nlohmann::json doc = nlohmann::json::parse(file.text, nullptr, false);
    gateway_given |= doc.contains("gateway");
    gateway_mac_given |= doc.contains("gateway-mac");
    if (file_keys != nullptr) {
      for (const auto& [key, value] : doc.items())
        if (findConfigKey(key) != nullptr) file_keys->insert(key);
      if (doc.contains("offload") && doc["offload"].is_object())
        for (const auto& [sub, value] : doc["offload"].items()) file_keys->insert("offload-" + sub);
      else if (doc.contains("offload"))
        file_keys->insert("offload-provider");
    }
  }
  for (const auto& [key, value] : flags) {
    if (absl::Status s = applySetting(c, key, value); !s.ok()) return s;
    gateway_given |= key == "gateway";
    gateway_mac_given |= key == "gateway-mac";
  }
  if (absl::Status s = validate(c, gateway_given, gateway_mac_given); !s.ok()) return s;
  return c;
}

absl::StatusOr<SluicedArgs> parseSluicedArgs(int argc, const char* const* argv) {
  po::options_description desc(
      "sluiced: the Sluice node dataplane\n"
      "Settings marked (live) change while sluiced runs (sluicectl config set KEY VALUE, or an edit of a\n"
      "--config file, which sluiced watches); those marked (restart) take effect when sluiced starts again.\n"
      "Options");
  desc.add_options()("help,h", "show this help")(
      "config", po::value<std::vector<std::string>>()->composing(),
      "JSON config file, watched for changes; may be given more than once (later files and flags override)");
  const SluicedConfig defaults;
  for (const ConfigKey& key : configKeys()) {
    if (key.kind == ConfigKeyKind::kFileOnly) continue;
    std::string help = key.help;
    if (key.kind != ConfigKeyKind::kDerivedDefault) help += absl::StrCat(" [", key.value_text(defaults), "]");
    help += isLive(key) ? " (live)" : " (restart)";
    desc.add_options()(key.name, po::value<std::string>(), help.c_str());
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  } catch (const po::error& e) {
    return absl::InvalidArgumentError(absl::StrCat("sluiced: ", e.what()));
  }
  if (vm.count("help")) {
    std::ostringstream usage;
    usage << desc;
    return absl::CancelledError(usage.str());
  }
  SluicedArgs args;
  if (vm.count("config")) args.config_files = vm["config"].as<std::vector<std::string>>();
  for (const ConfigKey& flag : configKeys())
    if (flag.kind != ConfigKeyKind::kFileOnly && vm.count(flag.name))
      args.flags.emplace_back(flag.name, vm[flag.name].as<std::string>());
  auto files = readConfigFiles(args.config_files);
  if (!files.ok()) return files.status();
  args.file_texts = *files;
  auto config = composeSluicedConfig(*files, args.flags, &args.file_keys);
  if (!config.ok()) return config.status();
  args.config = *std::move(config);
  return args;
}

absl::StatusOr<SluicedConfig> parseSluicedConfig(int argc, const char* const* argv) {
  auto args = parseSluicedArgs(argc, argv);
  if (!args.ok()) return args.status();
  return std::move(args->config);
}

}  // namespace sluice
