// SR-IOV kernel mode, the plugin's half: moving a VF's netdev into the pod's
// network namespace (renamed to CNI_IFNAME, given the attachment's MAC, the
// config's MTU, the IPAM addresses and routes, and set up) and back to the
// host under its original name, MAC and MTU.
//
// Why the plugin and not sluiced does this: the runtime hands CNI_NETNS to
// the plugin, which runs in the host's namespaces as root at exactly the
// moment the pod's namespace is guaranteed to exist; sluiced (a DaemonSet
// pod) would need the host's /var/run/netns and /proc mounted to reach it,
// and a sluiced restart in the middle would leave a netdev half-moved with
// nobody to undo it. ADD's undo stack already covers every step here. So
// sluiced owns the VF (allocation, PF programming, reset, checkpoint) and the
// plugin owns the netdev's namespace, as the reference sriov-cni does.
//
// Used by the single (main) thread of the sluice-cni process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/cni_result.h"
#include "cni-plugin/logger.h"
#include "common/net_address.h"

namespace sluice::cni {

// What the VF's netdev was in the host namespace before ADD took it.
struct HostNetdev {
  std::string name;
  MacAddress mac;
  uint32_t mtu = 0;
};

struct PodRoute {
  Ipv4Address dst;
  uint8_t dst_len = 0;
  std::optional<Ipv4Address> gateway;
};

struct PodRoute6 {
  Ipv6Address dst;
  uint8_t dst_len = 0;
  std::optional<Ipv6Address> gateway;
};

struct PodNetdevConfig {
  std::string ifname;                   // CNI_IFNAME
  MacAddress mac;                       // the attachment's MAC (as programmed on the PF)
  std::optional<uint32_t> mtu;          // the config's "mtu"; unset: unchanged
  std::vector<Ipv4Assignment> addresses;
  std::vector<PodRoute> routes;
  std::vector<Ipv6Assignment> addresses6;
  std::vector<PodRoute6> routes6;
};

// The addresses and routes of an IPAM result, as the reference plugins
// apply them: a route without "gw" goes via the first gateway of its own
// family in the result ("::/0" via the IPv6 gateway, "0.0.0.0/0" via the
// IPv4 one), or directly on the link when there is none. A route of a family
// the result has no address of could not be used and is skipped (returned
// in `skipped` for logging).
PodNetdevConfig podNetdevConfig(const Result& ipam, std::string ifname, MacAddress mac,
                                std::optional<uint32_t> mtu, std::vector<std::string>* skipped);

// The host netdev `name` as it is now (NotFound: no such netdev).
absl::StatusOr<HostNetdev> lookUpHostNetdev(const std::string& name);

// Moves host netdev `host_name` into `netns_path` and configures it. All or
// nothing: on failure the netdev is back in the host under its own name,
// MAC and MTU. Returns what it was, for returnToHost().
absl::StatusOr<HostNetdev> moveIntoPod(const std::string& host_name, const std::string& netns_path,
                                       const PodNetdevConfig& config);

// CHECK: `ifname` exists in `netns_path` with `mac` and is up. NotFound
// (no such netns or netdev) or FailedPrecondition (wrong MAC, down) otherwise.
absl::Status checkInPod(const std::string& netns_path, const std::string& ifname, const MacAddress& mac);

// Moves `pod_ifname` out of `netns_path` back to the host as `original`.
// Idempotent: a missing or empty netns path, or a netdev no longer in the pod
// (already returned, or the namespace is gone, in which case the kernel
// returns a physical VF to the host by itself), is success.
absl::Status returnToHost(const std::string& netns_path, const std::string& pod_ifname,
                          const HostNetdev& original, Logger& log);

}  // namespace sluice::cni
