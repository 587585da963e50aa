// ADD: IPAM address → attachment record → per-pod socket directory (or,
// with perPodSockets, the link to the pod's emptyDir) → sluiced port →
// socket group → device-info file → result. All or nothing: each step pushes
// its undo onto an UndoStack that is dismissed only once the result is built.
// One exception, for the address: when the port's undo cannot confirm that
// sluiced has no port (it timed out, or sluiced went away), the address is
// kept and the record stays, marked pending-delete, for a later invocation
// to finish (attachment_teardown.h): another pod given that address while
// sluiced may still route it to this port would get this pod's traffic.
#include <nlohmann/json.hpp>

#include "cni-plugin/attachment_teardown.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/cni_result.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/device_info.h"
#include "cni-plugin/file_util.h"
#include "cni-plugin/node_policy.h"
#include "cni-plugin/pod_paths.h"
#include "cni-plugin/pod_socket_volume.h"
#include "cni-plugin/undo_stack.h"
#include "cni-plugin/sriov_netdev.h"
#include "cni-plugin/text.h"
#include "absl/strings/ascii.h"
#include "common/net_address.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

absl::Status invalid(std::string_view msg) { return cniError(ErrorCode::kInvalidConfig, msg); }

// perPodSockets: the pod's emptyDir and the socket's path inside the pod, or
// no volume when the runtime names no pod (plain cnitool, no kubelet).
struct PodSocketPlace {
  std::optional<ConfinedPath> volume;
  std::string pod_path;
};

absl::StatusOr<PodSocketPlace> podSocketPlace(const CommandContext& c) {
  const NetConf& conf = c.conf;
  std::optional<std::string> uid = c.env.arg(kPodUidArg);
  if (!uid) {
    if (absl::Status s = checkSharedSocketDir(c.node, cat("\"perPodSockets\" needs ", kPodUidArg,
                                                          " in CNI_ARGS and the runtime passed none"));
        !s.ok()) {
      return s;
    }
    c.log.info(cat("perPodSockets: no ", kPodUidArg, " in CNI_ARGS; the socket goes below socketDir"));
    return PodSocketPlace{};
  }
  if (absl::Status s = validatePodUid(*uid); !s.ok()) {
    return cniError(ErrorCode::kInvalidEnvironment, cat("CNI_ARGS: ", sv(s.message())));
  }
  absl::StatusOr<ConfinedPath> volume = emptyDirHostPath(c.node.kubelet_dir, *uid, conf.socket_volume);
  if (!volume.ok()) return invalid(cat("node config \"kubeletDir\": ", sv(volume.status().message())));
  // The kubelet sets a pod's volumes up before its sandbox, so by ADD the
  // emptyDir exists if the pod declares it. Every directory below the
  // kubelet's root is opened without following a symlink.
  if (absl::Status s = checkDirectory(*volume); !s.ok()) {
    if (s.code() == absl::StatusCode::kNotFound) {
      return invalid(cat("network config: \"socketVolume\": the pod declares no emptyDir volume \"",
                         conf.socket_volume, "\" (", volume->str(),
                         " does not exist); declare one, or set \"perPodSockets\" false"));
    }
    return withPrefix(s, "socketVolume");
  }
  absl::StatusOr<std::string> pod_path = podSideSocketPath(conf.pod_socket_dir, c.env.ifname);
  if (!pod_path.ok()) return invalid(cat("network config: \"podSocketDir\": ", sv(pod_path.status().message())));
  return PodSocketPlace{std::move(*volume), std::move(*pod_path)};
}

// Owner group and mode of a pod's directory below the shared socketDir
// (the owner is root, who made it). The pod's identity is unknown to a CNI
// plugin (the runtime passes no uid), so the directory is root's own, 0700:
// a root application reaches it, no non-root pod can enter it. A network
// with a socketGroup is for a non-root application of that group: in server
// mode it only needs to reach sluiced's socket (0750: the group may search,
// only root writes, so nothing can be put in place of the socket); in client
// mode it makes its socket itself, so the group may write (02770, inherited
// by what it makes): the pods of one socketGroup on a shared directory trust
// one another, which is what perPodSockets avoids.
struct SharedDirAccess {
  uint32_t gid;
  unsigned mode;
};
SharedDirAccess sharedSocketDirAccess(const NetConf& conf) {
  if (!conf.socket_group) return {0, 0700};
  return {*conf.socket_group, conf.vhost_mode == VhostMode::kServer ? 0750u : 02770u};
}

// sluiced refuses an address family its node has no pod CIDR for (gRPC
// FAILED_PRECONDITION naming the family's field). Said in the user's terms:
// which address, which family, and which setting the node lacks. nullopt
// for any other failure.
std::optional<absl::Status> familyRefused(const absl::Status& s, const v1::AddPortRequest& req) {
  if (s.code() != absl::StatusCode::kFailedPrecondition) return std::nullopt;
  const std::string said = absl::AsciiStrToLower(s.message());
  if (!req.ipv6().empty() && (said.find("ipv6") != std::string::npos || said.find("cidr-v6") != std::string::npos)) {
    return invalid(cat("this node's sluiced does not take IPv6 (pod address ", req.ipv6(),
                       "): it has no IPv6 pod CIDR; set sluiced's \"pod-cidr-v6\" (chart: network.podCIDRv6) or "
                       "give this network's IPAM no IPv6 range (", sv(s.message()), ")"));
  }
  if (!req.ip().empty() && said.find("pod-cidr") != std::string::npos) {
    return invalid(cat("this node's sluiced does not take IPv4 (pod address ", req.ip(),
                       "): it has no IPv4 pod CIDR; set sluiced's \"pod-cidr\" (chart: network.podCIDR) or "
                       "give this network's IPAM no IPv4 range (", sv(s.message()), ")"));
  }
  return std::nullopt;
}

// The device-info file's "ips": the attachment's addresses without prefix,
// as Multus's network-status lists them (the NPWG device-info spec has no
// address field; the pod's application, which owns the interface, reads
// them here like "mtu").
json deviceInfoIps(const std::string& ipv4, const std::string& ipv6) {
  json ips = json::array();
  if (!ipv4.empty()) ips.push_back(ipv4);
  if (!ipv6.empty()) ips.push_back(ipv6);
  return ips;
}

// runtimeConfig "ips" as an IPAM result: one "ips" entry each, no routes.
Result runtimeIpsResult(const std::vector<std::string>& ips) {
  Result r;
  for (const std::string& ip : ips) r.ips.push_back(json{{"address", ip}});
  return r;
}

}  // namespace

absl::StatusOr<json> runAdd(CommandContext& c) {
  const NetConf& conf = c.conf;
  const CniEnv& env = c.env;
  if (c.ipam == nullptr && conf.runtime_ips.empty()) {
    return invalid("network config: \"ipam\" or runtimeConfig \"ips\" is required (sluiced needs the pod's IPv4 "
                   "or IPv6 address, or both)");
  }
  if (conf.interface_type == InterfaceType::kVhostUser && conf.vlan != 0) {
    return invalid("network config: \"vlan\" applies to interfaceType \"sriov\" only");
  }
  if (absl::Status s = checkVfCaps(conf, c.node); !s.ok()) return s;
  if (absl::Status s = checkRoutedPrefixes(conf, c.node); !s.ok()) return s;
  if (absl::Status s = checkSourceValidation(conf, c.node); !s.ok()) return s;
  if (conf.interface_type == InterfaceType::kVhostUser && !conf.per_pod_sockets) {
    if (absl::Status s = checkSharedSocketDir(c.node, "\"perPodSockets\" is false"); !s.ok()) return s;
  }
  // An earlier ADD of this very attachment whose port's fate was unknown:
  // its teardown must finish before the address and the id are used again.
  if (std::optional<AttachmentRecord> earlier = c.store.get(env.container_id, env.ifname);
      earlier && earlier->pending_delete) {
    TeardownResult done = teardownAttachment(c, *earlier, env.netns);
    if (!done.finished) {
      return cniError(ErrorCode::kTryAgainLater,
                      "an earlier port of this attachment is not confirmed deleted yet; try again later");
    }
  }
  // A chained plugin's output is our input: keep it and append to it (spec:
  // a plugin given prevResult returns it, with its own additions).
  Result out;
  if (conf.prev_result) {
    absl::StatusOr<Result> prev = parseResult(*conf.prev_result, "prevResult");
    if (!prev.ok()) return prev.status();
    out = std::move(*prev);
  }

  // Set when a port this ADD may have made could not be confirmed deleted:
  // the record and the address then stay (see the top of this file).
  bool port_fate_unknown = false;
  // What step 2 records (and the undo writes back as pending-delete).
  AttachmentRecord record;
  // Declared after what its undo actions refer to, so it unwinds first.
  UndoStack undo;

  // 1. Address. A delegate that reported an error allocated nothing
  // (releasing then could free the address of an earlier, still valid ADD);
  // one that was killed at the deadline, or that printed a result we reject,
  // may have, so from here on its release is armed.
  // Without an IPAM plugin the runtime's "ips" are the addresses (nothing
  // to release); with one, it reads them itself from the same stdin.
  absl::StatusOr<Result> ipam = runtimeIpsResult(conf.runtime_ips);
  if (c.ipam != nullptr) {
    absl::StatusOr<std::string> raw = c.ipam->addRaw(c.stdin_data);
    if (!raw.ok() && raw.status().code() != absl::StatusCode::kDeadlineExceeded) return raw.status();
    undo.push([&c, &port_fate_unknown] {
      if (port_fate_unknown) {
        c.log.warn("undo: address kept until sluiced confirms the port is gone");
        return;
      }
      if (absl::Status s = c.ipam->del(c.stdin_data); !s.ok()) {
        c.log.error(cat("undo: IPAM release failed: ", s.message()));
      }
    });
    if (!raw.ok()) return raw.status();
    ipam = c.ipam->parseAddResult(*raw);
    if (!ipam.ok()) return ipam.status();
  }
  const std::string ip_source = conf.ipam ? "ipam " + conf.ipam->type : std::string("runtimeConfig.ips");
  absl::StatusOr<AttachmentAddresses> addresses = ipam->attachmentAddresses(ip_source);
  if (!addresses.ok()) return addresses.status();
  const std::string ipv4_text = addresses->ipv4 ? addresses->ipv4->address.toString() : std::string();
  const std::string ipv6_text = addresses->ipv6 ? addresses->ipv6->address.toString() : std::string();

  // Where the socket lives: the pod's own emptyDir when the config asks for
  // it and the runtime says which pod this is (pod_socket_volume.h); else a
  // directory below socketDir, which such pods mount.
  std::string subdir = socketSubdir(env.container_id);
  std::optional<ConfinedPath> pod_volume;  // the pod's emptyDir on the host
  std::string pod_socket_path;             // as the pod sees it (empty: the host path)
  if (conf.interface_type == InterfaceType::kVhostUser && conf.per_pod_sockets) {
    absl::StatusOr<PodSocketPlace> place = podSocketPlace(c);
    if (!place.ok()) return place.status();
    if (place->volume) {
      pod_volume = std::move(place->volume);
      subdir = podSocketLinkName(env.container_id, env.ifname);
      pod_socket_path = std::move(place->pod_path);
    }
  }

  // 2. Record, before the port exists, so every port of ours has a record
  // that DEL, GC and the pending deletes can find.
  record = AttachmentRecord{env.container_id, env.ifname, ipv4_text, subdir, conf.device_info_file, "", "", "", 0};
  record.ipv6 = ipv6_text;
  if (pod_volume) {
    record.socket_link = pod_volume->str();
    record.pod_socket_path = pod_socket_path;
  }
  if (absl::Status s = c.store.put(record); !s.ok()) return withPrefix(s, "attachment record");
  undo.push([&c, &env, &record, &port_fate_unknown] {
    absl::Status s;
    if (port_fate_unknown) {
      AttachmentRecord pending = record;
      pending.pending_delete = true;
      s = c.store.put(pending);
    } else {
      s = c.store.remove(env.container_id, env.ifname);
    }
    if (!s.ok()) c.log.error(cat("undo: ", s.message()));
  });

  // 3. The pod's socket directory (the pod mounts it; in client mode the
  // pod's application creates its socket there, so it must exist first),
  // made only below the node's socketDirRoot.
  // With perPodSockets that directory is a link to the pod's emptyDir: the
  // pod sees it at podSocketDir, sluiced through the link by a short path.
  if (conf.interface_type == InterfaceType::kVhostUser && pod_volume) {
    const std::string target = pod_volume->str();
    absl::StatusOr<bool> made = makeSymlink(c.socket_dir->child(subdir), target);
    if (!made.ok()) return withPrefix(made.status(), "socketDir");
    if (*made) undo.push([&c, subdir, target] { removePodSocketLink(c, subdir, target); });
  } else if (conf.interface_type == InterfaceType::kVhostUser) {
    absl::StatusOr<bool> made = makeDirsBelowRoot(c.socket_dir->child(subdir));
    if (!made.ok()) return withPrefix(made.status(), "socketDir");
    // Only a directory this ADD made is this ADD's to remove.
    if (*made) undo.push([&c, &env, subdir] { removePodSocket(c, subdir, env.ifname); });
    // Every pod that mounts socketDir sees this directory, so no other pod
    // may write in it (sharedSocketDirAccess says who may).
    const SharedDirAccess access = sharedSocketDirAccess(conf);
    if (absl::Status s = setGroupAndMode(c.socket_dir->child(subdir), access.gid, access.mode, false); !s.ok()) {
      return withPrefix(s, conf.socket_group ? "socketGroup" : "socketDir");
    }
  }

  // 4. The port (for SR-IOV: a VF from sluiced's pool, programmed through
  // its PF; the deviceID, when given, names the VF).
  v1::AddPortRequest req;
  *req.mutable_attachment() = toAttachment(env.container_id, env.ifname);
  req.set_pod_namespace(env.arg("K8S_POD_NAMESPACE").value_or(""));
  req.set_pod_name(env.arg("K8S_POD_NAME").value_or(""));
  req.set_ip(ipv4_text);
  req.set_ipv6(ipv6_text);
  // The network's MTU is the port's: sluiced answers larger packets routed
  // to the pod as a router does (0: sluiced's default).
  req.set_mtu(conf.mtu.value_or(0));
  req.set_type(conf.interface_type == InterfaceType::kVhostUser ? v1::PORT_TYPE_VHOST_USER
                                                                : v1::PORT_TYPE_SRIOV_VF);
  if (conf.interface_type == InterfaceType::kSriov) {
    req.set_device_id(conf.device_id);
    req.set_vlan(conf.vlan);
    req.set_sriov_mode(conf.sriov_mode == SriovMode::kKernel ? v1::SRIOV_MODE_KERNEL : v1::SRIOV_MODE_DPDK);
    req.set_vf_trust(conf.trust);
    req.set_vf_spoof_check(conf.spoof_check);
    req.set_vlan_qos(conf.vlan_qos);
    req.set_vlan_proto(conf.vlan_proto == VlanProto::k8021AD ? v1::VLAN_PROTO_8021AD : v1::VLAN_PROTO_8021Q);
    if (conf.link_state) {
      req.set_vf_link_state(*conf.link_state == VfLinkState::kAuto     ? v1::VF_LINK_STATE_AUTO
                            : *conf.link_state == VfLinkState::kEnable ? v1::VF_LINK_STATE_ENABLE
                                                                       : v1::VF_LINK_STATE_DISABLE);
    }
    req.set_min_tx_rate(conf.min_tx_rate);
    req.set_max_tx_rate(conf.max_tx_rate);
  }
  if (conf.runtime_mac) req.set_mac(conf.runtime_mac->toString());
  req.set_vhost_mode(conf.vhost_mode == VhostMode::kServer ? v1::VHOST_MODE_SERVER : v1::VHOST_MODE_CLIENT);
  req.set_socket_subdir(subdir);
  // sluiced gives its server socket the group itself, again whenever it
  // re-creates the socket after a restart (step 4a below is for a sluiced
  // that predates the field).
  if (conf.interface_type == InterfaceType::kVhostUser && conf.vhost_mode == VhostMode::kServer &&
      conf.socket_group) {
    req.set_socket_group(*conf.socket_group);
  }
  // sluiced collects the port itself once this namespace is gone (only an
  // absolute path can be watched; anything else is the runtime's business).
  if (!env.netns.empty() && env.netns[0] == '/') req.set_netns(env.netns);
  // Only when off: unset means on, also to a sluiced that predates the field.
  if (conf.interface_type == InterfaceType::kVhostUser && !conf.source_validation) req.set_source_validation(false);
  for (const std::string& prefix : conf.routed_prefixes) req.add_routed_prefixes(prefix);
  if (conf.queues) req.set_queues(*conf.queues);
  // Asks sluiced to drop the port; notes when it could not confirm that.
  auto dropPort = [&c, &env, &port_fate_unknown] {
    absl::StatusOr<bool> del = c.dataplane.deletePort(toAttachment(env.container_id, env.ifname));
    if (del.ok() || del.status().code() == absl::StatusCode::kInvalidArgument) return;
    c.log.error(cat("undo: ", del.status().message()));
    port_fate_unknown = true;
  };
  absl::StatusOr<v1::AddPortResponse> added = c.dataplane.addPort(req);
  if (!added.ok() && added.status().code() == absl::StatusCode::kDeadlineExceeded) {
    // sluiced may still carry the request out after we stopped waiting;
    // ask it to drop the port (a no-op if it never made one).
    dropPort();
  }
  if (!added.ok()) {
    if (conf.interface_type == InterfaceType::kSriov && added.status().code() == absl::StatusCode::kUnimplemented) {
      return withPrefix(added.status(), "interfaceType \"sriov\" is not supported by this sluiced");
    }
    if (std::optional<absl::Status> refused = familyRefused(added.status(), req)) return *refused;
    return added.status();
  }
  undo.push(dropPort);
  const v1::Port& port = added->port();
  if (!added->created()) c.log.info("sluiced already had this attachment; reusing its port");
  if (!MacAddress::parse(port.mac())) {
    return cniError(ErrorCode::kInternal, cat("sluiced AddPort: port has an invalid MAC \"", port.mac(), "\""));
  }
  if (conf.interface_type == InterfaceType::kVhostUser && !isUnder(port.socket_path(), conf.socket_dir)) {
    return invalid(cat("network config: \"socketDir\" ", conf.socket_dir,
                                " does not match sluiced's --socket-dir (its socket is \"", port.socket_path(),
                                "\")"));
  }

  // 4a. Server mode: sluiced made the socket as root; a non-root application
  // of the socket's group may connect (a sluiced that knows socket_group has
  // done this already; the same group and mode again change nothing). Reached without the link (the
  // emptyDir directly, or below socketDir), never through a symlink the pod
  // may have put in its place.
  if (conf.interface_type == InterfaceType::kVhostUser && conf.vhost_mode == VhostMode::kServer &&
      conf.socket_group) {
    const ConfinedPath socket =
        (pod_volume ? *pod_volume : c.socket_dir->child(subdir)).child(socketFileName(env.ifname));
    if (absl::Status s = setGroupAndMode(socket, *conf.socket_group, 0660, true); !s.ok()) {
      return withPrefix(s, "socketGroup");
    }
  }

  // 4b. SR-IOV kernel mode: the VF's netdev into the pod's namespace, renamed,
  // addressed and up (sriov_netdev.h says why the plugin does this). The
  // record learns first how to send it home, so a DEL after a crash can.
  if (conf.interface_type == InterfaceType::kSriov && conf.sriov_mode == SriovMode::kKernel) {
    if (port.vf_netdev().empty()) {
      return cniError(ErrorCode::kInternal, cat("sluiced handed out VF ", port.pci_id(), " without a netdev"));
    }
    absl::StatusOr<HostNetdev> host = lookUpHostNetdev(port.vf_netdev());
    if (!host.ok()) return cniError(ErrorCode::kInternal, cat("VF ", port.pci_id(), ": ", sv(host.status().message())));
    record.netns = env.netns;
    record.vf_host_name = host->name;
    record.vf_host_mac = host->mac.toString();
    record.vf_host_mtu = host->mtu;
    if (absl::Status s = c.store.put(record); !s.ok()) return withPrefix(s, "attachment record");
    std::vector<std::string> skipped;
    PodNetdevConfig pod = podNetdevConfig(*ipam, env.ifname, *MacAddress::parse(port.mac()), conf.mtu, &skipped);
    for (const std::string& a : skipped) {
      c.log.warn(cat("not configured on the VF (the result has no address of its family): ", a));
    }
    absl::StatusOr<HostNetdev> moved = moveIntoPod(port.vf_netdev(), env.netns, pod);
    if (!moved.ok()) {
      return cniError(ErrorCode::kInternal, cat("VF netdev ", port.vf_netdev(), " into ", env.netns, ": ",
                                                sv(moved.status().message())));
    }
    undo.push([&c, &env, original = *moved] {
      if (absl::Status s = returnToHost(env.netns, env.ifname, original, c.log); !s.ok()) {
        c.log.error(cat("undo: ", sv(s.message())));
      }
    });
    c.log.info(cat("VF netdev ", port.vf_netdev(), " is ", env.ifname, " in ", env.netns));
  }

  // 5. Device-info for the pod's application (Multus copies it into the
  // pod's network-status annotation).
  if (c.device_info_file) {
    json info = vhostUserDeviceInfo(conf.vhost_mode, pod_socket_path.empty() ? port.socket_path() : pod_socket_path);
    // The VXLAN overlay's MTU (0: the node has none): larger packets toward
    // other nodes are dropped, so the pod's application sizes its own.
    if (port.overlay_mtu() != 0) info["mtu"] = port.overlay_mtu();
    if (conf.interface_type == InterfaceType::kSriov) {
      info = {{"type", "pci"}, {"version", "1.1.0"}, {"pci", {{"pci-address", port.pci_id()}}}};
    }
    info["ips"] = deviceInfoIps(ipv4_text, ipv6_text);
    if (absl::Status s = writeDeviceInfo(*c.device_info_file, info); !s.ok()) return withPrefix(s, "device-info");
    undo.push([&c] {
      if (absl::Status s = removeDeviceInfo(*c.device_info_file); !s.ok()) c.log.error(cat("undo: ", s.message()));
    });
  }

  // 6. Result: our interface after any earlier ones, the IPAM addresses
  // pointing at it, IPAM routes and DNS.
  // The 1.1.0 interface fields go in whatever the version: toJson() leaves
  // out what the config's version does not have.
  json iface = {{"name", env.ifname}, {"mac", port.mac()}, {"sandbox", env.netns}};
  // The socket as the pod's application finds it.
  if (!pod_socket_path.empty()) {
    iface["socketPath"] = pod_socket_path;
  } else if (!port.socket_path().empty()) {
    iface["socketPath"] = port.socket_path();
  }
  if (!port.pci_id().empty()) iface["pciID"] = port.pci_id();
  // The smaller of the configured MTU and the overlay's (if any).
  std::optional<uint32_t> mtu = conf.mtu;
  if (port.overlay_mtu() != 0 && (!mtu || *mtu > port.overlay_mtu())) mtu = port.overlay_mtu();
  if (mtu) iface["mtu"] = *mtu;
  const size_t index = out.interfaces.size();
  out.interfaces.push_back(iface);
  for (json ip : ipam->ips) {
    ip["interface"] = index;
    out.ips.push_back(std::move(ip));
  }
  for (const json& route : ipam->routes) out.routes.push_back(route);
  if (!ipam->dns.empty()) out.dns = ipam->dns;

  c.log.info(cat("added port ", port.port_no(), " ip ", ipv4_text.empty() ? "-" : ipv4_text, " ipv6 ",
                 ipv6_text.empty() ? "-" : ipv6_text, " mac ", port.mac(),
                          port.socket_path().empty() ? "" : " socket ", port.socket_path()));
  undo.dismiss();
  return out.toJson(conf.cni_version);
}

}  // namespace sluice::cni
