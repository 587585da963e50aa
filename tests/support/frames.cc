#include "tests/support/frames.h"

#include <algorithm>
#include <cstring>

namespace sluice::test {
namespace {

void put16(Frame& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}
void put32(Frame& f, size_t at, uint32_t v) {
  put16(f, at, static_cast<uint16_t>(v >> 16));
  put16(f, at + 2, static_cast<uint16_t>(v));
}
uint16_t get16(const Frame& f, size_t at) { return static_cast<uint16_t>(f[at] << 8 | f[at + 1]); }

constexpr size_t kEth = 14, kIp = 20, kUdp = 8;

}  // namespace

uint16_t internetChecksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(data[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

Frame udpFrame(const UdpFrameSpec& s) {
  size_t len = std::max(s.frame_len, kEth + kIp + kUdp + 4);
  Frame f(len, 0);
  std::memcpy(&f[0], s.dst_mac.bytes.data(), 6);
  std::memcpy(&f[6], s.src_mac.bytes.data(), 6);
  put16(f, 12, 0x0800);
  f[kEth] = 0x45;
  put16(f, kEth + 2, static_cast<uint16_t>(len - kEth));
  put16(f, kEth + 4, static_cast<uint16_t>(s.sequence));  // IP id
  f[kEth + 8] = s.ttl;
  f[kEth + 9] = 17;  // UDP
  put32(f, kEth + 12, s.src_ip.value);
  put32(f, kEth + 16, s.dst_ip.value);
  put16(f, kEth + 10, internetChecksum(&f[kEth], kIp));
  size_t udp = kEth + kIp;
  put16(f, udp, s.src_port);
  put16(f, udp + 2, s.dst_port);
  put16(f, udp + 4, static_cast<uint16_t>(len - udp));
  put16(f, udp + 6, 0);  // no UDP checksum (allowed for IPv4)
  put32(f, udp + kUdp, s.sequence);
  for (size_t i = udp + kUdp + 4; i < len; ++i) f[i] = static_cast<uint8_t>(i);
  return f;
}

namespace {
constexpr size_t kIp6 = 40;

// The 16-bit one's complement sum behind a checksum, over pseudo-header and
// upper-layer bytes, folded and inverted: what the checksum field holds.
uint16_t upperLayerChecksum6(const Frame& f, size_t l4, size_t l4_len, uint8_t next_header) {
  Frame pseudo(40 + l4_len, 0);
  std::memcpy(&pseudo[0], &f[kEth + 8], 32);  // source, destination
  put32(pseudo, 32, static_cast<uint32_t>(l4_len));
  pseudo[39] = next_header;
  std::memcpy(&pseudo[40], &f[l4], l4_len);
  return internetChecksum(pseudo.data(), pseudo.size());
}

void ipv6Header(Frame& f, const Ipv6Address& src, const Ipv6Address& dst, size_t payload, uint8_t next,
                uint8_t hop_limit) {
  put16(f, 12, 0x86dd);
  f[kEth] = 0x60;
  put16(f, kEth + 4, static_cast<uint16_t>(payload));
  f[kEth + 6] = next;
  f[kEth + 7] = hop_limit;
  std::memcpy(&f[kEth + 8], src.bytes.data(), 16);
  std::memcpy(&f[kEth + 24], dst.bytes.data(), 16);
}
}  // namespace

Frame udp6Frame(const Udp6FrameSpec& s) {
  const size_t len = std::max(s.frame_len, kEth + kIp6 + kUdp + 4);
  Frame f(len, 0);
  std::memcpy(&f[0], s.dst_mac.bytes.data(), 6);
  std::memcpy(&f[6], s.src_mac.bytes.data(), 6);
  const size_t udp = kEth + kIp6;
  ipv6Header(f, s.src_ip, s.dst_ip, len - udp, 17, s.hop_limit);
  put16(f, udp, s.src_port);
  put16(f, udp + 2, s.dst_port);
  put16(f, udp + 4, static_cast<uint16_t>(len - udp));
  put32(f, udp + kUdp, s.sequence);
  for (size_t i = udp + kUdp + 4; i < len; ++i) f[i] = static_cast<uint8_t>(i);
  uint16_t sum = upperLayerChecksum6(f, udp, len - udp, 17);
  put16(f, udp + 6, sum == 0 ? 0xffff : sum);
  return f;
}

Frame icmpEcho(MacAddress src_mac, MacAddress dst_mac, Ipv4Address src_ip, Ipv4Address dst_ip, uint8_t type,
               uint16_t id, uint16_t sequence, uint8_t ttl) {
  constexpr size_t kData = 32;
  Frame f(kEth + kIp + 8 + kData, 0);
  std::memcpy(&f[0], dst_mac.bytes.data(), 6);
  std::memcpy(&f[6], src_mac.bytes.data(), 6);
  put16(f, 12, 0x0800);
  f[kEth] = 0x45;
  put16(f, kEth + 2, static_cast<uint16_t>(f.size() - kEth));
  f[kEth + 8] = ttl;
  f[kEth + 9] = 1;  // ICMP
  put32(f, kEth + 12, src_ip.value);
  put32(f, kEth + 16, dst_ip.value);
  put16(f, kEth + 10, internetChecksum(&f[kEth], kIp));
  const size_t icmp = kEth + kIp;
  f[icmp] = type;
  put16(f, icmp + 4, id);
  put16(f, icmp + 6, sequence);
  for (size_t i = 0; i < kData; ++i) f[icmp + 8 + i] = static_cast<uint8_t>(0x40 + i);
  put16(f, icmp + 2, internetChecksum(&f[icmp], f.size() - icmp));
  return f;
}

Frame icmpv6Echo(MacAddress src_mac, MacAddress dst_mac, const Ipv6Address& src_ip, const Ipv6Address& dst_ip,
                 uint8_t type, uint16_t id, uint16_t sequence, uint8_t hop_limit) {
  constexpr size_t kData = 32;
  Frame f(kEth + kIp6 + 8 + kData, 0);
  std::memcpy(&f[0], dst_mac.bytes.data(), 6);
  std::memcpy(&f[6], src_mac.bytes.data(), 6);
  const size_t icmp = kEth + kIp6;
  ipv6Header(f, src_ip, dst_ip, f.size() - icmp, 58, hop_limit);
  f[icmp] = type;
  put16(f, icmp + 4, id);
  put16(f, icmp + 6, sequence);
  for (size_t i = 0; i < kData; ++i) f[icmp + 8 + i] = static_cast<uint8_t>(0x40 + i);
  put16(f, icmp + 2, upperLayerChecksum6(f, icmp, f.size() - icmp, 58));
  return f;
}

uint16_t icmpv6ChecksumOf(const Frame& f, size_t icmp_len) {
  Frame zeroed = f;
  zeroed[kEth + kIp6 + 2] = zeroed[kEth + kIp6 + 3] = 0;
  return upperLayerChecksum6(zeroed, kEth + kIp6, icmp_len, 58);
}

Frame neighborSolicitation(MacAddress sender_mac, Ipv6Address sender_ip, Ipv6Address target,
                           bool with_source_option, const Ipv6Address* unicast_dst) {
  const bool option = with_source_option && !sender_ip.isZero();
  const size_t icmp_len = 24 + (option ? 8 : 0);
  Frame f(kEth + kIp6 + icmp_len, 0);
  Ipv6Address dst;
  MacAddress dst_mac;
  if (unicast_dst != nullptr) {
    dst = *unicast_dst;
    dst_mac = MacAddress{{0x02, 0, 0, 0, 0, 1}};
  } else {
    // ff02::1:ffXX:XXXX and its Ethernet group 33:33:ff:XX:XX:XX.
    dst.bytes = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target.bytes[13], target.bytes[14], target.bytes[15]};
    dst_mac = MacAddress{{0x33, 0x33, 0xff, target.bytes[13], target.bytes[14], target.bytes[15]}};
  }
  std::memcpy(&f[0], dst_mac.bytes.data(), 6);
  std::memcpy(&f[6], sender_mac.bytes.data(), 6);
  ipv6Header(f, sender_ip, dst, icmp_len, 58, 255);
  const size_t icmp = kEth + kIp6;
  f[icmp] = 135;
  std::memcpy(&f[icmp + 8], target.bytes.data(), 16);
  if (option) {
    f[icmp + 24] = 1;
    f[icmp + 25] = 1;
    std::memcpy(&f[icmp + 26], sender_mac.bytes.data(), 6);
  }
  put16(f, icmp + 2, icmpv6ChecksumOf(f, icmp_len));
  return f;
}

Frame routerSolicitation(MacAddress sender_mac, Ipv6Address sender_ip, bool with_source_option,
                         const Ipv6Address* unicast_dst) {
  const size_t icmp_len = 8 + (with_source_option ? 8 : 0);
  Frame f(kEth + kIp6 + icmp_len, 0);
  Ipv6Address dst;
  MacAddress dst_mac;
  if (unicast_dst != nullptr) {
    dst = *unicast_dst;
    dst_mac = MacAddress{{0x02, 0, 0, 0, 0, 1}};
  } else {
    // ff02::2, all routers, and its Ethernet group 33:33:00:00:00:02.
    dst.bytes = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    dst_mac = MacAddress{{0x33, 0x33, 0, 0, 0, 2}};
  }
  std::memcpy(&f[0], dst_mac.bytes.data(), 6);
  std::memcpy(&f[6], sender_mac.bytes.data(), 6);
  ipv6Header(f, sender_ip, dst, icmp_len, 58, 255);
  const size_t icmp = kEth + kIp6;
  f[icmp] = 133;
  if (with_source_option) {
    f[icmp + 8] = 1;
    f[icmp + 9] = 1;
    std::memcpy(&f[icmp + 10], sender_mac.bytes.data(), 6);
  }
  put16(f, icmp + 2, icmpv6ChecksumOf(f, icmp_len));
  return f;
}

uint32_t udp6Sequence(const Frame& f) {
  const size_t at = kEth + kIp6 + kUdp;
  return static_cast<uint32_t>(f[at] << 24 | f[at + 1] << 16 | f[at + 2] << 8 | f[at + 3]);
}

Frame icmpTimeExceeded(const Frame& original, MacAddress gateway_mac, Ipv4Address gateway) {
  return icmpError(original, gateway_mac, gateway, 11, 0, 0);
}

Frame icmpError(const Frame& original, MacAddress gateway_mac, Ipv4Address gateway, uint8_t type, uint8_t code,
                uint16_t next_hop_mtu) {
  const size_t quote = std::min<size_t>(get16(original, kEth + 2), 548);
  Frame f(kEth + kIp + 8 + quote, 0);
  std::memcpy(&f[0], &original[6], 6);
  std::memcpy(&f[6], gateway_mac.bytes.data(), 6);
  put16(f, 12, 0x0800);
  f[kEth] = 0x45;
  f[kEth + 1] = 0xc0;
  put16(f, kEth + 2, static_cast<uint16_t>(kIp + 8 + quote));
  put16(f, kEth + 6, 0x4000);
  f[kEth + 8] = 64;
  f[kEth + 9] = 1;  // ICMP
  put32(f, kEth + 12, gateway.value);
  std::memcpy(&f[kEth + 16], &original[kEth + 12], 4);
  put16(f, kEth + 10, internetChecksum(&f[kEth], kIp));
  f[kEth + kIp] = type;
  f[kEth + kIp + 1] = code;
  put16(f, kEth + kIp + 6, next_hop_mtu);
  std::memcpy(&f[kEth + kIp + 8], &original[kEth], quote);
  put16(f, kEth + kIp + 2, internetChecksum(&f[kEth + kIp], f.size() - kEth - kIp));
  return f;
}

Frame icmpv6Error(const Frame& original, MacAddress gateway_mac, const Ipv6Address& gateway, uint8_t type,
                  uint8_t code, uint32_t mtu) {
  const size_t quote = std::min<size_t>(kIp6 + get16(original, kEth + 4), 1280 - kIp6 - 8);
  Frame f(kEth + kIp6 + 8 + quote, 0);
  std::memcpy(&f[0], &original[6], 6);
  std::memcpy(&f[6], gateway_mac.bytes.data(), 6);
  put16(f, 12, 0x86dd);
  f[kEth] = 0x60;
  put16(f, kEth + 4, static_cast<uint16_t>(8 + quote));
  f[kEth + 6] = 58;  // ICMPv6
  f[kEth + 7] = 64;
  std::memcpy(&f[kEth + 8], gateway.bytes.data(), 16);
  std::memcpy(&f[kEth + 24], &original[kEth + 8], 16);  // back to the invoking packet's source
  f[kEth + kIp6] = type;
  f[kEth + kIp6 + 1] = code;
  put32(f, kEth + kIp6 + 4, mtu);
  std::memcpy(&f[kEth + kIp6 + 8], &original[kEth], quote);
  put16(f, kEth + kIp6 + 2, icmpv6ChecksumOf(f, 8 + quote));
  return f;
}

Frame arpRequest(MacAddress sender_mac, Ipv4Address sender_ip, Ipv4Address target_ip) {
  Frame f(60, 0);
  std::memset(&f[0], 0xff, 6);
  std::memcpy(&f[6], sender_mac.bytes.data(), 6);
  put16(f, 12, 0x0806);
  put16(f, 14, 1);       // Ethernet
  put16(f, 16, 0x0800);  // IPv4
  f[18] = 6;
  f[19] = 4;
  put16(f, 20, 1);  // request
  std::memcpy(&f[22], sender_mac.bytes.data(), 6);
  put32(f, 28, sender_ip.value);
  put32(f, 38, target_ip.value);
  return f;
}

MacAddress ethDst(const Frame& f) {
  MacAddress m;
  std::memcpy(m.bytes.data(), &f[0], 6);
  return m;
}
MacAddress ethSrc(const Frame& f) {
  MacAddress m;
  std::memcpy(m.bytes.data(), &f[6], 6);
  return m;
}
uint16_t etherType(const Frame& f) { return get16(f, 12); }
uint8_t ipv4Ttl(const Frame& f) { return f[kEth + 8]; }
bool ipv4ChecksumValid(const Frame& f) { return internetChecksum(&f[kEth], (f[kEth] & 0x0f) * 4u) == 0; }
uint32_t udpSequence(const Frame& f) {
  size_t at = kEth + kIp + kUdp;
  return static_cast<uint32_t>(get16(f, at)) << 16 | get16(f, at + 2);
}

}  // namespace sluice::test
