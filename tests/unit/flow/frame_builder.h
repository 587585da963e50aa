// Builds Ethernet frames byte by byte for the flow tests, the fuzz seed
// corpus and the benchmarks: Ethernet (+VLAN), IPv4, IPv6 (+extension
// headers), ARP, TCP, UDP, ICMP. Values are given in host order; the builder
// writes them in network order. Test-only; any thread.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace sluice::flow::testing {

using Mac = std::array<uint8_t, 6>;
using Ip6 = std::array<uint8_t, 16>;

inline constexpr Mac kMacA = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
inline constexpr Mac kMacB = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};

// Host-order value -> the raw network-order representation the key stores.
inline uint16_t be16(uint16_t v) { return static_cast<uint16_t>((v >> 8) | (v << 8)); }
inline uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }

class Frame {
 public:
  Frame& u8(uint8_t v) {
    bytes_.push_back(v);
    return *this;
  }
  Frame& u16(uint16_t v) { return u8(static_cast<uint8_t>(v >> 8)).u8(static_cast<uint8_t>(v)); }
  Frame& u32(uint32_t v) { return u16(static_cast<uint16_t>(v >> 16)).u16(static_cast<uint16_t>(v)); }
  template <size_t N>
  Frame& raw(const std::array<uint8_t, N>& a) {
    bytes_.insert(bytes_.end(), a.begin(), a.end());
    return *this;
  }
  Frame& raw(const std::vector<uint8_t>& v) {
    bytes_.insert(bytes_.end(), v.begin(), v.end());
    return *this;
  }
  Frame& zeros(size_t n) {
    bytes_.insert(bytes_.end(), n, 0);
    return *this;
  }
  Frame& eth(const Mac& dst, const Mac& src, uint16_t type) { return raw(dst).raw(src).u16(type); }
  Frame& vlan(uint16_t tci, uint16_t inner_type) { return u16(tci).u16(inner_type); }
  // IPv4 header; l4_len = bytes following the header (and its options).
  Frame& ipv4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t l4_len, uint8_t ttl = 64,
              uint16_t frag = 0, uint8_t ihl = 5, uint8_t tos = 0) {
    const uint32_t hlen = ihl * 4U;
    u8(static_cast<uint8_t>(0x40 | (ihl & 0x0f))).u8(tos);
    u16(static_cast<uint16_t>((hlen < 20 ? 20 : hlen) + l4_len));
    u16(0x1234).u16(frag).u8(ttl).u8(proto).u16(0).u32(src).u32(dst);
    if (hlen > 20) zeros(hlen - 20);
    return *this;
  }
  Frame& ipv6(const Ip6& src, const Ip6& dst, uint8_t next, uint16_t payload_len,
              uint8_t hop = 64, uint8_t tclass = 0) {
    u32(0x60000000U | (static_cast<uint32_t>(tclass) << 20) | 0x12345U);
    u16(payload_len).u8(next).u8(hop);
    return raw(src).raw(dst);
  }
  // Generic 8-byte IPv6 extension header (hop-by-hop, routing, dest options).
  Frame& ipv6Ext(uint8_t next) { return u8(next).u8(0).zeros(6); }
  Frame& ipv6Frag(uint8_t next, uint16_t offset_units, bool more) {
    return u8(next).u8(0).u16(static_cast<uint16_t>((offset_units << 3) | (more ? 1 : 0))).u32(0xabcd);
  }
  Frame& udp(uint16_t sport, uint16_t dport, uint16_t payload = 0) {
    return u16(sport).u16(dport).u16(static_cast<uint16_t>(8 + payload)).u16(0).zeros(payload);
  }
  Frame& tcp(uint16_t sport, uint16_t dport, uint8_t doff = 5) {
    u16(sport).u16(dport).u32(1).u32(0).u8(static_cast<uint8_t>(doff << 4)).u8(0x02);
    u16(65535).u16(0).u16(0);
    if (doff > 5) zeros((doff - 5) * 4U);
    return *this;
  }
  Frame& icmp(uint8_t type, uint8_t code) { return u8(type).u8(code).u16(0).u32(0x00010001); }
  Frame& arp(uint16_t op, const Mac& sha, uint32_t spa, const Mac& tha, uint32_t tpa,
             uint16_t htype = 1, uint16_t ptype = 0x0800) {
    return u16(htype).u16(ptype).u8(6).u8(4).u16(op).raw(sha).u32(spa).raw(tha).u32(tpa);
  }

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  uint32_t size() const { return static_cast<uint32_t>(bytes_.size()); }
  const uint8_t* data() const { return bytes_.data(); }

 private:
  std::vector<uint8_t> bytes_;
};

// Common frames (no L4 payload, so every byte is needed by the parser).
inline Frame udp4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t ttl = 64) {
  Frame f;
  f.eth(kMacA, kMacB, 0x0800).ipv4(src, dst, 17, 8, ttl).udp(sport, dport);
  return f;
}
inline Frame tcp4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t doff = 5) {
  Frame f;
  f.eth(kMacA, kMacB, 0x0800).ipv4(src, dst, 6, static_cast<uint16_t>(doff * 4)).tcp(sport, dport, doff);
  return f;
}
inline Frame icmp4(uint32_t src, uint32_t dst, uint8_t type, uint8_t code) {
  Frame f;
  f.eth(kMacA, kMacB, 0x0800).ipv4(src, dst, 1, 8).icmp(type, code);
  return f;
}
inline Frame arpRequest(uint32_t spa, uint32_t tpa) {
  Frame f;
  f.eth({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kMacB, 0x0806).arp(1, kMacB, spa, Mac{}, tpa);
  return f;
}
inline Frame udp6(const Ip6& src, const Ip6& dst, uint16_t sport, uint16_t dport) {
  Frame f;
  f.eth(kMacA, kMacB, 0x86dd).ipv6(src, dst, 17, 8).udp(sport, dport);
  return f;
}

}  // namespace sluice::flow::testing
