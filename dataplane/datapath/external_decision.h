// The external network's part of the slow-path decision (flow_translate.h):
// which sources a packet from outside the cluster may not have, and which
// destinations a pod's packet may not take outside. Pure and
// allocation-free, like the decision it serves (control thread and PMDs).
#pragma once

#include <cstdint>

namespace sluice {

struct RouteTables;

// For a packet that came from the external network with IPv4 source
// src_be: whether that source belongs to the cluster (this node's pod CIDR,
// its pods' routed prefixes, a remote node's pod CIDRs or published
// prefixes, the pods' gateway), which nobody outside may send from. `bits`
// receives the source prefix length (whole octets) that decides alike: a
// refused source is matched inside the cluster range that holds it, an
// allowed one as the widest prefix around it that holds none, so random
// outside sources make a few hundred megaflows, not one per address.
bool externalSourceInCluster(const RouteTables& tables, uint32_t src_be, uint32_t* bits);

// Whether a pod's packet to dst_be (no pod, prefix or node of the cluster
// holds it) may leave through the external gateway: not to multicast, the
// reserved class E range or the limited broadcast (224.0.0.0/3), nor to
// "this network" (0.0.0.0/8), loopback (127.0.0.0/8) or link-local
// (169.254.0.0/16), which no router forwards. `bits` is raised to the
// prefix length that decides alike (16 for 169.x, else 8 suffices).
bool externalDestinationAllowed(uint32_t dst_be, uint32_t* bits);

}  // namespace sluice
