// The overlay part of a PMD's snapshot (pmd_snapshot.h): whether this node
// has an uplink, which port it is, what decapsulation accepts, the shared
// overlay tables, and this PMD's per-tunnel counters. Written by control
// before publication, read-only for the PMD afterwards (the counters are the
// PMD's to write, like PmdCounters).
#pragma once

#include <rte_ether.h>
#include <rte_ring.h>

#include <array>
#include <cstdint>
#include <memory>

#include "dataplane/datapath/external_network.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_counters.h"
#include "dataplane/datapath/overlay/overlay_tables.h"
#include "dataplane/datapath/overlay/vxlan_decap.h"
#include "dataplane/datapath/overlay/vxlan_decap6.h"
#include "dataplane/datapath/forwarding_table_v6.h"

namespace sluice::vxlan {

// One tunnel's traffic as seen by one PMD (single writer, see pmd_counters.h).
struct TunnelCounters {
  Counter rx_packets;  // decapsulated from this remote VTEP (before lookup)
  Counter rx_bytes;    // their inner bytes
  Counter tx_packets;  // encapsulated toward this remote VTEP
  Counter tx_bytes;    // their inner bytes
};

// A PMD's tunnel counters, allocated by control at start, one block per PMD.
struct alignas(64) OverlayCounters {
  std::array<TunnelCounters, kMaxTunnels> tunnels;
};

struct OverlaySnapshot {
  bool enabled = false;             // false: no uplink; everything below unused
  uint16_t uplink_port = kInvalidPort;  // the uplink's port number
  DecapConfig decap;                // our VTEP and VNI (IPv4 underlay)
  // An IPv6 underlay (our VTEP and every remote one IPv6): the uplink
  // stage and the encap action take their IPv6 branch, chosen once per
  // burst or run, never per packet.
  bool underlay_ipv6 = false;
  DecapConfig6 decap6;              // our IPv6 VTEP and VNI
  // What neighbor solicitations on the uplink are answered for: our IPv6
  // VTEP and the uplink MAC's link-local address (as a /128 "pod network"
  // whose only address is the VTEP, for answerNeighborDiscovery).
  Ipv6PodNet vtep_nd;
  rte_ether_addr vtep_mac{};        // the uplink's MAC (ARP replies for the VTEP)
  uint32_t overlay_mtu = 0;         // largest inner IP packet (uplink MTU - 50, IPv6 underlay - 70)
  bool tx_ip_checksum_offload = false;  // the uplink fills outer IPv4 checksums
  std::shared_ptr<const OverlayTables> tables;  // shared by all PMDs of a version
  rte_ring* arp_punt = nullptr;     // ARP replies (IPv6: neighbor advertisements) for control (MP enqueue, control dequeues)
  // Control's frames for the uplink (ARP requests, neighbor solicitations):
  // control enqueues, this PMD sends them in its uplink batch. Set for one
  // PMD only, so that control never takes the uplink's tx lock.
  rte_ring* control_tx = nullptr;
  OverlayCounters* counters = nullptr;  // this PMD's block
  ExternalSnapshot external;        // the external network (IPv4 underlay only)
};

}  // namespace sluice::vxlan
