// The MTUs a pod port may have (AddPortRequest.mtu, the port-mtu key): the
// range sluice-cni accepts in a network config's "mtu" (IPv4's minimum
// datagram every link must carry, RFC 791, up to a common jumbo frame), and
// IPv6's minimum link MTU (RFC 8200 5) for a port that carries IPv6.
// Constants only; any thread.
#pragma once

#include <cstdint>

namespace sluice {

inline constexpr uint32_t kMinPortMtu = 68;
inline constexpr uint32_t kMaxPortMtu = 9216;
inline constexpr uint32_t kMinIpv6PortMtu = 1280;
inline constexpr uint32_t kDefaultPortMtu = 1500;

}  // namespace sluice
