// Building ICMP and ICMPv6 errors in place (icmp_error.h).
#include "dataplane/datapath/icmp/icmp_error.h"

#include <rte_byteorder.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstring>

#include "dataplane/datapath/icmp/icmp_wire.h"

namespace sluice::icmp {
namespace {

using wire::addBytes;
using wire::finish;

constexpr uint32_t kEth = sizeof(rte_ether_hdr);  // untagged: the only framing the fast path routes
constexpr uint32_t kIpv4Header = 20;
constexpr uint32_t kIpv6Header = 40;
constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoIcmpv6 = 58;
// IPv6 extension headers that may stand between the IPv6 header and the
// upper layer (RFC 8200 4.1), walked to find whether the packet is ICMPv6.
constexpr uint8_t kHopByHop = 0, kRouting = 43, kFragment = 44, kAuthentication = 51, kDestinationOptions = 60;

bool groupMac(const uint8_t* mac) { return (mac[0] & 0x01) != 0; }  // multicast or broadcast

// ICMP types that are not errors (RFC 792, RFC 950: echo, router
// advertisement/solicitation, timestamp, information, address mask). Any
// other type, unassigned ones included, might be an error: as Linux does,
// such packets get no error either.
bool ipv4IcmpInformational(uint8_t type) {
  switch (type) {
    case 0: case 8: case 9: case 10: case 13: case 14: case 15: case 16: case 17: case 18:
      return true;
    default:
      return false;
  }
}

// The checks common to both functions of each family: the frame's layout,
// and where its IP datagram ends (its length, for the quote). They read
// f[0, len) only; the lengths the headers state are checked against
// frame_len, the whole frame (more than len for a chained mbuf, whose first
// segment must hold every header read here, else kMalformed).
struct Ipv4Frame {
  Refusal refusal;
  uint32_t datagram_len;  // the original IP total length (trailing padding excluded)
};

Ipv4Frame checkIpv4(const uint8_t* f, uint32_t len, uint32_t frame_len) {
  if (len < kEth + kIpv4Header || loadBe16(f + 12) != RTE_ETHER_TYPE_IPV4) return {Refusal::kMalformed, 0};
  const uint8_t* ip = f + kEth;
  const uint32_t ihl = (ip[0] & 0x0fu) * 4u;
  const uint32_t total = loadBe16(ip + 2);
  if ((ip[0] >> 4) != 4 || ihl < kIpv4Header || total < ihl || total > frame_len - kEth)
    return {Refusal::kMalformed, 0};
  // RFC 1812 4.3.2.7: no error about a link-layer broadcast (or multicast).
  if (groupMac(f)) return {Refusal::kMulticastDestination, 0};
  if (groupMac(f + 6)) return {Refusal::kSourceNotUnique, 0};  // no sender to send it back to
  const uint32_t src = loadBe32(ip + 12);
  const uint32_t dst = loadBe32(ip + 16);
  // IP multicast (224/4) or the limited broadcast.
  if ((dst >> 28) == 0xe || dst == 0xffffffffu) return {Refusal::kMulticastDestination, 0};
  // Zero (0/8, "this network"), loopback (127/8), multicast (224/4), class
  // E and the limited broadcast (240/4): no single host.
  const uint32_t top = src >> 24;
  if (top == 0 || top == 127 || top >= 224) return {Refusal::kSourceNotUnique, 0};
  if ((loadBe16(ip + 6) & 0x1fff) != 0) return {Refusal::kNotFirstFragment, 0};
  if (ip[9] == kProtoIcmp) {
    if (total < ihl + 1 || ihl + 1 > len - kEth) return {Refusal::kMalformed, 0};  // no type to tell
    if (!ipv4IcmpInformational(ip[ihl])) return {Refusal::kAboutIcmpError, 0};
  }
  return {Refusal::kNone, total};
}

struct Ipv6Frame {
  Refusal refusal;
  uint32_t packet_len;  // header + payload (trailing padding excluded)
};

bool ipv6Multicast(const uint8_t* a) { return a[0] == 0xff; }
bool ipv6Unspecified(const uint8_t* a) {
  static constexpr uint8_t kZero[16] = {};
  return std::memcmp(a, kZero, 16) == 0;
}
bool ipv6Loopback(const uint8_t* a) {
  static constexpr uint8_t kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(a, kLoopback, 16) == 0;
}

Ipv6Frame checkIpv6(const uint8_t* f, uint32_t len, uint32_t frame_len, uint8_t type) {
  if (len < kEth + kIpv6Header || loadBe16(f + 12) != RTE_ETHER_TYPE_IPV6) return {Refusal::kMalformed, 0};
  const uint8_t* ip = f + kEth;
  const uint32_t packet_len = kIpv6Header + loadBe16(ip + 4);
  if ((ip[0] >> 4) != 6 || packet_len > frame_len - kEth) return {Refusal::kMalformed, 0};
  // The walk below reads within the packet and within the first segment.
  const uint32_t readable = std::min(packet_len, len - kEth);
  // RFC 4443 2.4 (e.2-e.4): no error about a multicast destination, IP or
  // link-layer, except Packet Too Big (which multicast senders need).
  if (type != kIpv6PacketTooBig && (groupMac(f) || ipv6Multicast(ip + 24)))
    return {Refusal::kMulticastDestination, 0};
  // (e.5): nor about a source that names no single node.
  if (groupMac(f + 6) || ipv6Unspecified(ip + 8) || ipv6Multicast(ip + 8) || ipv6Loopback(ip + 8))
    return {Refusal::kSourceNotUnique, 0};
  // (e.1): nor about an ICMPv6 error message: find the upper layer behind
  // the extension headers. Each is at least 8 bytes, so the walk is bounded
  // by the packet's length.
  uint8_t next = ip[6];
  uint32_t off = kIpv6Header;
  for (;;) {
    if (next == kHopByHop || next == kRouting || next == kDestinationOptions || next == kAuthentication) {
      if (off + 8 > readable) return {Refusal::kMalformed, 0};
      const uint32_t ext_len = next == kAuthentication ? (ip[off + 1] + 2u) * 4u : (ip[off + 1] + 1u) * 8u;
      next = ip[off];
      off += ext_len;
      continue;
    }
    if (next == kFragment) {
      if (off + 8 > readable) return {Refusal::kMalformed, 0};
      const bool later = (loadBe16(ip + off + 2) & 0xfff8) != 0;
      next = ip[off];
      off += 8;
      // A later fragment of ICMPv6 hides its type: it may be an error's.
      if (later) {
        if (next == kProtoIcmpv6) return {Refusal::kNotFirstFragment, 0};
        break;
      }
      continue;
    }
    break;
  }
  if (off > packet_len) return {Refusal::kMalformed, 0};  // extension headers run past the packet
  if (next == kProtoIcmpv6) {
    if (off + 1 > readable) return {Refusal::kMalformed, 0};
    if (ip[off] < 128) return {Refusal::kAboutIcmpError, 0};  // types 0-127 are errors (RFC 4443 2.1)
  }
  return {Refusal::kNone, packet_len};
}

// Whether the builder may write into m's buffer and prepend `prepend` bytes.
// A chained mbuf may be rewritten when its first segment holds the part of
// the frame the error keeps (checked by the builder, which frees the rest).
bool writable(const rte_mbuf* m, uint16_t prepend) {
  return RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 && rte_pktmbuf_headroom(m) >= prepend;
}

void writeEthernet(uint8_t* f, const uint8_t* to_mac, const rte_ether_addr& from_mac, uint16_t ether_type) {
  std::memcpy(f, to_mac, RTE_ETHER_ADDR_LEN);
  std::memcpy(f + 6, from_mac.addr_bytes, RTE_ETHER_ADDR_LEN);
  storeBe16(f + 12, ether_type);
}

// The frame now starts `prepend` bytes earlier and ends after `frame_len`
// bytes; offload requests and the parsed packet type of the received frame
// no longer hold.
void reshape(rte_mbuf* m, uint16_t prepend, uint32_t frame_len, uint32_t ptype) {
  if (m->next != nullptr) {  // the segments after the first hold nothing the error keeps
    rte_pktmbuf_free(m->next);
    m->next = nullptr;
    m->nb_segs = 1;
  }
  m->data_off = static_cast<uint16_t>(m->data_off - prepend);
  m->data_len = static_cast<uint16_t>(frame_len);
  m->pkt_len = frame_len;
  m->ol_flags = 0;  // direct (checked): no attachment flag to keep
  m->packet_type = ptype;
  m->tx_offload = 0;
}

}  // namespace

const char* refusalName(Refusal r) {
  switch (r) {
    case Refusal::kNone: return "none";
    case Refusal::kMalformed: return "malformed";
    case Refusal::kAboutIcmpError: return "about_icmp_error";
    case Refusal::kNotFirstFragment: return "not_first_fragment";
    case Refusal::kMulticastDestination: return "multicast_destination";
    case Refusal::kSourceNotUnique: return "source_not_unique";
    case Refusal::kNotWritable: return "not_writable";
  }
  return "unknown";
}

Refusal ipv4ErrorRefusal(const uint8_t* frame, uint32_t len) { return checkIpv4(frame, len, len).refusal; }

Refusal ipv6ErrorRefusal(const uint8_t* frame, uint32_t len, uint8_t type) {
  return checkIpv6(frame, len, len, type).refusal;
}

Refusal ipv4ErrorRefusal(const rte_mbuf* m) {
  const Refusal r =
      checkIpv4(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m)).refusal;
  if (r != Refusal::kNone) return r;
  return writable(m, kIpv4ErrorPrepend) ? Refusal::kNone : Refusal::kNotWritable;
}

Refusal ipv6ErrorRefusal(const rte_mbuf* m, uint8_t type) {
  const Refusal r =
      checkIpv6(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), type).refusal;
  if (r != Refusal::kNone) return r;
  return writable(m, kIpv6ErrorPrepend) ? Refusal::kNone : Refusal::kNotWritable;
}

Refusal buildIpv4Error(rte_mbuf* m, const Ipv4ErrorParams& p) {
  const uint8_t* old = rte_pktmbuf_mtod(m, const uint8_t*);
  const Ipv4Frame in = checkIpv4(old, rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m));
  if (in.refusal != Refusal::kNone) return in.refusal;
  // The original IP header stays where it is; the new headers go in front.
  const uint32_t quote = std::min(in.datagram_len, kIpv4ErrorMaxDatagram - kIpv4ErrorPrepend);
  if (!writable(m, kIpv4ErrorPrepend) || kEth + quote > rte_pktmbuf_data_len(m)) return Refusal::kNotWritable;

  const uint32_t icmp_len = 8 + quote;
  uint8_t* f = const_cast<uint8_t*>(old) - kIpv4ErrorPrepend;
  uint8_t sender_mac[RTE_ETHER_ADDR_LEN];
  std::memcpy(sender_mac, old + 6, RTE_ETHER_ADDR_LEN);
  uint8_t sender_ip[4];
  std::memcpy(sender_ip, old + kEth + 12, 4);
  writeEthernet(f, sender_mac, p.mac, RTE_ETHER_TYPE_IPV4);

  uint8_t* ip = f + kEth;
  ip[0] = 0x45;
  ip[1] = 0xc0;  // precedence 6, internetwork control (RFC 1812 4.3.2.5)
  storeBe16(ip + 2, static_cast<uint16_t>(kIpv4Header + icmp_len));
  storeBe16(ip + 4, 0);       // identification: any value in an atomic datagram (RFC 6864)
  storeBe16(ip + 6, 0x4000);  // DF, offset 0
  ip[8] = kErrorTtl;
  ip[9] = kProtoIcmp;
  storeBe16(ip + 10, 0);
  std::memcpy(ip + 12, &p.source_be, 4);
  std::memcpy(ip + 16, sender_ip, 4);
  storeBe16(ip + 10, finish(addBytes(0, ip, kIpv4Header)));

  uint8_t* icmp = ip + kIpv4Header;
  icmp[0] = p.type;
  icmp[1] = p.code;
  storeBe16(icmp + 2, 0);
  storeBe16(icmp + 4, 0);
  const bool frag_needed = p.type == kIpv4DestinationUnreachable && p.code == kIpv4CodeFragmentationNeeded;
  storeBe16(icmp + 6, frag_needed ? p.next_hop_mtu : 0);
  storeBe16(icmp + 2, finish(addBytes(0, icmp, icmp_len)));

  reshape(m, kIpv4ErrorPrepend, kEth + kIpv4Header + icmp_len, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
                                                                    RTE_PTYPE_L4_ICMP);
  return Refusal::kNone;
}

Refusal buildIpv6Error(rte_mbuf* m, const Ipv6ErrorParams& p) {
  const uint8_t* old = rte_pktmbuf_mtod(m, const uint8_t*);
  const Ipv6Frame in = checkIpv6(old, rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), p.type);
  if (in.refusal != Refusal::kNone) return in.refusal;
  const uint32_t quote = std::min(in.packet_len, kIpv6ErrorMaxDatagram - kIpv6ErrorPrepend);
  if (!writable(m, kIpv6ErrorPrepend) || kEth + quote > rte_pktmbuf_data_len(m)) return Refusal::kNotWritable;
  const uint32_t icmp_len = 8 + quote;
  uint8_t* f = const_cast<uint8_t*>(old) - kIpv6ErrorPrepend;
  uint8_t sender_mac[RTE_ETHER_ADDR_LEN];
  std::memcpy(sender_mac, old + 6, RTE_ETHER_ADDR_LEN);
  uint8_t sender_ip[16];
  std::memcpy(sender_ip, old + kEth + 8, 16);
  writeEthernet(f, sender_mac, p.mac, RTE_ETHER_TYPE_IPV6);

  uint8_t* ip = f + kEth;
  storeBe32(ip, 0x60000000u);  // version 6, traffic class 0, flow label 0
  storeBe16(ip + 4, static_cast<uint16_t>(icmp_len));
  ip[6] = kProtoIcmpv6;
  ip[7] = kErrorTtl;
  std::memcpy(ip + 8, p.source.data(), 16);
  std::memcpy(ip + 24, sender_ip, 16);

  uint8_t* icmp = ip + kIpv6Header;
  icmp[0] = p.type;
  icmp[1] = p.code;
  storeBe16(icmp + 2, 0);
  storeBe32(icmp + 4, p.type == kIpv6PacketTooBig ? p.mtu : 0);
  // RFC 4443 2.3: the pseudo-header of RFC 8200 8.1 (source, destination,
  // upper-layer length, next header) and the whole ICMPv6 message.
  uint32_t sum = addBytes(0, ip + 8, 32);
  sum += icmp_len >> 16;
  sum += icmp_len & 0xffff;
  sum += kProtoIcmpv6;
  sum = addBytes(sum, icmp, icmp_len);
  storeBe16(icmp + 2, finish(sum));

  reshape(m, kIpv6ErrorPrepend, kEth + kIpv6Header + icmp_len, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 |
                                                                    RTE_PTYPE_L4_ICMP);
  return Refusal::kNone;
}

}  // namespace sluice::icmp
