#include "dataplane/control/port_request.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <sys/un.h>

#include <map>
#include <set>
#include <vector>

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

// Kubernetes names: DNS-1123 labels/subdomains (lower case, digits, '-', '.').
absl::Status checkKubernetesName(const std::string& field, const std::string& value) {
  if (value.size() > 253) return invalid(field, "longer than 253 characters");
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return invalid(field, "is not a Kubernetes name (lower case, digits, '-', '.')");
  }
  return absl::OkStatus();
}

}  // namespace

bool PortRequest::sameParameters(const PortRequest& o) const {
  return attachment == o.attachment && pod_namespace == o.pod_namespace && pod_name == o.pod_name &&
         ip == o.ip && mac == o.mac && kind == o.kind && vhost_mode == o.vhost_mode &&
         socket_subdir == o.socket_subdir && devargs == o.devargs;
}

absl::Status validateVdevDevargs(const std::string& devargs) {
  // Which keys each driver may get: only what makes a pod stand-in (read a
  // pcap file, sink packets); nothing that writes files or opens interfaces.
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"net_pcap", {"rx_pcap", "infinite_rx"}},
      {"net_null", {"no-rx", "size", "copy"}},
  };
  if (devargs.empty()) return invalid("devargs", "must not be empty for a DPDK vdev port");
  if (devargs.size() > 512) return invalid("devargs", "longer than 512 characters");
  for (char c : devargs) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == ',' || c == '/' || c == ':' || c == '=' || c == '-';
    if (!ok) return invalid("devargs", "may hold only letters, digits and _.,/:=-");
  }
  const std::vector<std::string> parts = absl::StrSplit(devargs, ',');
  auto driver = kAllowed.find(parts[0]);
  if (driver == kAllowed.end())
    return invalid("devargs", absl::StrCat("driver '", parts[0], "' is not net_pcap or net_null"));
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == parts[i].size())
      return invalid("devargs", absl::StrCat("'", parts[i], "' is not key=value"));
    if (!driver->second.contains(parts[i].substr(0, eq)))
      return invalid("devargs", absl::StrCat(parts[0], " does not take '", parts[i].substr(0, eq), "' here"));
  }
  return absl::OkStatus();
}

absl::Status validateAttachment(const AttachmentId& id) {
  if (absl::Status s = checkPathComponent("attachment.container_id", id.container_id, 128); !s.ok()) return s;
  // IFNAMSIZ is 16 including the terminating NUL.
  return checkPathComponent("attachment.ifname", id.ifname, 15);
}

absl::StatusOr<PortRequest> parsePortRequest(const RawPortRequest& raw, const Ipv4Cidr& pod_cidr,
                                             Ipv4Address gateway) {
  PortRequest req;
  req.attachment = {raw.container_id, raw.ifname};
  if (absl::Status s = validateAttachment(req.attachment); !s.ok()) return s;
  if (absl::Status s = checkKubernetesName("pod_namespace", raw.pod_namespace); !s.ok()) return s;
  if (absl::Status s = checkKubernetesName("pod_name", raw.pod_name); !s.ok()) return s;
  req.pod_namespace = raw.pod_namespace;
  req.pod_name = raw.pod_name;

  auto ip = Ipv4Address::parse(raw.ip);
  if (!ip) return invalid("ip", absl::StrCat("'", raw.ip, "' is not an IPv4 address"));
  if (!pod_cidr.contains(*ip))
    return absl::FailedPreconditionError(
        absl::StrCat("ip: ", ip->toString(), " is outside this node's pod CIDR ", pod_cidr.toString()));
  if (*ip == pod_cidr.network || *ip == pod_cidr.broadcast() || *ip == gateway)
    return absl::FailedPreconditionError(
        absl::StrCat("ip: ", ip->toString(), " is the network, broadcast or gateway address"));
  req.ip = *ip;

  if (raw.mac.empty()) {
    req.mac = MacAddress::fromIpv4(*ip);
  } else {
    auto mac = MacAddress::parse(raw.mac);
    if (!mac) return invalid("mac", absl::StrCat("'", raw.mac, "' is not a MAC like 02:00:00:00:00:01"));
    if (mac->isMulticast() || mac->isZero()) return invalid("mac", "must be a non-zero unicast address");
    req.mac = *mac;
  }

  req.kind = raw.kind;
  req.vhost_mode = raw.vhost_mode;
  if (raw.kind == PortKind::kDpdkVdev) {
    if (absl::Status s = validateVdevDevargs(raw.devargs); !s.ok()) return s;
    req.devargs = raw.devargs;
    if (!raw.socket_subdir.empty()) return invalid("socket_subdir", "not for DPDK vdev ports (they have no socket)");
  } else if (!raw.devargs.empty()) {
    return invalid("devargs", "only for DPDK vdev ports");
  }
  if (!raw.socket_subdir.empty()) {
    if (absl::Status s = checkPathComponent("socket_subdir", raw.socket_subdir, 64); !s.ok()) return s;
    req.socket_subdir = raw.socket_subdir;
  }
  return req;
}

absl::StatusOr<std::string> vhostSocketPath(const std::string& socket_dir, const PortRequest& req) {
  std::string path =
      req.socket_subdir.empty()
          ? absl::StrCat(socket_dir, "/", req.attachment.container_id.substr(0, 12), "-",
                         req.attachment.ifname, ".sock")
          : absl::StrCat(socket_dir, "/", req.socket_subdir, "/", req.attachment.ifname, ".sock");
  if (path.size() >= sizeof(sockaddr_un::sun_path))
    return invalid("socket_subdir",
                   absl::StrCat("socket path ", path, " exceeds the ", sizeof(sockaddr_un::sun_path) - 1,
                                "-byte unix socket limit"));
  return path;
}

}  // namespace sluice
