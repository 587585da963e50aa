// The typed network configuration sluice-cni reads from stdin: every field it
// understands is type- and range-checked (an error names the field, code 7;
// undecodable JSON is code 6; a cniVersion not in kSpecVersions code 1), and
// fields it does not know are collected for logging rather than rejected,
// because runtimes and Multus add their own. Used by the single thread of the
// sluice-cni process, and by the netconf fuzz target.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/net_address.h"

#include "absl/status/statusor.h"

namespace sluice::cni {

// A spec version this plugin speaks and what sets it apart. 0.3.0, 0.3.1
// and 0.4.0 results have the same form: each "ips" entry names its address
// family ("version": "4" | "6") and interfaces have only name, mac and
// sandbox; 1.0.0 dropped the family; 1.1.0 added the interface fields mtu,
// socketPath and pciID. Verbs: CHECK came with 0.4.0, GC and STATUS with
// 1.1.0; ADD, DEL and VERSION are in all of them.
struct SpecVersion {
  std::string_view name;
  bool ip_family_field;      // "ips" entries carry "version"
  bool interface_11_fields;  // interfaces may carry mtu, socketPath, pciID
  bool has_check;
  bool has_gc_and_status;
};

// The one list of the versions this plugin speaks, oldest first: what a
// config may name, what VERSION answers, how each result is shaped.
inline constexpr SpecVersion kSpecVersions[] = {
    {"0.3.0", true, false, false, false}, {"0.3.1", true, false, false, false},
    {"0.4.0", true, false, true, false},  {"1.0.0", false, false, true, false},
    {"1.1.0", false, true, true, true},
};
inline constexpr std::string_view kLatestVersion = kSpecVersions[std::size(kSpecVersions) - 1].name;

// The entry named `version`; nullptr when this plugin does not speak it.
const SpecVersion* findSpecVersion(std::string_view version);
bool isSupportedVersion(std::string_view version);
// The entry of a version already known to be supported (a parsed config's).
const SpecVersion& specVersion(std::string_view supported_version);
// "0.3.0, 0.3.1, ..." for messages.
std::string supportedVersionList();

inline constexpr std::string_view kPluginType = "sluice-cni";
// Unix socket paths must fit sockaddr_un.sun_path (108 bytes with NUL).
inline constexpr size_t kMaxSocketPathLen = 107;
inline constexpr std::string_view kDefaultSocketDir = "/var/run/sluice/vhost";
// perPodSockets: the emptyDir volume a pod declares for its sockets, and
// where its containers mount it (pod_socket_volume.h).
inline constexpr std::string_view kDefaultSocketVolume = "sluice-sockets";
inline constexpr std::string_view kDefaultPodSocketDir = "/var/run/sluice";
// Per-network attachment records (see attachment_store.h); under /var/lib/cni
// beside libcni's own cache.
inline constexpr std::string_view kDefaultDataDir = "/var/lib/cni/sluice";
inline constexpr uint32_t kDefaultTimeoutMs = 5000;

enum class InterfaceType { kVhostUser, kSriov };
// Who owns the vhost-user socket, seen from sluiced: kServer = sluiced
// creates it and the pod connects; kClient = the pod's app creates it and
// sluiced connects. kClient is the default because sluiced reconnects after
// it restarts, while DPDK's virtio_user as a client never reconnects: in
// server mode a restart or upgrade of sluiced cuts such pods off.
enum class VhostMode { kServer, kClient };
// SR-IOV: kKernel = the VF's netdev goes into the pod's netns; kDpdk = the
// VF stays bound for a DPDK app in the pod, which finds it by PCI address.
enum class SriovMode { kKernel, kDpdk };
// sriov-cni's "vlanProto" and "link_state".
enum class VlanProto { k8021Q, k8021AD };
enum class VfLinkState { kAuto, kEnable, kDisable };

struct IpamConfig {
  std::string type;  // plugin executable name, a single path component
};

// An attachment as the spec keys it within one network.
struct AttachmentId {
  std::string container_id;  // CNI_CONTAINERID
  std::string ifname;        // CNI_IFNAME
  auto operator<=>(const AttachmentId&) const = default;
};

struct NetConf {
  std::string cni_version;  // the name of one of kSpecVersions
  std::string name;         // network name; a safe file-name component
  InterfaceType interface_type = InterfaceType::kVhostUser;
  VhostMode vhost_mode = VhostMode::kClient;
  // sluiced's gRPC unix socket; empty: the node config's first apiSockets
  // entry (node_policy.h's apiSocket() also checks a named one against them).
  std::string api_socket;
  // Host directory the pods mount; must equal sluiced's --socket-dir.
  std::string socket_dir{kDefaultSocketDir};
  std::string data_dir{kDefaultDataDir};
  // vhost-user only. true (the default): each pod's sockets go to its own
  // emptyDir volume `socket_volume`, mounted in the pod at `pod_socket_dir`,
  // through a link under socket_dir (pod_socket_volume.h); used when the
  // runtime passes K8S_POD_UID, else the sockets go below socket_dir as with
  // false. false: below socket_dir, which the pods mount. Either way below
  // socket_dir only where the node config allows a shared socket directory.
  bool per_pod_sockets = true;
  std::string socket_volume{kDefaultSocketVolume};  // a Kubernetes volume name
  std::string pod_socket_dir{kDefaultPodSocketDir};  // normalised absolute path
  // The group that non-root pods share with the socket (server mode: the
  // socket sluiced makes is set to it, mode 0660) and, without per-pod
  // sockets, with the per-pod directory (mode 02770, so the application in
  // client mode may create its socket there). Unset: root's, as made.
  std::optional<uint32_t> socket_group;
  std::optional<uint32_t> mtu;  // reported to the pod (1.1 interface "mtu")
  // vhost-user only: "sourceValidation" (JSON boolean, default true). false
  // lets the pod send with sources other than its own (a router pod);
  // SR-IOV's counterpart is "spoofchk".
  bool source_validation = true;
  // vhost-user only: prefixes routed to the pod's port (a UPF's UE pools),
  // IPv4 and IPv6 CIDRs with host bits zero, normalised text. The network's
  // "routedPrefixes", unless the pod names its own through Multus's
  // cni-args ("args": {"cni": {"routedPrefixes": [...]}}): the pod's list
  // then replaces the network's (an empty one: none), so that a network
  // several pods share never hands one prefix to each of them.
  std::vector<std::string> routed_prefixes;
  // Whether routed_prefixes came from the pod's cni-args rather than the
  // network config: a pod's claim counts only on a network whose author let
  // pods make one ("allowPodRoutedPrefixes", JSON boolean, default false),
  // which ADD checks (node_policy.h) so that DEL and CHECK of a port made
  // before a policy change still work.
  bool routed_prefixes_from_pod = false;
  bool allow_pod_routed_prefixes = false;
  // vhost-user only: "queues", the queue pairs the pod's port offers (1..16;
  // unset: sluiced's default of 1; above the node's max-queues-per-port
  // sluiced refuses the ADD).
  std::optional<uint32_t> queues;
  uint16_t vlan = 0;            // 0 = untagged
  std::optional<IpamConfig> ipam;
  std::string log_file;                     // empty: log to stderr
  uint32_t timeout_ms = kDefaultTimeoutMs;  // deadline for each gRPC call and IPAM exec
  // The VF the SR-IOV device plugin allocated: top-level "deviceID" (how
  // Multus passes it) or runtimeConfig.deviceID (the capability convention).
  std::string device_id;
  // SR-IOV only: "sriovMode", "trust" and "spoofchk" ("on"/"off", as the
  // reference sriov-cni spells them; trust default off, spoofchk on).
  SriovMode sriov_mode = SriovMode::kKernel;
  bool trust = false;
  bool spoof_check = true;
  // SR-IOV only, sriov-cni's names and ranges: "vlanQoS" 0..7 and
  // "vlanProto" ("802.1Q", "802.1ad") need a "vlan"; "link_state" (unset:
  // untouched); "min_tx_rate" / "max_tx_rate" in Mbit/s (0: no limit).
  uint8_t vlan_qos = 0;
  VlanProto vlan_proto = VlanProto::k8021Q;
  std::optional<VfLinkState> link_state;
  uint32_t min_tx_rate = 0;
  uint32_t max_tx_rate = 0;
  // runtimeConfig.mac (the "mac" capability): the interface's MAC instead of
  // one sluiced derives from the address. Unicast only.
  std::optional<MacAddress> runtime_mac;
  // runtimeConfig.ips (the "ips" capability): IPv4 "a.b.c.d/len" and IPv6
  // "x::y/len" entries (at most one per family, checked by ADD).
  // Without an "ipam" block they are the interface's addresses; with one,
  // the IPAM plugin reads them (static IPAM does) from the same stdin.
  std::vector<std::string> runtime_ips;
  // runtimeConfig.CNIDeviceInfoFile: where Multus wants the NPWG device-info.
  std::string device_info_file;
  std::optional<nlohmann::json> prev_result;  // an object when present
  // GC only: "cni.dev/valid-attachments" (or the older "cni.dev/attachments").
  std::optional<std::vector<AttachmentId>> valid_attachments;
  // Top-level keys we do not know (logged by the caller).
  std::vector<std::string> unknown_fields;
};

// Parses and validates the whole document. Does not require "ipam" (DEL,
// STATUS and GC can work without); ADD checks that itself.
absl::StatusOr<NetConf> parseNetConf(std::string_view text);

// The "cniVersion" of a document that failed to parse, for the error
// reply; kLatestVersion when there is none or it is not one we speak.
std::string peekCniVersion(std::string_view text);

std::string_view vhostModeName(VhostMode mode);
std::string_view interfaceTypeName(InterfaceType type);
std::string_view sriovModeName(SriovMode mode);

}  // namespace sluice::cni
