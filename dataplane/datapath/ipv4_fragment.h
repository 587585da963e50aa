// Fragmenting an IPv4 datagram that is larger than the MTU of the link it
// leaves on and does not forbid it (DF clear), as a router does (RFC 791
// 3.2, RFC 1812 5.2.6): the PMD's cold path for such a packet, in place of
// dropping it. PMD lcore (any thread holding the mbufs).
//
// The fragments are built by DPDK's ip_frag library: each is a new mbuf
// holding its own copy of the IP header (options copied where their copy
// flag says so), chained to indirect mbufs that point into the original's
// data, so the payload is not copied and a chained original (a jumbo frame
// from vhost) needs no linearising. Each fragment then gets the original's
// Ethernet header in its headroom and its IP header checksum, and leaves as
// an ordinary frame (the caller rewrites and queues it).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/datapath/port_mtu.h"

namespace sluice {

// The most fragments one datagram can make: the largest datagram a port
// accepts, cut to the smallest MTU (68: a 20-byte header and 48 bytes of
// data, a multiple of 8, per fragment).
inline constexpr uint32_t kMaxIpv4Fragments = (kMaxPortMtu - 20 + 47) / 48;

// Splits the frame m (untagged Ethernet + IPv4, headers validated and in
// its first segment, DF clear) into fragments of at most `mtu` bytes of IP
// each, written to out[0, n); returns n, or 0 when it could not (mbufs
// exhausted, a frame the library refuses, a frame shorter than its IP total
// length, or a fragment whose data would end beyond 65535: its pieces'
// offsets cannot be written). Consumes m either way: the
// fragments hold references to its data, a failure frees it.
uint32_t fragmentIpv4(rte_mbuf* m, uint16_t mtu, rte_mempool* pool, rte_mbuf** out);

}  // namespace sluice
