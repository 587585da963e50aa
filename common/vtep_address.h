// Which addresses can be a VXLAN tunnel endpoint at all: one list of the
// address ranges no node's VTEP may be in (they are not one host's unicast
// address on a routed underlay), shared by sluiced's remote-node checks and
// the node controller's, so both refuse the same VTEPs with the same words.
// Pure; any thread.
#pragma once

#include <optional>
#include <string>

#include "common/net_address.h"

namespace sluice {

// Why `vtep` can be no VTEP ("loopback", "link-local", ...), or nullopt when
// its address class allows one. Whether it is some other node's or this
// node's own address is the caller's to check.
std::optional<std::string> vtepAddressClassProblem(const Ipv4Address& vtep);
std::optional<std::string> vtepAddressClassProblem(const Ipv6Address& vtep);

}  // namespace sluice
