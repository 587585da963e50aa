// See netconf.h.
#include "cni-plugin/netconf.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "absl/strings/match.h"
#include "cni-plugin/cni_result.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/pod_socket_volume.h"
#include "cni-plugin/text.h"
#include "common/device_names.h"
#include "cni-plugin/cni_error.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

// stdin larger than this is not a network config; refusing early bounds the
// parser's memory (configs are a few KiB; prevResult adds little).
constexpr size_t kMaxConfigBytes = 1 << 20;
// MTU bounds: 68 is the IPv4 minimum (RFC 791); 9216 is the common jumbo
// frame ceiling of NICs and of DPDK's vhost PMD.
constexpr int64_t kMinMtu = 68;
constexpr int64_t kMaxMtu = 9216;
constexpr int64_t kMaxVlan = 4094;  // 802.1Q: 4095 is reserved
// Queue pairs of a vhost-user port: sluiced's max-queues-per-port is at most
// 16 (one per PMD it can run); the node's own maximum is sluiced's to enforce.
constexpr int64_t kMaxQueues = 16;
constexpr int64_t kMaxVlanQos = 7;  // 802.1p priorities are 3 bits
constexpr int64_t kMaxTxRate = 4294967295LL;  // IFLA_VF_RATE's fields are u32 Mbit/s
// An interface has a handful of addresses; more is a malformed config.
constexpr size_t kMaxRuntimeIps = 16;
// A deadline above two minutes would outlast kubelet's own CNI timeout.
constexpr int64_t kMaxTimeoutMs = 120000;
// Prefixes one attachment may own (sluiced's own limit per port).
constexpr size_t kMaxRoutedPrefixes = 64;
// Keys of the spec, of runtimes and of Multus that we accept without using.
const std::set<std::string, std::less<>> kKnownIgnored = {
    "args", "capabilities", "cniVersions", "disableCheck", "disableGC", "dns",
    "cni.dev/attachments",  // handled with valid-attachments below
};

absl::Status invalidField(std::string_view field, std::string_view why) {
  return cniError(ErrorCode::kInvalidConfig, cat("network config: \"", field, "\" ", why));
}

// Network name and IPAM type rule: the spec's name grammar (alphanumeric
// first, then alphanumerics, '_', '.', '-'), which also makes them safe file
// names (no '/', never "." or "..").
bool isSafeName(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  if (std::isalnum(static_cast<unsigned char>(s[0])) == 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  });
}

absl::StatusOr<std::string> getString(const json& obj, std::string_view field, bool required) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) {
    if (required) return invalidField(field, "is required");
    return std::string();
  }
  if (!it->is_string()) return invalidField(field, "must be a string");
  return it->get<std::string>();
}

absl::StatusOr<std::optional<int64_t>> getInteger(const json& obj, std::string_view field,
                                                  int64_t min, int64_t max) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
  int64_t value = 0;
  if (it->is_number_unsigned()) {
    uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return invalidField(field, cat("must be between ", min, " and ", max));
    }
    value = static_cast<int64_t>(u);
  } else if (it->is_number_integer()) {
    value = it->get<int64_t>();
  } else {
    return invalidField(field, "must be an integer");
  }
  if (value < min || value > max) {
    return invalidField(field, cat("must be between ", min, " and ", max, ", got ", value));
  }
  return std::optional<int64_t>(value);
}

absl::StatusOr<std::string> getAbsolutePath(const json& obj, std::string_view field,
                                            std::string_view fallback, size_t max_len) {
  absl::StatusOr<std::string> value = getString(obj, field, false);
  if (!value.ok()) return value.status();
  if (value->empty()) return std::string(fallback);
  if ((*value)[0] != '/') return invalidField(field, "must be an absolute path");
  if (value->size() > max_len) return invalidField(field, cat("is longer than ", max_len, " bytes"));
  if (value->find('\0') != std::string::npos) return invalidField(field, "must not contain NUL");
  return value;
}

absl::StatusOr<std::optional<bool>> getBoolean(const json& obj, std::string_view field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) return invalidField(field, "must be true or false");
  return std::optional<bool>(it->get<bool>());
}

// "on" / "off" (sriov-cni's spelling) or a JSON boolean.
absl::StatusOr<std::optional<bool>> getOnOff(const json& obj, std::string_view field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::optional<bool>();
  if (it->is_boolean()) return std::optional<bool>(it->get<bool>());
  if (it->is_string() && it->get<std::string>() == "on") return std::optional<bool>(true);
  if (it->is_string() && it->get<std::string>() == "off") return std::optional<bool>(false);
  return invalidField(field, "must be \"on\" or \"off\"");
}

absl::Status parseRuntimeConfig(const json& doc, NetConf& conf) {
  auto it = doc.find("runtimeConfig");
  if (it == doc.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return invalidField("runtimeConfig", "must be an object");
  const json& rc = *it;
  if (auto f = rc.find("CNIDeviceInfoFile"); f != rc.end() && !f->is_null()) {
    if (!f->is_string()) return invalidField("runtimeConfig.CNIDeviceInfoFile", "must be a string");
    std::string path = f->get<std::string>();
    if (!path.empty()) {
      if (path[0] != '/') return invalidField("runtimeConfig.CNIDeviceInfoFile", "must be an absolute path");
      if (path.find('\0') != std::string::npos || path.size() > 4096) {
        return invalidField("runtimeConfig.CNIDeviceInfoFile", "is not a usable path");
      }
      conf.device_info_file = std::move(path);
    }
  }
  if (auto f = rc.find("deviceID"); f != rc.end() && !f->is_null()) {
    if (!f->is_string()) return invalidField("runtimeConfig.deviceID", "must be a string");
    if (conf.device_id.empty()) conf.device_id = f->get<std::string>();
  }
  if (auto f = rc.find("mac"); f != rc.end() && !f->is_null()) {
    std::optional<MacAddress> mac = f->is_string() ? MacAddress::parse(f->get<std::string>()) : std::nullopt;
    if (!mac || (mac->bytes[0] & 1) != 0 || *mac == MacAddress{}) {
      return invalidField("runtimeConfig.mac", "must be a unicast MAC like 02:00:00:00:00:01");
    }
    conf.runtime_mac = *mac;
  }
  if (auto f = rc.find("ips"); f != rc.end() && !f->is_null()) {
    if (!f->is_array() || f->size() > kMaxRuntimeIps) {
      return invalidField("runtimeConfig.ips", cat("must be an array of at most ", kMaxRuntimeIps, " addresses"));
    }
    for (const json& ip : *f) {
      if (!ip.is_string() || (!parseIpv4Cidr(ip.get<std::string>()) && !parseIpv6Cidr(ip.get<std::string>()))) {
        return invalidField("runtimeConfig.ips", "entries must be IPv4 or IPv6 addresses with a prefix, like "
                                            "10.1.2.3/24 or fd00:10:244::3/64");
      }
      conf.runtime_ips.push_back(ip.get<std::string>());
    }
  }
  return absl::OkStatus();
}

absl::Status parseValidAttachments(const json& doc, NetConf& conf) {
  // libcni sends both keys with the same value (an early spec draft used the
  // second name); prefer the spec's.
  for (std::string_view key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) continue;
    if (!it->is_array()) return invalidField(key, "must be an array");
    std::vector<AttachmentId> list;
    for (const json& entry : *it) {
      if (!entry.is_object()) return invalidField(key, "entries must be objects");
      auto cid = entry.find("containerID");
      auto ifn = entry.find("ifname");
      if (cid == entry.end() || !cid->is_string() || ifn == entry.end() || !ifn->is_string()) {
        return invalidField(key, "entries need string \"containerID\" and \"ifname\"");
      }
      list.push_back({cid->get<std::string>(), ifn->get<std::string>()});
    }
    conf.valid_attachments = std::move(list);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

// A "routedPrefixes" list at `field` of `obj` (absent: nullopt): an array
// of at most kMaxRoutedPrefixes distinct CIDR strings, host bits zero.
absl::StatusOr<std::optional<std::vector<std::string>>> getRoutedPrefixes(const json& obj, std::string_view field,
                                                                          std::string_view where) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return std::optional<std::vector<std::string>>();
  if (!it->is_array() || it->size() > kMaxRoutedPrefixes)
    return invalidField(where, cat("must be an array of at most ", kMaxRoutedPrefixes, " CIDR strings"));
  std::vector<std::string> out;
  for (const json& entry : *it) {
    const std::string text = entry.is_string() ? entry.get<std::string>() : std::string();
    std::string normal;
    if (auto v4 = Ipv4Cidr::parse(text)) normal = v4->toString();
    else if (auto v6 = Ipv6Cidr::parse(text)) normal = v6->toString();
    else
      return invalidField(where, cat("entries must be IPv4 or IPv6 CIDRs with host bits zero, like 10.100.0.0/16 or "
                                "fd00:100::/48; got ", entry.dump()));
    if (std::find(out.begin(), out.end(), normal) != out.end()) return invalidField(where, cat("lists ", normal, " twice"));
    out.push_back(std::move(normal));
  }
  return std::optional(std::move(out));
}

// The network's "routedPrefixes", or the pod's from Multus's cni-args
// (args.cni.routedPrefixes), which replaces it and is marked as the pod's
// (ADD accepts it only where the network allows pods to name prefixes).
absl::Status parseRoutedPrefixes(const json& doc, NetConf& conf) {
  auto network = getRoutedPrefixes(doc, "routedPrefixes", "routedPrefixes");
  if (!network.ok()) return network.status();
  if (*network) conf.routed_prefixes = **network;
  auto args = doc.find("args");
  if (args == doc.end() || !args->is_object()) return absl::OkStatus();
  auto cni = args->find("cni");
  if (cni == args->end() || !cni->is_object()) return absl::OkStatus();
  auto pod = getRoutedPrefixes(*cni, "routedPrefixes", "args.cni.routedPrefixes");
  if (!pod.ok()) return pod.status();
  if (*pod) {
    conf.routed_prefixes = **pod;
    conf.routed_prefixes_from_pod = true;
  }
  return absl::OkStatus();
}

}  // namespace

const SpecVersion* findSpecVersion(std::string_view version) {
  for (const SpecVersion& v : kSpecVersions) {
    if (v.name == version) return &v;
  }
  return nullptr;
}

bool isSupportedVersion(std::string_view version) { return findSpecVersion(version) != nullptr; }

const SpecVersion& specVersion(std::string_view supported_version) {
  const SpecVersion* v = findSpecVersion(supported_version);
  // Only a version that passed parseNetConf gets here; the latest is the
  // safe reading should that ever not hold.
  return v != nullptr ? *v : kSpecVersions[std::size(kSpecVersions) - 1];
}

std::string supportedVersionList() {
  std::string out;
  for (const SpecVersion& v : kSpecVersions) out.append(out.empty() ? "" : ", ").append(v.name);
  return out;
}

std::string_view vhostModeName(VhostMode mode) {
  return mode == VhostMode::kServer ? "server" : "client";
}

std::string_view interfaceTypeName(InterfaceType type) {
  return type == InterfaceType::kVhostUser ? "vhost-user" : "sriov";
}

std::string_view sriovModeName(SriovMode mode) { return mode == SriovMode::kKernel ? "kernel" : "dpdk"; }

std::string peekCniVersion(std::string_view text) {
  if (text.size() <= kMaxConfigBytes) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object()) {
      auto it = doc.find("cniVersion");
      if (it != doc.end() && it->is_string() && isSupportedVersion(it->get<std::string>())) {
        return it->get<std::string>();
      }
    }
  }
  return std::string(kLatestVersion);
}

absl::StatusOr<NetConf> parseNetConf(std::string_view text) {
  if (text.size() > kMaxConfigBytes) {
    return cniError(ErrorCode::kDecodeFailure,
                    cat("network config: larger than ", kMaxConfigBytes, " bytes"));
  }
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return cniError(ErrorCode::kDecodeFailure, "network config: not valid JSON");
  if (!doc.is_object()) return cniError(ErrorCode::kDecodeFailure, "network config: not a JSON object");

  NetConf conf;
  absl::StatusOr<std::string> s = getString(doc, "cniVersion", true);
  if (!s.ok()) return s.status();
  if (!isSupportedVersion(*s)) {
    return cniError(ErrorCode::kIncompatibleVersion,
                    cat("incompatible CNI version \"", *s, "\"; sluice-cni supports ", supportedVersionList()));
  }
  conf.cni_version = *s;

  if (s = getString(doc, "name", true); !s.ok()) return s.status();
  if (!isSafeName(*s)) {
    return invalidField("name", "must start with an alphanumeric and contain only alphanumerics, '_', '.', '-'");
  }
  conf.name = *s;

  if (s = getString(doc, "type", true); !s.ok()) return s.status();
  if (*s != kPluginType) return invalidField("type", cat("must be \"", kPluginType, "\", got \"", *s, "\""));

  if (s = getString(doc, "interfaceType", false); !s.ok()) return s.status();
  if (s->empty() || *s == "vhost-user") {
    conf.interface_type = InterfaceType::kVhostUser;
  } else if (*s == "sriov") {
    conf.interface_type = InterfaceType::kSriov;
  } else {
    return invalidField("interfaceType", cat("must be \"vhost-user\" or \"sriov\", got \"", *s, "\""));
  }

  if (s = getString(doc, "vhostMode", false); !s.ok()) return s.status();
  if (s->empty() || *s == "client") {
    conf.vhost_mode = VhostMode::kClient;
  } else if (*s == "server") {
    conf.vhost_mode = VhostMode::kServer;
  } else {
    return invalidField("vhostMode", cat("must be \"server\" or \"client\", got \"", *s, "\""));
  }

  if (s = getAbsolutePath(doc, "apiSocket", "", kMaxSocketPathLen); !s.ok()) return s.status();
  conf.api_socket = *s;
  // The socket itself goes to <socketDir>/<pod dir ≤ 21>/<ifname ≤ 15>.sock,
  // which must still fit sun_path: leave 44 bytes for that tail.
  if (s = getAbsolutePath(doc, "socketDir", kDefaultSocketDir, kMaxSocketPathLen - 44); !s.ok()) return s.status();
  conf.socket_dir = *s;
  if (s = getAbsolutePath(doc, "dataDir", kDefaultDataDir, 2048); !s.ok()) return s.status();
  conf.data_dir = *s;
  if (s = getAbsolutePath(doc, "logFile", "", 4096); !s.ok()) return s.status();
  conf.log_file = *s;

  absl::StatusOr<std::optional<bool>> flag = getBoolean(doc, "perPodSockets");
  if (!flag.ok()) return flag.status();
  conf.per_pod_sockets = flag->value_or(true);
  if (flag = getBoolean(doc, "sourceValidation"); !flag.ok()) return flag.status();
  conf.source_validation = flag->value_or(true);
  if (flag = getBoolean(doc, "allowPodRoutedPrefixes"); !flag.ok()) return flag.status();
  conf.allow_pod_routed_prefixes = flag->value_or(false);
  if (absl::Status st = parseRoutedPrefixes(doc, conf); !st.ok()) return st;
  if (s = getString(doc, "socketVolume", false); !s.ok()) return s.status();
  if (!s->empty()) {
    if (absl::Status v = validateVolumeName(*s); !v.ok()) return invalidField("socketVolume", sv(v.message()));
    conf.socket_volume = *s;
  }
  // The pod's socket, <podSocketDir>/<ifname ≤ 15>.sock, must fit sun_path
  // like sluiced's: the same 44 bytes are left for the tail.
  if (s = getAbsolutePath(doc, "podSocketDir", kDefaultPodSocketDir, kMaxSocketPathLen - 44); !s.ok()) {
    return s.status();
  }
  std::optional<std::string> pod_dir = normaliseAbsolutePath(*s);
  if (!pod_dir || *pod_dir == "/") return invalidField("podSocketDir", "must be an absolute path below / without \"..\"");
  conf.pod_socket_dir = *pod_dir;

  // uid_t's largest value, (uid_t)-1, means "unchanged" to chown: not a group.
  absl::StatusOr<std::optional<int64_t>> n = getInteger(doc, "socketGroup", 0, 4294967294LL);
  if (!n.ok()) return n.status();
  if (*n) conf.socket_group = static_cast<uint32_t>(**n);

  if (n = getInteger(doc, "mtu", kMinMtu, kMaxMtu); !n.ok()) return n.status();
  if (*n) conf.mtu = static_cast<uint32_t>(**n);
  if (n = getInteger(doc, "vlan", 0, kMaxVlan); !n.ok()) return n.status();
  if (*n) conf.vlan = static_cast<uint16_t>(**n);
  if (n = getInteger(doc, "queues", 1, kMaxQueues); !n.ok()) return n.status();
  if (*n) conf.queues = static_cast<uint32_t>(**n);
  if (n = getInteger(doc, "timeoutMs", 1, kMaxTimeoutMs); !n.ok()) return n.status();
  if (*n) conf.timeout_ms = static_cast<uint32_t>(**n);

  if (auto it = doc.find("ipam"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return invalidField("ipam", "must be an object");
    absl::StatusOr<std::string> type = getString(*it, "type", false);
    if (!type.ok() || type->empty()) return invalidField("ipam.type", "is required and must be a string");
    if (!isSafeName(*type)) return invalidField("ipam.type", "must be a plugin name, not a path");
    conf.ipam = IpamConfig{*type};
  }

  if (s = getString(doc, "deviceID", false); !s.ok()) return s.status();
  conf.device_id = *s;
  if (absl::Status st = parseRuntimeConfig(doc, conf); !st.ok()) return st;
  // Multus passes a deviceID for any network backed by a device plugin
  // resource; only an SR-IOV attachment uses (and so checks) it.
  if (conf.interface_type == InterfaceType::kSriov && !conf.device_id.empty() && !isPciAddress(conf.device_id)) {
    return invalidField("deviceID", cat("must be a PCI address like 0000:3b:02.1, got \"", conf.device_id, "\""));
  }

  if (s = getString(doc, "sriovMode", false); !s.ok()) return s.status();
  if (s->empty() || *s == "kernel") {
    conf.sriov_mode = SriovMode::kKernel;
  } else if (*s == "dpdk") {
    conf.sriov_mode = SriovMode::kDpdk;
  } else {
    return invalidField("sriovMode", cat("must be \"kernel\" or \"dpdk\", got \"", *s, "\""));
  }
  absl::StatusOr<std::optional<bool>> onoff = getOnOff(doc, "trust");
  if (!onoff.ok()) return onoff.status();
  if (*onoff) conf.trust = **onoff;
  if (onoff = getOnOff(doc, "spoofchk"); !onoff.ok()) return onoff.status();
  if (*onoff) conf.spoof_check = **onoff;
  if (n = getInteger(doc, "vlanQoS", 0, kMaxVlanQos); !n.ok()) return n.status();
  if (*n) conf.vlan_qos = static_cast<uint8_t>(**n);
  if (s = getString(doc, "vlanProto", false); !s.ok()) return s.status();
  if (absl::EqualsIgnoreCase(*s, "802.1ad")) {
    conf.vlan_proto = VlanProto::k8021AD;
  } else if (!s->empty() && !absl::EqualsIgnoreCase(*s, "802.1Q")) {
    return invalidField("vlanProto", cat("must be \"802.1Q\" or \"802.1ad\", got \"", *s, "\""));
  }
  if (conf.vlan == 0 && (conf.vlan_qos != 0 || conf.vlan_proto != VlanProto::k8021Q)) {
    return invalidField(conf.vlan_qos != 0 ? "vlanQoS" : "vlanProto", "needs a \"vlan\"");
  }
  if (s = getString(doc, "link_state", false); !s.ok()) return s.status();
  if (*s == "auto") {
    conf.link_state = VfLinkState::kAuto;
  } else if (*s == "enable") {
    conf.link_state = VfLinkState::kEnable;
  } else if (*s == "disable") {
    conf.link_state = VfLinkState::kDisable;
  } else if (!s->empty()) {
    return invalidField("link_state", cat("must be \"auto\", \"enable\" or \"disable\", got \"", *s, "\""));
  }
  if (n = getInteger(doc, "min_tx_rate", 0, kMaxTxRate); !n.ok()) return n.status();
  if (*n) conf.min_tx_rate = static_cast<uint32_t>(**n);
  if (n = getInteger(doc, "max_tx_rate", 0, kMaxTxRate); !n.ok()) return n.status();
  if (*n) conf.max_tx_rate = static_cast<uint32_t>(**n);
  if (conf.max_tx_rate != 0 && conf.min_tx_rate > conf.max_tx_rate) {
    return invalidField("min_tx_rate", cat("is above max_tx_rate (", conf.min_tx_rate, " > ", conf.max_tx_rate, ")"));
  }
  if (conf.interface_type == InterfaceType::kVhostUser) {
    for (std::string_view key : {"sriovMode", "trust", "spoofchk", "vlanQoS", "vlanProto", "link_state",
                                 "min_tx_rate", "max_tx_rate"}) {
      if (doc.contains(key)) return invalidField(key, "applies to interfaceType \"sriov\" only");
    }
  } else {
    for (std::string_view key :
         {"perPodSockets", "socketVolume", "podSocketDir", "socketGroup", "sourceValidation", "queues",
          "allowPodRoutedPrefixes"}) {
      if (doc.contains(key)) return invalidField(key, "applies to interfaceType \"vhost-user\" only");
    }
    // sluiced routes only to its own ports, not to a VF.
    if (!conf.routed_prefixes.empty()) return invalidField("routedPrefixes", "applies to interfaceType \"vhost-user\" only");
  }

  if (auto it = doc.find("prevResult"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return invalidField("prevResult", "must be an object");
    conf.prev_result = *it;
  }
  if (absl::Status st = parseValidAttachments(doc, conf); !st.ok()) return st;

  static const std::set<std::string, std::less<>> kKnown = {
      "cniVersion", "name", "type", "interfaceType", "vhostMode", "apiSocket", "socketDir",
      "dataDir", "logFile", "mtu", "vlan", "timeoutMs", "ipam", "deviceID", "runtimeConfig",
      "prevResult", "cni.dev/valid-attachments", "sriovMode", "trust", "spoofchk", "perPodSockets",
      "socketVolume", "podSocketDir", "socketGroup", "vlanQoS", "vlanProto", "link_state", "min_tx_rate",
      "max_tx_rate", "sourceValidation", "routedPrefixes", "queues", "allowPodRoutedPrefixes"};
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    if (!kKnown.contains(key) && !kKnownIgnored.contains(key)) conf.unknown_fields.push_back(key);
  }
  return conf;
}

}  // namespace sluice::cni
