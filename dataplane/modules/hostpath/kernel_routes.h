// The node kernel's routes toward the pods over the host interface
// (host_path.h): one per pod CIDR, on-link through the interface, with the
// host address of its family as preferred source (the kernel then sends
// toward the pods from the one address the interface may send from).
// Added over rtnetlink when sluiced opens the host path, deleted when it
// closes it. Control path only.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/net_address.h"

namespace sluice::hostpath {

// One route: destination prefix (either family), out interface, preferred source.
struct KernelRoute {
  std::optional<Ipv4Cidr> v4;  // exactly one of v4 and v6
  std::optional<Ipv6Cidr> v6;
  std::optional<Ipv4Address> source4;
  std::optional<Ipv6Address> source6;
  std::string toString() const;
};

// The RTM_NEWROUTE (add: create, fail if it exists) or RTM_DELROUTE request
// for `route` via interface `ifindex`.
std::vector<uint8_t> buildRouteRequest(bool add, uint32_t seq, int ifindex, const KernelRoute& route);

// Sends the request and waits for the kernel's acknowledgement.
absl::Status changeKernelRoute(bool add, int ifindex, const KernelRoute& route);

}  // namespace sluice::hostpath
