// The PMD's rare paths that answer a packet it will not forward with an
// ICMP/ICMPv6 error, as a router does, apart from pmd.cc so that they stay
// out of the pipeline's code. PMD lcore only.
//  - TTL / hop limit expired (Pmd::dropExpired): Time Exceeded.
//  - Larger than the output port's MTU (Pmd::outputOversize): IPv4 with DF
//    gets Destination Unreachable, fragmentation needed, with the port's MTU
//    as the next-hop MTU (RFC 1191); IPv6 Packet Too Big with it (RFC 8201).
//    IPv4 without DF is fragmented instead (ipv4_fragment.h), each fragment
//    forwarded as the packet would have been; only when that fails (mbufs
//    exhausted) is it dropped, as fragmentation_failed, unanswered.
//  - Larger than the overlay MTU on its way into a tunnel
//    (Pmd::overlayOversize): the same, with the overlay MTU, each fragment
//    encapsulated.
//  - To an address of this node's pod CIDR that no pod holds
//    (Pmd::dropUnreachable): host unreachable / ICMPv6 address unreachable.
// And the one question the gateway answers itself: an echo request to it
// (Pmd::answerEcho), with its echo reply (icmp_echo.h), within a bucket of
// its own at the icmp-error-rate. The request is consumed either way and
// counted under gateway_echo_answered, gateway_echo_rate_limited or (one
// the rules refuse, e.g. from a broadcast source) to_gateway.
//
// Counting: every such packet is a drop under its reason (and an
// rx_dropped of its port), answered or not: the datagram received is not
// forwarded. An answer is a new packet the PMD sends, counted in
// icmp_errors_sent and in the in-port's tx counters; one the limiter holds
// back (icmp-error-rate, 0 included, or the in-port's share of it spent
// while the PMD's bucket runs low: icmp_error_limiter.h) in
// icmp_errors_rate_limited. A packet the rules forbid answering
// (icmp_error.h) is only dropped.
//
// Packets that came through the VXLAN overlay (decapsulated on the uplink,
// by the pipeline or the partial-offload branch) get no answer: the error
// would have to be encapsulated back to the sending node's VTEP, and the
// uplink carries no pod's traffic unencapsulated.
#include "dataplane/datapath/icmp/icmp_echo.h"
#include "dataplane/datapath/icmp/icmp_error.h"
#include "dataplane/datapath/pmd.h"
#include "dataplane/datapath/pmd_actions.h"
#include "dataplane/datapath/overlay/uplink_stage.h"

#include <rte_ether.h>
#include <rte_ip.h>

#include <cstring>

namespace sluice {
namespace {

// Only untagged IPv4 and IPv6 frames reach these decisions: the EtherType
// sits right after the addresses, and key extraction validated the headers.
bool isIpv6Frame(const rte_mbuf* m) {
  return rte_pktmbuf_data_len(m) >= sizeof(rte_ether_hdr) &&
         rte_pktmbuf_mtod(m, const rte_ether_hdr*)->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6);
}

// The IP packet's own length (the frame may carry Ethernet padding or a
// trailer after it), from the header key extraction validated.
uint32_t ipPacketLength(const rte_mbuf* m, bool v6) {
  const uint8_t* ip = rte_pktmbuf_mtod(m, const uint8_t*) + sizeof(rte_ether_hdr);
  const uint32_t field = static_cast<uint32_t>(ip[v6 ? 4 : 2] << 8 | ip[v6 ? 5 : 3]);
  return v6 ? sizeof(rte_ipv6_hdr) + field : field;
}

bool dontFragment(const rte_mbuf* m) {
  const uint8_t* ip = rte_pktmbuf_mtod(m, const uint8_t*) + sizeof(rte_ether_hdr);
  return (ip[6] & 0x40) != 0;
}

}  // namespace

void Pmd::answerWithError(rte_mbuf* m, uint16_t in_port, uint64_t now, IcmpAnswer answer, uint16_t mtu) {
  const vxlan::OverlaySnapshot& ov = snap_->overlay;
  const bool tunnelled = ov.enabled && in_port == ov.uplink_port;
  const bool v6 = isIpv6Frame(m);
  icmp::Ipv4ErrorParams p4;
  icmp::Ipv6ErrorParams p6;
  if (v6) {
    std::memcpy(p6.source.data(), snap_->v6.gateway, 16);
    p6.mac = snap_->gateway_mac;
    switch (answer) {
      case IcmpAnswer::kTimeExceeded:
        p6.type = icmp::kIpv6TimeExceeded;
        p6.code = icmp::kIpv6CodeHopLimitExceeded;
        break;
      case IcmpAnswer::kTooBig:
        p6.type = icmp::kIpv6PacketTooBig;
        p6.code = 0;
        p6.mtu = mtu;
        break;
      case IcmpAnswer::kUnreachable:
        p6.type = icmp::kIpv6DestinationUnreachable;
        p6.code = icmp::kIpv6CodeAddressUnreachable;
        break;
    }
  } else {
    p4.source_be = snap_->gateway_ip_be;
    p4.mac = snap_->gateway_mac;
    switch (answer) {
      case IcmpAnswer::kTimeExceeded:
        p4.type = icmp::kIpv4TimeExceeded;
        p4.code = icmp::kIpv4CodeTtlExceeded;
        break;
      case IcmpAnswer::kTooBig:
        p4.type = icmp::kIpv4DestinationUnreachable;
        p4.code = icmp::kIpv4CodeFragmentationNeeded;
        p4.next_hop_mtu = mtu;
        break;
      case IcmpAnswer::kUnreachable:
        p4.type = icmp::kIpv4DestinationUnreachable;
        p4.code = icmp::kIpv4CodeHostUnreachable;
        break;
    }
  }
  // The rules first: a packet that may not be answered spends no token.
  // IPv6 is answered only where the node serves IPv6: the error's source
  // is the pods' IPv6 gateway.
  const bool refused = tunnelled || (v6 ? !snap_->v6.enabled || icmp::ipv6ErrorRefusal(m, p6.type) != icmp::Refusal::kNone
                                        : icmp::ipv4ErrorRefusal(m) != icmp::Refusal::kNone);
  if (refused) {
    rte_pktmbuf_free(m);
    return;
  }
  if (!icmp_limiter_.admit(in_port, now)) {
    counters_.icmp_errors_rate_limited.inc();
    rte_pktmbuf_free(m);
    return;
  }
  if ((v6 ? icmp::buildIpv6Error(m, p6) : icmp::buildIpv4Error(m, p4)) != icmp::Refusal::kNone) {
    rte_pktmbuf_free(m);  // checked above: does not happen
    return;
  }
  counters_.icmp_errors_sent.inc();
  enqueue(in_port, m, now);
}

void Pmd::dropExpired(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port, uint64_t now) {
  counters_.drops[static_cast<size_t>(DropReason::kTtlExceeded)].add(count);
  for (uint16_t i = 0; i < count; ++i) answerWithError(pkts[i], in_port, now, IcmpAnswer::kTimeExceeded, 0);
}

void Pmd::dropUnreachable(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port, uint64_t now) {
  counters_.drops[static_cast<size_t>(DropReason::kNoRoute)].add(count);
  for (uint16_t i = 0; i < count; ++i) answerWithError(pkts[i], in_port, now, IcmpAnswer::kUnreachable, 0);
}

uint16_t Pmd::answerEcho(rte_mbuf* const* pkts, uint16_t count, uint16_t in_port, uint64_t now) {
  for (uint16_t i = 0; i < count; ++i) {
    rte_mbuf* m = pkts[i];
    const bool v6 = isIpv6Frame(m);
    if (v6 && !snap_->v6.enabled) {  // (the decision gives none then: kept for safety)
      dropPacket(m, DropReason::kToGateway);
      continue;
    }
    // The rules first (a refused request leaves the frame as it was): one
    // that may not be answered spends no token.
    const icmp::Refusal r = v6 ? icmp::buildIpv6EchoReply(m, snap_->gateway_mac)
                               : icmp::buildIpv4EchoReply(m, snap_->gateway_mac);
    if (r != icmp::Refusal::kNone) {
      dropPacket(m, DropReason::kToGateway);
      continue;
    }
    if (!echo_limiter_.admit(in_port, now)) {
      dropPacket(m, DropReason::kGatewayEchoRateLimited);
      continue;
    }
    counters_.drops[static_cast<size_t>(DropReason::kGatewayEchoAnswered)].inc();
    enqueue(in_port, m, now);
  }
  return count;
}

uint16_t Pmd::outputOversize(const flow::MegaflowActions& a, rte_mbuf* const* pkts, uint16_t count, uint16_t in_port,
                             uint64_t now) {
  const auto mtu = static_cast<uint16_t>(a.max_frame - sizeof(rte_ether_hdr));
  const bool v6 = (a.rewrite_flags & kRewriteL3v6) != 0;
  uint16_t dropped = 0;
  for (uint16_t i = 0; i < count; ++i) {
    rte_mbuf* m = pkts[i];
    if (rte_pktmbuf_pkt_len(m) > a.max_frame) {
      const uint32_t ip_len = ipPacketLength(m, v6);
      if (ip_len > mtu) {
        ++dropped;
        if (!v6 && !dontFragment(m)) {
          const uint32_t n = fragment(m, mtu);
          if (n == 0) continue;
          --dropped;  // forwarded, in pieces
          for (uint32_t f = 0; f < n; ++f) dropped = static_cast<uint16_t>(dropped + !forwardOne(a, fragments_[f], now));
          continue;
        }
        counters_.drops[static_cast<size_t>(DropReason::kMtuExceeded)].inc();
        answerWithError(m, in_port, now, IcmpAnswer::kTooBig, mtu);
        continue;
      }
      // Only the frame's trailer (bytes after the IP packet) made it long:
      // the packet fits, and leaves without them.
      rte_pktmbuf_trim(m, static_cast<uint16_t>(rte_pktmbuf_pkt_len(m) - sizeof(rte_ether_hdr) - ip_len));
    }
    dropped = static_cast<uint16_t>(dropped + !forwardOne(a, m, now));
  }
  return dropped;
}

bool Pmd::forwardOne(const flow::MegaflowActions& a, rte_mbuf* m, uint64_t now) {
  if (a.kind == flow::MegaflowActions::Kind::kExternal) {
    DropReason reason{};
    if (!vxlan::externalRewrite(snap_->overlay.external, m, &reason)) {
      dropPacket(m, reason);
      return false;
    }
  } else if (a.rewrite_flags & kRewriteL3) {
    l3RewriteToPod(*snap_, m, a.out_port);
  } else if (a.rewrite_flags & kRewriteL3v6) {
    l3RewriteToPod6(*snap_, m, a.out_port);
  }
  enqueue(a.out_port, m, now);
  return true;
}

uint32_t Pmd::fragment(rte_mbuf* m, uint16_t mtu) {
  const uint32_t n = fragmentIpv4(m, mtu, fragment_pool_, fragments_);
  if (n == 0) {
    counters_.drops[static_cast<size_t>(DropReason::kFragmentationFailed)].inc();
    return 0;
  }
  counters_.ipv4_fragmented.inc();
  counters_.ipv4_fragments.add(n);
  return n;
}

uint16_t Pmd::overlayOversize(const flow::MegaflowActions& a, rte_mbuf* m, uint32_t key_hash, uint16_t in_port,
                              uint64_t now) {
  const auto mtu = static_cast<uint16_t>(snap_->overlay.overlay_mtu);
  // IPv6 is always answered (its routers never fragment); IPv4 without DF
  // is fragmented and each fragment encapsulated as the packet would have
  // been (the same tunnel, the same outer source port).
  if (!isIpv6Frame(m) && !dontFragment(m)) {
    const uint32_t n = fragment(m, mtu);
    if (n == 0) return 1;
    for (uint32_t f = 0; f < n; ++f) {
      DropReason reason{};
      const uint16_t next = vxlan::encapOne<false>(snap_->overlay, snap_->gateway_mac, fragments_[f],
                                                   static_cast<uint16_t>(a.arg), key_hash, &reason);
      if (next == kNextDrop) {
        dropPacket(fragments_[f], reason);  // a fragment's loss: the datagram cannot be reassembled
      } else {
        enqueue(next, fragments_[f], now);
      }
    }
    return 0;
  }
  counters_.drops[static_cast<size_t>(DropReason::kOverlayMtuExceeded)].inc();
  answerWithError(m, in_port, now, IcmpAnswer::kTooBig, mtu);
  return 1;
}

}  // namespace sluice
