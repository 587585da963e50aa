// Flow key extraction: Ethernet (+ one VLAN tag), IPv4, IPv6 (+ extension
// headers), ARP, TCP/UDP/SCTP/ICMP/ICMPv6. Every read is preceded by a length
// check against the bytes the frame (or the IP length field) actually holds.
#include "dataplane/datapath/flow/flow_key.h"

#include <emmintrin.h>
#include <smmintrin.h>

namespace sluice::flow {
namespace {

constexpr uint16_t kEthTypeIpv4 = 0x0800;
constexpr uint16_t kEthTypeArp = 0x0806;
constexpr uint16_t kEthTypeVlan = 0x8100;
constexpr uint16_t kEthTypeQinQ = 0x88a8;
constexpr uint16_t kEthTypeIpv6 = 0x86dd;

constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kProtoSctp = 132;

// IPv6 extension headers the parser walks: hop-by-hop, routing, fragment,
// authentication, destination options.
constexpr uint8_t kIpv6HopByHop = 0;
constexpr uint8_t kIpv6Routing = 43;
constexpr uint8_t kIpv6Fragment = 44;
constexpr uint8_t kIpv6Auth = 51;
constexpr uint8_t kIpv6DestOpts = 60;
// RFC 8200 recommends at most one of each plus a repeat of destination
// options; eight bounds the walk while accepting every legal chain.
constexpr int kMaxIpv6ExtHeaders = 8;

constexpr uint32_t kEthHeaderLen = 14;
constexpr uint32_t kVlanTagLen = 4;
constexpr uint32_t kIpv4MinHeaderLen = 20;
constexpr uint32_t kIpv6HeaderLen = 40;
constexpr uint32_t kArpEthIpv4Len = 28;

// Network-order 16-bit value read as the raw bytes (stays network order).
inline uint16_t raw16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t raw32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// Network-order 16-bit value converted to host order (for length arithmetic).
inline uint16_t host16(const uint8_t* p) {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
inline uint16_t be16(uint16_t host) { return static_cast<uint16_t>((host >> 8) | (host << 8)); }

inline uint8_t ttlClass(uint8_t ttl) {
  return static_cast<uint8_t>(ttl == 0 ? TtlClass::kZero : ttl == 1 ? TtlClass::kOne : TtlClass::kMany);
}

// Parses the L4 header at [ofs, end) for protocol proto. icmp_proto is the
// ICMP protocol number of the enclosing IP version (1 or 58).
ParseResult parseL4(const uint8_t* data, uint32_t ofs, uint32_t end, uint8_t proto,
                    uint8_t icmp_proto, FlowKey& key) {
  const uint32_t avail = end - ofs;
  const uint8_t* p = data + ofs;
  key.l4_ofs = static_cast<uint16_t>(ofs);
  switch (proto) {
    case kProtoTcp: {
      if (avail < 20) return ParseResult::kTcpTruncated;
      const uint32_t doff = p[12] >> 4;
      if (doff < 5) return ParseResult::kTcpBadOffset;
      if (doff * 4 > avail) return ParseResult::kTcpTruncated;
      key.tp_src = raw16(p);
      key.tp_dst = raw16(p + 2);
      return ParseResult::kOk;
    }
    case kProtoUdp:
      if (avail < 8) return ParseResult::kUdpTruncated;
      key.tp_src = raw16(p);
      key.tp_dst = raw16(p + 2);
      return ParseResult::kOk;
    case kProtoSctp:
      if (avail < 12) return ParseResult::kSctpTruncated;
      key.tp_src = raw16(p);
      key.tp_dst = raw16(p + 2);
      return ParseResult::kOk;
    default:
      break;
  }
  if (proto == icmp_proto) {
    if (avail < 4) return ParseResult::kIcmpTruncated;
    key.icmp_type = p[0];
    key.icmp_code = p[1];
    return ParseResult::kOk;
  }
  key.l4_ofs = 0;  // a protocol whose header the key does not cover
  return ParseResult::kOk;
}

// The IP parsers read only data[0, len) (a chained mbuf's first segment);
// the lengths the headers state are checked against frame_len, the whole
// frame (len for a contiguous one). A header that the frame holds but its
// first segment does not parses as truncated: never read past len.
ParseResult parseIpv4(const uint8_t* data, uint32_t ofs, uint32_t len, uint32_t frame_len, FlowKey& key) {
  const uint32_t avail = len - ofs;
  if (avail < kIpv4MinHeaderLen) return ParseResult::kIpv4Truncated;
  const uint8_t* p = data + ofs;
  if ((p[0] >> 4) != 4) return ParseResult::kIpv4BadVersion;
  const uint32_t hlen = (p[0] & 0x0fU) * 4;
  if (hlen < kIpv4MinHeaderLen) return ParseResult::kIpv4BadIhl;
  if (hlen > avail) return ParseResult::kIpv4OptionsTruncated;
  const uint32_t total = host16(p + 2);
  if (total < hlen) return ParseResult::kIpv4BadTotalLength;
  if (total > frame_len - ofs) return ParseResult::kIpv4LengthTruncated;

  key.ip_tos = p[1];
  key.ttl_class = ttlClass(p[8]);
  key.ip_proto = p[9];
  key.ipv4_src = raw32(p + 12);
  key.ipv4_dst = raw32(p + 16);

  const uint16_t frag = host16(p + 6);
  const bool more_fragments = (frag & 0x2000) != 0;
  if ((frag & 0x1fff) != 0) {
    // Not the first fragment: what looks like an L4 header is payload.
    key.ip_frag = static_cast<uint8_t>(IpFrag::kLater);
    return ParseResult::kOk;
  }
  if (more_fragments) key.ip_frag = static_cast<uint8_t>(IpFrag::kFirst);
  // Ethernet padding after the IP datagram is not L4 data: bound by total.
  return parseL4(data, ofs + hlen, std::min(ofs + total, len), key.ip_proto, kProtoIcmp, key);
}

ParseResult parseIpv6(const uint8_t* data, uint32_t ofs, uint32_t len, uint32_t frame_len, FlowKey& key) {
  const uint32_t avail = len - ofs;
  if (avail < kIpv6HeaderLen) return ParseResult::kIpv6Truncated;
  const uint8_t* p = data + ofs;
  if ((p[0] >> 4) != 6) return ParseResult::kIpv6BadVersion;
  const uint32_t payload = host16(p + 4);
  if (kIpv6HeaderLen + payload > frame_len - ofs) return ParseResult::kIpv6LengthTruncated;

  key.ip_tos = static_cast<uint8_t>(((p[0] & 0x0f) << 4) | (p[1] >> 4));
  key.ttl_class = ttlClass(p[7]);
  std::memcpy(key.ipv6_src, p + 8, 16);
  std::memcpy(key.ipv6_dst, p + 24, 16);

  const uint32_t end = std::min(ofs + kIpv6HeaderLen + payload, len);
  uint32_t cur = ofs + kIpv6HeaderLen;
  uint8_t next = p[6];
  for (int n = 0;; ++n) {
    if (n == kMaxIpv6ExtHeaders) {
      key.ip_proto = next;
      return ParseResult::kIpv6TooManyExt;
    }
    uint32_t ext_len = 0;
    switch (next) {
      case kIpv6HopByHop:
      case kIpv6Routing:
      case kIpv6DestOpts:
        if (end - cur < 2) return ParseResult::kIpv6ExtTruncated;
        ext_len = (data[cur + 1] + 1U) * 8;
        break;
      case kIpv6Auth:
        if (end - cur < 2) return ParseResult::kIpv6ExtTruncated;
        ext_len = (data[cur + 1] + 2U) * 4;
        break;
      case kIpv6Fragment: {
        if (end - cur < 8) return ParseResult::kIpv6ExtTruncated;
        const uint16_t off_flags = host16(data + cur + 2);
        next = data[cur];
        cur += 8;
        if ((off_flags & 0xfff8) != 0) {
          key.ip_frag = static_cast<uint8_t>(IpFrag::kLater);
          key.ip_proto = next;
          return ParseResult::kOk;
        }
        if ((off_flags & 1) != 0) key.ip_frag = static_cast<uint8_t>(IpFrag::kFirst);
        continue;
      }
      default:
        key.ip_proto = next;
        return parseL4(data, cur, end, next, kProtoIcmpv6, key);
    }
    if (ext_len > end - cur) return ParseResult::kIpv6ExtTruncated;
    next = data[cur];
    cur += ext_len;
  }
}

ParseResult parseArp(const uint8_t* data, uint32_t ofs, uint32_t len, FlowKey& key) {
  if (len - ofs < kArpEthIpv4Len) return ParseResult::kArpTruncated;
  const uint8_t* p = data + ofs;
  // Ethernet (htype 1) / IPv4 (ptype 0x0800) with 6- and 4-byte addresses.
  if (host16(p) != 1 || host16(p + 2) != kEthTypeIpv4 || p[4] != 6 || p[5] != 4) {
    return ParseResult::kArpUnsupported;
  }
  key.arp_op = raw16(p + 6);
  std::memcpy(key.arp_sha, p + 8, 6);
  key.arp_spa = raw32(p + 14);
  key.arp_tpa = raw32(p + 24);
  return ParseResult::kOk;
}

ParseResult parseFrame(const uint8_t* data, uint32_t len, uint32_t frame_len, FlowKey& key) {
  if (len < kEthHeaderLen) return ParseResult::kEthTruncated;
  std::memcpy(key.eth_dst, data, 6);
  std::memcpy(key.eth_src, data + 6, 6);
  uint16_t type = raw16(data + 12);
  uint32_t ofs = kEthHeaderLen;
  if (type == be16(kEthTypeVlan) || type == be16(kEthTypeQinQ)) {
    if (len - ofs < kVlanTagLen) {
      key.eth_type = type;
      return ParseResult::kVlanTruncated;
    }
    key.flags |= kFlagVlan;
    key.vlan_tci = raw16(data + ofs);
    type = raw16(data + ofs + 2);
    ofs += kVlanTagLen;
  }
  key.eth_type = type;
  key.l3_ofs = static_cast<uint16_t>(ofs);
  if (type == be16(kEthTypeIpv4)) return parseIpv4(data, ofs, len, frame_len, key);
  if (type == be16(kEthTypeIpv6)) return parseIpv6(data, ofs, len, frame_len, key);
  if (type == be16(kEthTypeArp)) return parseArp(data, ofs, len, key);
  // Any other EtherType (including a second VLAN tag or an 802.3 length) is
  // not malformed: the key holds L2 only and the decision drops or forwards.
  key.l3_ofs = 0;
  return ParseResult::kOk;
}

// Zeroes key and parses the frame into it, without hashing.
ParseResult parseInto(const uint8_t* data, uint32_t len, uint32_t frame_len, uint16_t in_port, FlowKey& key) {
  std::memset(&key, 0, sizeof(key));
  key.in_port = in_port;
  const ParseResult r = parseFrame(data, len, frame_len, key);
  key.parse_result = static_cast<uint8_t>(r);
  return r;
}

// Little-endian loads of raw header bytes (the key keeps them in wire order).
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The common case in one pass, written as whole words: an untagged IPv4
// datagram without options or fragmentation, carrying UDP or TCP, whose
// headers the frame holds. Builds the same key (and hash) as parseInto +
// hashKey would, but from registers: no memset, no field-by-field stores to
// read back, no per-layer dispatch. bench/flow BM_Extract/rss:0: 60 -> ~25
// cycles per packet. Returns false, touching nothing, for any other frame;
// the general parser then decides (and classifies what is malformed).
bool extractPlainIpv4(const uint8_t* d, uint32_t len, uint16_t in_port, bool has_rss, uint32_t rss,
                      FlowKey& key) {
  constexpr uint32_t kL4Ofs = kEthHeaderLen + kIpv4MinHeaderLen;
  // 8 bytes of UDP header, or the first 8 of TCP's 20 (checked below).
  if (len < kL4Ofs + 8) return false;
  if (raw16(d + 12) != be16(kEthTypeIpv4)) return false;
  const uint8_t* ip = d + kEthHeaderLen;
  if (ip[0] != 0x45) return false;  // version 4, IHL 5
  const uint32_t total = host16(ip + 2);
  if (total > len - kEthHeaderLen) return false;
  if ((raw16(ip + 6) & be16(0x3fff)) != 0) return false;  // MF or an offset: a fragment
  const uint8_t proto = ip[9];
  if (proto == kProtoUdp) {
    if (total < kIpv4MinHeaderLen + 8) return false;
  } else if (proto == kProtoTcp) {
    if (total < kIpv4MinHeaderLen + 20) return false;  // also guards the data-offset read
    const uint32_t doff = ip[kIpv4MinHeaderLen + 12] >> 4;
    if (doff < 5 || doff * 4 > total - kIpv4MinHeaderLen) return false;
  } else {
    return false;
  }
  constexpr uint64_t kLow48 = (uint64_t{1} << 48) - 1;
  // in_port | eth_type | vlan_tci 0 | ip_proto | ttl_class
  const uint64_t w0 = uint64_t{in_port} | uint64_t{be16(kEthTypeIpv4)} << 16 | uint64_t{proto} << 48 |
                      uint64_t{ttlClass(ip[8])} << 56;
  const uint64_t w1 = load64(ip + 12);                           // ipv4_src, ipv4_dst
  const uint64_t w2 = uint64_t{raw32(ip + kIpv4MinHeaderLen)};   // ports; icmp, frag, flags 0
  const uint64_t w3 = load64(d) & kLow48;                         // eth_dst; arp_op 0
  const uint64_t w4 = (load64(d + 6) & kLow48) | uint64_t{ip[1]} << 48;  // eth_src, ip_tos
  const uint32_t hash = has_rss ? rss : hashMatchArea([=](uint32_t i) -> uint64_t {
    return i == 0 ? w0 : i == 1 ? w1 : i == 2 ? w2 : i == 3 ? w3 : i == 4 ? w4 : 0;
  });
  // Whole-word and 16-byte stores: a memset here compiles to `rep stos`,
  // whose start-up alone costs more than the rest of this function.
  KeyWord* out = key.words();
  out[0] = w0;
  out[1] = w1;
  out[2] = w2;
  out[3] = w3;
  out[4] = w4;
  out[5] = 0;
  const __m128i zero = _mm_setzero_si128();
  for (uint32_t i = 6; i < kMatchWords; i += 2) _mm_store_si128(reinterpret_cast<__m128i*>(out + i), zero);
  static_assert(kMatchWords % 2 == 0 && offsetof(FlowKey, hash) == kMatchWords * 8);
  // Metadata: hash, parse_result kOk (0), l3_ofs; then l4_ofs.
  static_assert(static_cast<uint8_t>(ParseResult::kOk) == 0);
  static_assert(offsetof(FlowKey, l3_ofs) == 118 && offsetof(FlowKey, l4_ofs) == 120);
  out[14] = uint64_t{hash} | uint64_t{kEthHeaderLen} << 48;
  out[15] = uint64_t{kL4Ofs};
  return true;
}

// The same one pass for an untagged IPv6 datagram whose next header is
// UDP or TCP (no extension header: those take the general parser), whose
// headers the frame holds. Without it an IPv6 packet paid the memset of the
// whole key, the per-layer dispatch and the second hashing pass: the l3v6
// node benchmark spent twice IPv4's cycles in extraction at 100k flows.
// Returns false, touching nothing, for any other frame.
bool extractPlainIpv6(const uint8_t* d, uint32_t len, uint16_t in_port, bool has_rss, uint32_t rss,
                      FlowKey& key) {
  constexpr uint32_t kL4Ofs = kEthHeaderLen + kIpv6HeaderLen;
  if (len < kL4Ofs + 8) return false;
  if (raw16(d + 12) != be16(kEthTypeIpv6)) return false;
  const uint8_t* ip = d + kEthHeaderLen;
  if ((ip[0] >> 4) != 6) return false;
  const uint32_t payload = host16(ip + 4);
  if (payload > len - kL4Ofs) return false;
  const uint8_t proto = ip[6];
  if (proto == kProtoUdp) {
    if (payload < 8) return false;
  } else if (proto == kProtoTcp) {
    if (payload < 20) return false;  // also guards the data-offset read
    const uint32_t doff = ip[kIpv6HeaderLen + 12] >> 4;
    if (doff < 5 || doff * 4 > payload) return false;
  } else {
    return false;
  }
  constexpr uint64_t kLow48 = (uint64_t{1} << 48) - 1;
  const auto traffic_class = static_cast<uint8_t>(((ip[0] & 0x0f) << 4) | (ip[1] >> 4));
  // in_port | eth_type | vlan_tci 0 | ip_proto | ttl_class (from the hop limit)
  const uint64_t w0 = uint64_t{in_port} | uint64_t{be16(kEthTypeIpv6)} << 16 | uint64_t{proto} << 48 |
                      uint64_t{ttlClass(ip[7])} << 56;
  const uint64_t w2 = uint64_t{raw32(ip + kIpv6HeaderLen)};  // ports; icmp, frag, flags 0
  const uint64_t w3 = load64(d) & kLow48;                      // eth_dst; arp_op 0
  const uint64_t w4 = (load64(d + 6) & kLow48) | uint64_t{traffic_class} << 48;  // eth_src, ip_tos
  const uint64_t w9 = load64(ip + 8);  // ipv6_src
  const uint64_t w10 = load64(ip + 16);
  const uint64_t w11 = load64(ip + 24);  // ipv6_dst
  const uint64_t w12 = load64(ip + 32);
  const uint32_t hash = has_rss ? rss : hashMatchArea([=](uint32_t i) -> uint64_t {
    return i == 0 ? w0 : i == 2 ? w2 : i == 3 ? w3 : i == 4 ? w4 : i == 9 ? w9 : i == 10 ? w10 : i == 11 ? w11
           : i == 12 ? w12 : 0;
  });
  static_assert(offsetof(FlowKey, ipv6_src) == 9 * 8 && offsetof(FlowKey, ipv6_dst) == 11 * 8);
  KeyWord* out = key.words();
  const __m128i zero = _mm_setzero_si128();
  out[0] = w0;
  out[1] = 0;
  out[2] = w2;
  out[3] = w3;
  out[4] = w4;
  out[5] = 0;
  _mm_store_si128(reinterpret_cast<__m128i*>(out + 6), zero);
  out[8] = 0;
  out[9] = w9;
  out[10] = w10;
  out[11] = w11;
  out[12] = w12;
  out[13] = 0;
  out[14] = uint64_t{hash} | uint64_t{kEthHeaderLen} << 48;
  out[15] = uint64_t{kL4Ofs};
  return true;
}

// The header bytes a plain frame's key is made of, compared with those of a
// run's first frame (a run is of one family: the first frame's).
// IPv4: Ethernet addresses and type, version/IHL, TOS, total length,
// fragment field, TTL, protocol, addresses, ports (bytes 0..37) and, for TCP,
// the data offset (byte 46), which decided whether the frame was plain. IP
// identification and checksum (bytes 18-19, 24-25) change from packet to
// packet of one flow and are not in the key.
// IPv6: Ethernet, version and traffic class, payload length, next header,
// hop limit, addresses, ports (bytes 0..57 but the flow label's 20 bits,
// which the key does not hold) and, for TCP, the data offset (byte 66).
// Cost when frames do not repeat (many flows, round-robin): one 12-byte
// scalar compare (addresses, ports: where flows differ) per frame.
class HeaderRun {
 public:
  // Frame d (of length len) took extractPlainIpv4's or extractPlainIpv6's
  // path: it starts a run. Only remembered: most runs are never continued
  // (many flows).
  void start4(const uint8_t* d, uint32_t len) {
    head_ = d;
    head_len_ = len;
    ipv6_ = false;
  }
  void start6(const uint8_t* d, uint32_t len) {
    head_ = d;
    head_len_ = len;
    ipv6_ = true;
  }
  void stop() { head_len_ = 0; }

  // True when frame d has the run's key.
  bool continues(const uint8_t* d, uint32_t len) const { return ipv6_ ? continues6(d, len) : continues4(d, len); }

 private:
  static constexpr uint32_t kBytes4 = 48;
  static constexpr uint32_t kAddressOfs4 = kEthHeaderLen + 12;  // IPv4 source, destination, then ports
  // IPv6 frames compare bytes [0, 58): the low half of the destination and the ports first.
  static constexpr uint32_t kBytes6 = kEthHeaderLen + kIpv6HeaderLen + 4;
  static constexpr uint32_t kAddressOfs6 = kEthHeaderLen + 32;

  bool continues4(const uint8_t* d, uint32_t len) const {
    // Frames shorter than kBytes4 are never compared (nor start runs).
    if (head_len_ < kBytes4 || len < kBytes4) return false;
    if (((load64(d + kAddressOfs4) ^ load64(head_ + kAddressOfs4)) |
         (raw32(d + kAddressOfs4 + 8) ^ raw32(head_ + kAddressOfs4 + 8))) != 0) {
      return false;
    }
    // Equal total lengths (compared below): the datagram must fit this frame too.
    if (len < kEthHeaderLen + host16(head_ + kEthHeaderLen + 2)) return false;
    const bool tcp = head_[kEthHeaderLen + 9] == kProtoTcp;
    __m128i diff = _mm_xor_si128(load128(d), load128(head_));
    diff = _mm_or_si128(diff, _mm_and_si128(_mm_xor_si128(load128(d + 16), load128(head_ + 16)), mask4a()));
    diff = _mm_or_si128(diff, _mm_and_si128(_mm_xor_si128(load128(d + 32), load128(head_ + 32)), mask4b(tcp)));
    return _mm_testz_si128(diff, diff) != 0;
  }

  bool continues6(const uint8_t* d, uint32_t len) const {
    // A plain IPv6 frame holds at least kBytes6 (UDP) and TCP's byte 66.
    if (head_len_ < kBytes6 || len < kBytes6) return false;
    if (((load64(d + kAddressOfs6) ^ load64(head_ + kAddressOfs6)) |
         (raw32(d + kAddressOfs6 + 8) ^ raw32(head_ + kAddressOfs6 + 8))) != 0) {
      return false;
    }
    // Equal payload lengths (compared below): the datagram must fit this frame too.
    if (len < kEthHeaderLen + kIpv6HeaderLen + host16(head_ + kEthHeaderLen + 4)) return false;
    constexpr uint32_t kDataOffset = kEthHeaderLen + kIpv6HeaderLen + 12;
    if (head_[kEthHeaderLen + 6] == kProtoTcp && ((d[kDataOffset] ^ head_[kDataOffset]) & 0xf0) != 0) return false;
    __m128i diff = _mm_and_si128(_mm_xor_si128(load128(d), load128(head_)), mask6a());
    diff = _mm_or_si128(diff, _mm_and_si128(_mm_xor_si128(load128(d + 16), load128(head_ + 16)), mask6b()));
    diff = _mm_or_si128(diff, _mm_xor_si128(load128(d + 32), load128(head_ + 32)));
    diff = _mm_or_si128(diff, _mm_xor_si128(load128(d + kBytes6 - 16), load128(head_ + kBytes6 - 16)));
    return _mm_testz_si128(diff, diff) != 0;
  }

  static __m128i load128(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  // Byte i of a mask is byte 16 + i (mask4a) or 32 + i (mask4b) of an IPv4
  // frame, or byte i (mask6a) or 16 + i (mask6b) of an IPv6 one; set bits
  // are compared. Functions, not statics: they fold to constants.
  static __m128i mask4a() { return _mm_setr_epi8(-1, -1, 0, 0, -1, -1, -1, -1, 0, 0, -1, -1, -1, -1, -1, -1); }
  static __m128i mask4b(bool tcp) {
    return _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, static_cast<char>(tcp ? 0xf0 : 0), 0);
  }
  // Byte 15 is the traffic class's low nibble and the flow label's high
  // one; bytes 16 and 17 the rest of the flow label.
  static __m128i mask6a() {
    return _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, static_cast<char>(0xf0));
  }
  static __m128i mask6b() { return _mm_setr_epi8(0, 0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1); }

  const uint8_t* head_ = nullptr;
  uint32_t head_len_ = 0;  // 0: no run to continue
  bool ipv6_ = false;
};

}  // namespace

ParseResult extractFlowKey(const uint8_t* data, uint32_t len, uint16_t in_port,
                           std::optional<uint32_t> rss_hash, FlowKey& key) {
  const ParseResult r = parseInto(data, len, len, in_port, key);
  if (r == ParseResult::kOk) {
    key.hash = rss_hash.has_value() ? *rss_hash : hashKey(key);
  }
  return r;
}

uint32_t extractFlowKeyRuns(const PacketRef* pkts, uint32_t n, uint16_t in_port, uint64_t breaks, FlowKey* keys,
                            PacketRun* runs) {
  // Bit r set: keys[r] came from the general parser and still needs its hash.
  uint64_t general = 0;
  static_assert(kMaxBurst <= 64);
  HeaderRun run;
  uint32_t r = 0;  // runs so far
  for (uint32_t i = 0; i < n; ++i) {
    if (i + 1 < n) {
      // The first line holds Ethernet, IP and (without options) L4 headers.
      __builtin_prefetch(pkts[i + 1].data);
    }
    const PacketRef& p = pkts[i];
    if (((breaks >> i) & 1) == 0 && run.continues(p.data, p.len)) {
      ++runs[r - 1].count;
      continue;
    }
    runs[r] = {static_cast<uint16_t>(i), 1};
    if (extractPlainIpv4(p.data, p.len, in_port, p.has_rss, p.rss_hash, keys[r])) {
      run.start4(p.data, p.len);
    } else if (extractPlainIpv6(p.data, p.len, in_port, p.has_rss, p.rss_hash, keys[r])) {
      run.start6(p.data, p.len);
    } else {
      run.stop();
      const uint32_t frame_len = p.frame_len != 0 ? p.frame_len : p.len;
      if (parseInto(p.data, p.len, frame_len, in_port, keys[r]) == ParseResult::kOk) general |= uint64_t{1} << r;
    }
    ++r;
  }
  // Hash in a second pass: the key was just written field by field, and
  // reading it back as whole words right away would stall on store-to-load
  // forwarding. bench/flow BM_Extract/rss:0 went from ~84 to ~59 cycles per
  // packet with this split (rss:1, no hashing, ~45).
  while (general != 0) {
    const auto k = static_cast<uint32_t>(__builtin_ctzll(general));
    general &= general - 1;
    const PacketRef& p = pkts[runs[k].first];
    keys[k].hash = p.has_rss ? p.rss_hash : hashKey(keys[k]);
  }
  return r;
}

uint32_t extractFlowKeys(const PacketRef* pkts, uint32_t n, uint16_t in_port, FlowKey* keys) {
  PacketRun runs[kMaxBurst];
  extractFlowKeyRuns(pkts, n, in_port, ~uint64_t{0}, keys, runs);  // every packet its own run
  uint32_t ok = 0;
  for (uint32_t i = 0; i < n; ++i) ok += keys[i].parse_result == static_cast<uint8_t>(ParseResult::kOk);
  return ok;
}

}  // namespace sluice::flow
