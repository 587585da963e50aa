// The slow-path decision for one flow: from the forwarding tables and a
// packet's flow key, the megaflow mask (exactly the key fields the decision
// consulted) and the actions every packet matching it gets.
//
// Pure and allocation-free, so two threads run it:
//  - the control thread, to turn upcalls into megaflows and to revalidate
//    installed megaflows after a table change (re-translating a megaflow's
//    masked key gives the same mask and actions iff the tables still support
//    it, because the mask holds every field the decision read);
//  - a PMD, inline, for the packet that missed (it is forwarded at once by the
//    decision its own snapshot's tables give, with the context on its stack;
//    the megaflow itself is installed by control, see upcall_queue.h).
//
// Only IPv4 and IPv6 frames without a VLAN tag whose key parsed kOk are
// translated: the pipeline handles ARP and IPv6 neighbor discovery per
// packet and drops the rest before lookup, so the mask of an L3 decision is
// eth_type + ipv4_dst or ipv6_dst (+ ttl_class when the destination is a
// local pod or a remote node): 100k source ports to one pod share one
// megaflow. Both families decide alike, through the same steps.
// With source validation, the mask also holds in_port, and for a port whose
// sources are checked its Ethernet and IP source (see RouteTables::sources).
// A packet to the gateway also reads ip_proto and, for ICMP, the fragment
// state and the ICMP type and code (is it an echo request to answer?); one
// to a host address, with the host port filter on, ip_proto and for TCP and
// UDP the fragment state and a prefix of tp_dst (host_path.h). A tunnelled
// packet reads its inner source, as the sending node's CIDR or prefix.
// Only a pod, the gateway or a host address (host_path.h) needs all bits of
// the destination; a remote node's CIDR or an unrouted destination is
// matched as the widest prefix that holds no address decided otherwise, so
// that traffic to random destinations cannot fill the megaflow table.
#pragma once

#include <cstdint>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/forwarding_table.h"
#include "dataplane/datapath/forwarding_table_v6.h"
#include "dataplane/datapath/host_path.h"
#include "dataplane/datapath/overlay/overlay_tables.h"
#include "dataplane/datapath/routed_prefix_table.h"
#include "dataplane/datapath/source_check.h"

namespace sluice {

// MegaflowActions::rewrite_flags bit: the L3 rewrite for a local pod
// (Ethernet source := gateway MAC, destination := the out port's pod MAC,
// TTL - 1 with the checksum adjusted).
inline constexpr uint8_t kRewriteL3 = 0x01;
// The same for IPv6: Ethernet addresses as kRewriteL3, hop limit - 1 (no
// checksum covers it).
inline constexpr uint8_t kRewriteL3v6 = 0x02;
// On a no_route drop: the destination lies in this node's pod CIDR (IPv4 or
// IPv6) but no pod holds it, so the sender is told, as a router on the
// pods' link must: ICMP host unreachable / ICMPv6 address unreachable, per
// packet and rate-limited (never for a tunnelled packet).
inline constexpr uint8_t kAnswerUnreachable = 0x04;
// On a drop of a packet to the gateway itself: an unfragmented, untunnelled
// ICMP echo request (ICMPv6 for the IPv6 gateway addresses) the gateway
// answers with its echo reply, per packet and rate-limited (icmp_echo.h).
inline constexpr uint8_t kAnswerEcho = 0x08;

// The largest frame a port with this IP MTU takes (the Ethernet header on top).
inline constexpr uint16_t maxFrameForMtu(uint16_t mtu) {
  return mtu == 0 ? uint16_t{0xffff} : static_cast<uint16_t>(mtu + 14);
}

// The tables a decision reads (borrowed; the caller keeps them alive).
struct RouteTables {
  const ForwardingTable* fib = nullptr;
  uint32_t gateway_ip_be = 0;
  // The VXLAN overlay (null: this node has no uplink, and decisions read no
  // tunnel field). With it, every decision also reads tun_vni (tunnelled or
  // not), a tunnelled one reads tun_src (only known remote VTEPs may send)
  // and its inner source (which must lie in that node's pod CIDRs or routed
  // prefixes: matched as a prefix), and a destination in a remote node's pod
  // CIDR is encapsulated toward it.
  const vxlan::OverlayTables* overlay = nullptr;
  uint16_t uplink_port = 0;  // the encap action's output port
  // IPv6: the /128 pod routes (null: none) and the node's IPv6 pod network
  // (null or disabled: no local IPv6 pods or gateway). With the overlay, an
  // IPv6 destination in a remote node's IPv6 pod CIDR is encapsulated toward
  // it (inner IPv6 over the IPv4 underlay), as IPv4 is.
  const Ipv6ForwardingTable* fib6 = nullptr;
  const Ipv6PodNet* v6 = nullptr;
  // Each port's IP MTU, indexed by port number (a table of portTableSize entries; 0: not
  // checked); null: none is checked. An output action carries its port's.
  const uint16_t* port_mtus = nullptr;
  // This node's IPv4 pod CIDR, network order (mask 0: unknown): a
  // destination inside it that no pod holds is answered as unreachable.
  uint32_t pod_net_be = 0;
  uint32_t pod_mask_be = 0;
  // Which sources each port may send with (source_check.h; null: nothing
  // is checked, and decisions read no source field). With it, every
  // decision reads in_port (whether that port is checked), and one for a
  // checked port reads eth_src and the IP source: exactly when they are the
  // port's own, else only the leading octets that tell them from every
  // allowed one (the packet is dropped before its destination is read).
  const SourceTable* sources = nullptr;
  // Prefixes routed to local pods' ports (routed_prefix_table.h; null or
  // empty: none). A destination no pod address holds but one of them does
  // goes to its port, tunnelled or not (its megaflow matches the widest
  // prefix that decides alike); a checked port may also send from inside
  // its own prefixes.
  const RoutedPrefixTable* prefixes = nullptr;
  // The external network on the uplink (external_decision.h; needs the
  // overlay). With it, an untunnelled decision also reads in_port: a packet
  // from the uplink came from outside the cluster (its source must not be
  // the cluster's, and only local pods and routed prefixes are reached), and
  // a pod's IPv4 packet that nothing in the cluster holds and that lies
  // outside the pod CIDR leaves through the external gateway (kExternal on
  // uplink_port, at most external_max_frame bytes before its VLAN tag).
  bool external = false;
  uint16_t external_max_frame = 0xffff;
  // The exception path to the node's kernel (host_path.h; null or disabled:
  // none). A destination that is a host address goes out its port (the
  // mask holds that exact address, as for a pod) if the host port filter
  // lets it and it was not tunnelled, and no other decision's widened
  // destination prefix holds a host address.
  const HostPath* host = nullptr;
};

struct FlowTranslation {
  flow::FlowMask mask;
  flow::MegaflowActions actions;
};

// Decides for `key` (see the precondition above). `out` is fully written.
void translateFlow(const RouteTables& tables, const flow::FlowKey& key, FlowTranslation& out);

inline flow::MegaflowActions dropAction(DropReason r) {
  flow::MegaflowActions a;
  a.kind = flow::MegaflowActions::Kind::kDrop;
  a.drop_reason = static_cast<uint16_t>(r);
  return a;
}

}  // namespace sluice
