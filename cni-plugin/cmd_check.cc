// CHECK: the attachment described by prevResult still exists as described.
// Consults prevResult for our interface (name = CNI_IFNAME) and its IPv4
// and IPv6 addresses, asks the IPAM delegate to CHECK its reservation (spec:
// delegates are checked too), then requires sluiced's port for the
// attachment to carry the same addresses (none of a family the result has
// none of), MAC and (1.1.0) socket path.
#include <absl/strings/str_join.h>

#include <algorithm>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/cni_result.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/sriov_netdev.h"
#include "common/net_address.h"

namespace sluice::cni {
namespace {

absl::Status mismatch(std::string_view msg) { return cniError(ErrorCode::kCheckFailed, msg); }

}  // namespace

absl::Status runCheck(CommandContext& c) {
  const CniEnv& env = c.env;
  if (!c.conf.prev_result) {
    return cniError(ErrorCode::kInvalidConfig, "network config: \"prevResult\" is required for CHECK");
  }
  absl::StatusOr<Result> prev = parseResult(*c.conf.prev_result, "prevResult");
  if (!prev.ok()) return prev.status();
  std::optional<size_t> index = prev->findInterface(env.ifname, env.netns);
  if (!index) return mismatch(cat("prevResult has no interface \"", env.ifname, "\""));
  const nlohmann::json& iface = prev->interfaces[*index];
  const AttachmentAddresses expected = prev->addressesForInterface(*index);
  if (!expected.ipv4 && !expected.ipv6) return mismatch(cat("prevResult has no address for \"", env.ifname, "\""));

  if (c.ipam != nullptr) {
    if (absl::Status s = c.ipam->check(c.stdin_data); !s.ok()) return s;
  }

  absl::StatusOr<std::vector<v1::Port>> ports = c.dataplane.listPorts();
  if (!ports.ok()) return ports.status();
  const v1::Port* port = nullptr;
  for (const v1::Port& p : *ports) {
    if (p.attachment().container_id() == env.container_id && p.attachment().ifname() == env.ifname) port = &p;
  }
  if (port == nullptr) return mismatch("sluiced has no port for this attachment");
  const std::string want_ipv4 = expected.ipv4 ? expected.ipv4->address.toString() : std::string();
  if (port->ip() != want_ipv4) {
    return mismatch(cat("port IPv4 is \"", port->ip(), "\", prevResult says \"", want_ipv4, "\""));
  }
  // Compared as addresses: sluiced writes RFC 5952 text, an IPAM plugin may not.
  std::optional<Ipv6Address> have_ipv6 = Ipv6Address::parse(port->ipv6());
  std::optional<Ipv6Address> want_ipv6 = expected.ipv6 ? std::optional(expected.ipv6->address) : std::nullopt;
  if (have_ipv6 != want_ipv6) {
    return mismatch(cat("port IPv6 is \"", port->ipv6(), "\", prevResult says \"",
                        want_ipv6 ? want_ipv6->toString() : std::string(), "\""));
  }
  if (auto mac = iface.find("mac"); mac != iface.end()) {
    std::optional<MacAddress> want = MacAddress::parse(mac->get<std::string>());
    std::optional<MacAddress> have = MacAddress::parse(port->mac());
    if (!want || !have || *want != *have) {
      return mismatch(cat("port MAC is ", port->mac(), ", prevResult says ", mac->get<std::string>()));
    }
  }
  if (auto pci = iface.find("pciID"); pci != iface.end() && pci->get<std::string>() != port->pci_id()) {
    return mismatch(cat("port VF is ", port->pci_id(), ", prevResult says ", pci->get<std::string>()));
  }
  // The prefixes routed to the port are the config's (sluiced's text is the
  // normalised form the config's was brought to).
  std::vector<std::string> have_prefixes(port->routed_prefixes().begin(), port->routed_prefixes().end());
  std::vector<std::string> want_prefixes = c.conf.routed_prefixes;
  std::sort(have_prefixes.begin(), have_prefixes.end());
  std::sort(want_prefixes.begin(), want_prefixes.end());
  if (have_prefixes != want_prefixes) {
    return mismatch(cat("port routed prefixes are [", absl::StrJoin(have_prefixes, ","), "], the config says [",
                        absl::StrJoin(want_prefixes, ","), "]"));
  }
  // SR-IOV kernel mode: the VF's netdev is in the pod's netns, with the
  // port's MAC, and up.
  if (port->type() == v1::PORT_TYPE_SRIOV_VF && port->sriov_mode() == v1::SRIOV_MODE_KERNEL) {
    std::optional<MacAddress> mac = MacAddress::parse(port->mac());
    absl::Status s = mac ? checkInPod(env.netns, env.ifname, *mac) : absl::InternalError("port MAC unreadable");
    if (!s.ok()) return mismatch(cat("VF netdev ", env.ifname, " in ", env.netns, ": ", sv(s.message())));
  }
  // The result gave the socket as the pod sees it: with perPodSockets the
  // path in the pod's emptyDir that ADD recorded, else sluiced's own.
  std::string socket = port->socket_path();
  if (std::optional<AttachmentRecord> r = c.store.get(env.container_id, env.ifname); r && !r->pod_socket_path.empty()) {
    socket = r->pod_socket_path;
  }
  if (auto sock = iface.find("socketPath"); sock != iface.end() && sock->get<std::string>() != socket) {
    return mismatch(cat("port socket is ", socket, ", prevResult says ", sock->get<std::string>()));
  }
  return absl::OkStatus();
}

}  // namespace sluice::cni
