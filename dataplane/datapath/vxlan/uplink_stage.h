// The PMD's overlay steps over mbufs: the uplink receive stage (VXLAN decap,
// ARP for our VTEP, named drops) and the encapsulation action. PMD lcores
// only: no heap, locks or syscalls; the ARP punt is a lock-free rte_ring.
//
// uplinkRxBurst is a stage function over a burst (STYLE §3): decapsulated
// packets are compacted in place to the front of the burst (order kept) with
// their tunnel metadata beside them and continue through key extraction and
// lookup as if they had arrived on the uplink port without outer headers;
// the rest are handed back to the caller in `out` (drops with their reason,
// ARP replies to send, punted ARP the caller only counts).
#pragma once

#include <rte_ether.h>
#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/vxlan/overlay_snapshot.h"

namespace sluice::vxlan {

// The outer headers' facts a decapsulated packet's flow key carries.
struct TunnelMeta {
  uint32_t src_be;  // sending VTEP
  uint32_t dst_be;  // our VTEP
  uint32_t vni;     // host order
};

struct UplinkRxOut {
  uint16_t n_drop = 0;
  uint16_t n_reply = 0;   // ARP replies (built in place) to send on the uplink
  uint16_t n_punted = 0;  // ARP replies for our VTEP handed to control
  rte_mbuf* drop[kBurstSize];
  DropReason reason[kBurstSize];
  rte_mbuf* reply[kBurstSize];
};

// Returns how many packets were decapsulated (now pkts[0..ret)).
uint16_t uplinkRxBurst(const OverlaySnapshot& ov, rte_mbuf** pkts, uint16_t n, TunnelMeta* meta,
                       UplinkRxOut& out);

// Writes the tunnel fields of keys[i] from meta[i] (after key extraction,
// which leaves them zero). Their hash stays the inner one: equal keys still
// hash equally, and the outer fields add nothing to spreading.
inline void applyTunnelMeta(const TunnelMeta* meta, uint16_t n, flow::FlowKey* keys) {
  for (uint16_t i = 0; i < n; ++i) {
    keys[i].tun_src = meta[i].src_be;
    keys[i].tun_dst = meta[i].dst_be;
    keys[i].tun_vni = meta[i].vni;
  }
}

// The encap action for a validated untagged IPv4 frame with TTL >= 2: inner
// L3 rewrite (Ethernet source := gateway MAC, destination := the remote's
// inner MAC, TTL - 1) and the tunnel's outer headers prepended. Returns the
// uplink's port number, or kInvalidPort with *reason (unresolved next hop,
// over the overlay MTU, no headroom).
uint16_t encapOne(const OverlaySnapshot& ov, const rte_ether_addr& gateway_mac, rte_mbuf* m, uint16_t tunnel,
                  uint32_t flow_hash, DropReason* reason);

}  // namespace sluice::vxlan
