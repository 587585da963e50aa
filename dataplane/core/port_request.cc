#include "dataplane/core/port_request.h"

#include <absl/strings/str_cat.h>
#include <sys/un.h>

#include <cstdint>

#include "common/cidr_overlap.h"
#include "common/socket_name.h"

namespace sluice {
namespace {

absl::Status invalid(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

// Letters, digits, '_', '.', '-', not starting with '.' (so never "." or ".."
// or a hidden file): what the CNI spec allows in a container id, and safe as a
// single path component.
absl::Status checkPathComponent(const std::string& field, const std::string& value, size_t max_len) {
  if (value.empty()) return invalid(field, "must not be empty");
  if (value.size() > max_len) return invalid(field, absl::StrCat("longer than ", max_len, " characters"));
  if (value[0] == '.' || value[0] == '-') return invalid(field, "must not start with '.' or '-'");
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    if (!ok) return invalid(field, "may hold only letters, digits, '_', '.' and '-'");
  }
  return absl::OkStatus();
}

// Exactly Linux's dev_valid_name (net/core/dev.c), so that every name the
// runtime (and sluice-cni) accepts as CNI_IFNAME is accepted here too, and
// DEL of such an attachment can succeed: 1..15 bytes (IFNAMSIZ is 16 with the
// terminating NUL), not "." or "..", no '/', ':', NUL or whitespace as the
// kernel's isspace() counts it (\t \n \v \f \r, space, and 0xA0).
absl::Status checkInterfaceName(const std::string& field, const std::string& value) {
  constexpr size_t kMaxInterfaceName = 15;
  if (value.empty()) return invalid(field, "must not be empty");
  if (value.size() > kMaxInterfaceName)
    return invalid(field, absl::StrCat("longer than ", kMaxInterfaceName, " bytes"));
  if (value == "." || value == "..") return invalid(field, "must not be '.' or '..'");
  for (char c : value) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '/' || b == ':' || b == '\0' || b == ' ' || (b >= '\t' && b <= '\r') || b == 0xA0)
      return invalid(field, "must not hold '/', ':', NUL or whitespace");
  }
  return absl::OkStatus();
}

// 64-bit FNV-1a of the whole container id: two ids sharing their first 12
// characters still get different socket names.
uint64_t containerIdHash(const std::string& id) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;  // FNV-1a 64-bit prime
  }
  return h;
}

// Characters of the container id shown in a socket name: what docker and
// crictl print as a short id.
constexpr size_t kShortIdLen = 12;

// Kubernetes names: DNS-1123 labels/subdomains (lower case, digits, '-', '.').
absl::Status checkKubernetesName(const std::string& field, const std::string& value) {
  if (value.size() > 253) return invalid(field, "longer than 253 characters");
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return invalid(field, "is not a Kubernetes name (lower case, digits, '-', '.')");
  }
  return absl::OkStatus();
}

// The request's routed prefixes into `req` (parsePortRequest says what is refused).
absl::Status parseRoutedPrefixes(const std::vector<std::string>& texts, const Ipv4Cidr& pod_cidr,
                                 const std::optional<Ipv6PodCidr>& v6, PortRequest& req) {
  if (texts.size() > kMaxRoutedPrefixes)
    return invalid("routed_prefixes", absl::StrCat(texts.size(), " given; at most ", kMaxRoutedPrefixes, " per port"));
  for (const std::string& text : texts) {
    if (auto c = Ipv4Cidr::parse(text)) {
      if (cidrsOverlap(*c, pod_cidr))
        return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", c->toString(),
                                                          " overlaps this node's pod CIDR ", pod_cidr.toString()));
      for (const Ipv4Cidr& o : req.routed_prefixes)
        if (cidrsOverlap(*c, o))
          return invalid("routed_prefixes", absl::StrCat(c->toString(), " overlaps ", o.toString()));
      req.routed_prefixes.push_back(*c);
    } else if (auto c6 = Ipv6Cidr::parse(text)) {
      if (v6 && cidrsOverlap(*c6, v6->cidr))
        return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", c6->toString(),
                                                          " overlaps this node's IPv6 pod CIDR ", v6->cidr.toString()));
      if (v6 && c6->contains(v6->gateway))
        return absl::FailedPreconditionError(
            absl::StrCat("routed_prefixes: ", c6->toString(), " holds the gateway ", v6->gateway.toString()));
      for (const Ipv6Cidr& o : req.routed_prefixes_v6)
        if (cidrsOverlap(*c6, o))
          return invalid("routed_prefixes", absl::StrCat(c6->toString(), " overlaps ", o.toString()));
      req.routed_prefixes_v6.push_back(*c6);
    } else {
      return invalid("routed_prefixes",
                     absl::StrCat("'", text, "' is not an IPv4 or IPv6 CIDR with host bits zero (like 10.100.0.0/16)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool PortRequest::sameParameters(const PortRequest& o) const {
  return attachment == o.attachment && pod_namespace == o.pod_namespace && pod_name == o.pod_name &&
         ip == o.ip && ipv6 == o.ipv6 && mac == o.mac && kind == o.kind && vhost_mode == o.vhost_mode &&
         socket_subdir == o.socket_subdir && devargs == o.devargs && socket_group == o.socket_group && mtu == o.mtu &&
         source_validation == o.source_validation && routed_prefixes == o.routed_prefixes &&
         routed_prefixes_v6 == o.routed_prefixes_v6 && pmd == o.pmd && queues == o.queues;
}

absl::Status validateAttachment(const AttachmentId& id) {
  if (absl::Status s = checkPathComponent("attachment.container_id", id.container_id, 128); !s.ok()) return s;
  return checkInterfaceName("attachment.ifname", id.ifname);
}

namespace {

// The request's IPv4 and IPv6 addresses (at least one), each a pod's of
// this node.
absl::Status parseAddresses(const RawPortRequest& raw, const Ipv4Cidr& pod_cidr, Ipv4Address gateway,
                            const std::optional<Ipv6PodCidr>& v6, PortRequest& req) {
  if (raw.ip.empty() && raw.ipv6.empty()) return invalid("ip", "required (or ipv6 for an IPv6-only attachment)");
  if (!raw.ip.empty()) {
    auto ip = Ipv4Address::parse(raw.ip);
    if (!ip) return invalid("ip", absl::StrCat("'", raw.ip, "' is not an IPv4 address"));
    if (!pod_cidr.contains(*ip))
      return absl::FailedPreconditionError(
          absl::StrCat("ip: ", ip->toString(), " is outside this node's pod CIDR ", pod_cidr.toString()));
    if (*ip == pod_cidr.network || *ip == pod_cidr.broadcast() || *ip == gateway || ip->value == 0)
      return absl::FailedPreconditionError(
          absl::StrCat("ip: ", ip->toString(), " is the network, broadcast or gateway address"));
    req.ip = *ip;
  }
  if (!raw.ipv6.empty()) {
    auto ip6 = Ipv6Address::parse(raw.ipv6);
    if (!ip6) return invalid("ipv6", absl::StrCat("'", raw.ipv6, "' is not an IPv6 address (no prefix length)"));
    if (!v6)
      return absl::FailedPreconditionError(
          absl::StrCat("ipv6: this node serves no IPv6 (sluiced's pod-cidr-v6 is not set); ", ip6->toString(),
                       " cannot be attached"));
    if (!v6->cidr.contains(*ip6))
      return absl::FailedPreconditionError(absl::StrCat("ipv6: ", ip6->toString(),
                                                        " is outside this node's IPv6 pod CIDR ", v6->cidr.toString()));
    if (*ip6 == v6->cidr.network || *ip6 == v6->gateway)
      return absl::FailedPreconditionError(
          absl::StrCat("ipv6: ", ip6->toString(), " is the network or gateway address"));
    req.ipv6 = *ip6;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PortRequest> parsePortRequest(const RawPortRequest& raw, const Ipv4Cidr& pod_cidr,
                                             Ipv4Address gateway, const VdevPolicy& vdev,
                                             const std::optional<Ipv6PodCidr>& v6, uint32_t default_mtu) {
  PortRequest req;
  req.attachment = {raw.container_id, raw.ifname};
  if (absl::Status s = validateAttachment(req.attachment); !s.ok()) return s;
  if (absl::Status s = checkKubernetesName("pod_namespace", raw.pod_namespace); !s.ok()) return s;
  if (absl::Status s = checkKubernetesName("pod_name", raw.pod_name); !s.ok()) return s;
  req.pod_namespace = raw.pod_namespace;
  req.pod_name = raw.pod_name;

  if (absl::Status s = parseAddresses(raw, pod_cidr, gateway, v6, req); !s.ok()) return s;

  if (raw.mtu != 0 && (raw.mtu < kMinPortMtu || raw.mtu > kMaxPortMtu))
    return invalid("mtu", absl::StrCat(raw.mtu, " is not in ", kMinPortMtu, "..", kMaxPortMtu,
                                       " (0: the node's default)"));
  req.mtu = raw.mtu != 0 ? raw.mtu : default_mtu;
  if (req.ipv6 && req.mtu < kMinIpv6PortMtu)
    return invalid("mtu", absl::StrCat(req.mtu, " is below IPv6's minimum link MTU ", kMinIpv6PortMtu,
                                       ", and the port carries IPv6 (", req.ipv6->toString(), ")"));

  if (raw.mac.empty()) {
    req.mac = req.hasIpv4() ? MacAddress::fromIpv4(req.ip) : MacAddress::fromIpv6(*req.ipv6);
  } else {
    auto mac = MacAddress::parse(raw.mac);
    if (!mac) return invalid("mac", absl::StrCat("'", raw.mac, "' is not a MAC like 02:00:00:00:00:01"));
    if (mac->isMulticast() || mac->isZero()) return invalid("mac", "must be a non-zero unicast address");
    req.mac = *mac;
  }

  req.kind = raw.kind;
  req.vhost_mode = raw.vhost_mode;
  req.source_validation = raw.source_validation;
  req.pmd = raw.pmd;
  if (raw.queues) {
    if (raw.kind != PortKind::kVhostUser) return invalid("queues", "only for vhost-user ports");
    if (*raw.queues == 0) return invalid("queues", "must be at least 1 (unset: 1)");
    req.queues = *raw.queues;
  }
  if (absl::Status s = parseRoutedPrefixes(raw.routed_prefixes, pod_cidr, v6, req); !s.ok()) return s;
  if (raw.kind == PortKind::kDpdkVdev) {
    if (absl::Status s = validateVdevDevargs(raw.devargs, vdev); !s.ok()) return s;
    req.devargs = raw.devargs;
    if (!raw.socket_subdir.empty()) return invalid("socket_subdir", "not for DPDK vdev ports (they have no socket)");
  } else if (!raw.devargs.empty()) {
    return invalid("devargs", "only for DPDK vdev ports");
  }
  if (!raw.socket_subdir.empty()) {
    if (absl::Status s = checkPathComponent("socket_subdir", raw.socket_subdir, 64); !s.ok()) return s;
    req.socket_subdir = raw.socket_subdir;
  }
  if (raw.socket_group) {
    // Only a server-mode vhost-user port has a socket sluiced makes.
    if (raw.kind != PortKind::kVhostUser || raw.vhost_mode != VhostMode::kServer)
      return invalid("socket_group", "only for server-mode vhost-user ports (sluiced makes no other socket)");
    // (gid_t)-1 means "leave the group" to chown: not a group.
    if (*raw.socket_group == static_cast<uint32_t>(-1)) return invalid("socket_group", "4294967295 is not a group");
    req.socket_group = raw.socket_group;
  }
  return req;
}

absl::StatusOr<std::string> vhostSocketPath(const std::string& socket_dir, const PortRequest& req) {
  const std::string file = absl::StrCat(ifnameFileComponent(req.attachment.ifname), ".sock");
  std::string path =
      req.socket_subdir.empty()
          ? absl::StrCat(socket_dir, "/", req.attachment.container_id.substr(0, kShortIdLen), "-",
                         absl::Hex(containerIdHash(req.attachment.container_id), absl::kZeroPad16), "-", file)
          : absl::StrCat(socket_dir, "/", req.socket_subdir, "/", file);
  if (path.size() >= sizeof(sockaddr_un::sun_path))
    return invalid("socket_subdir",
                   absl::StrCat("socket path ", path, " exceeds the ", sizeof(sockaddr_un::sun_path) - 1,
                                "-byte unix socket limit"));
  return path;
}

bool vhostSocketPathMatches(const std::string& socket_dir, const PortRequest& req, const std::string& recorded) {
  if (auto path = vhostSocketPath(socket_dir, req); path.ok() && *path == recorded) return true;
  // What sluiced named a socket without a subdir before the hash was added
  // (its interface names were all plain, so they were used unescaped).
  const std::string& ifname = req.attachment.ifname;
  return req.socket_subdir.empty() && ifnameFileComponent(ifname) == ifname &&
         recorded == absl::StrCat(socket_dir, "/", req.attachment.container_id.substr(0, kShortIdLen), "-", ifname,
                                  ".sock");
}

absl::Status checkPortAllowed(const PortRequest& req, const PortLimits& limits) {
  if (req.kind == PortKind::kSriovVf)
    return absl::UnimplementedError("type: SR-IOV VF ports are not supported by this sluiced yet");
  if (req.kind == PortKind::kDpdkVdev && !limits.allow_vdev_ports)
    return absl::FailedPreconditionError("type: DPDK vdev ports need sluiced's allow-vdev-ports (benchmarks, tests)");
  if (req.pmd && *req.pmd >= limits.pmds)
    return absl::InvalidArgumentError(absl::StrCat("pmd: there is no PMD ", *req.pmd, " (this sluiced runs ",
                                                   limits.pmds, ", 0..", limits.pmds - 1, ")"));
  if (req.queues > limits.max_queues_per_port)
    return absl::InvalidArgumentError(absl::StrCat("queues: ", req.queues, " is more than this node allows (",
                                                   "max-queues-per-port ", limits.max_queues_per_port, ")"));
  return absl::OkStatus();
}

absl::Status validateNetnsPath(const std::string& netns) {
  if (!netns.empty() && (netns[0] != '/' || netns.size() >= 4096 || netns.find('\0') != std::string::npos))
    return absl::InvalidArgumentError("netns: must be an absolute path");
  return absl::OkStatus();
}

}  // namespace sluice
