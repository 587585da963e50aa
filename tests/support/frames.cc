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

Frame icmpTimeExceeded(const Frame& original, MacAddress gateway_mac, Ipv4Address gateway) {
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
  f[kEth + kIp] = 11;  // Time Exceeded, code 0: TTL exceeded in transit
  std::memcpy(&f[kEth + kIp + 8], &original[kEth], quote);
  put16(f, kEth + kIp + 2, internetChecksum(&f[kEth + kIp], f.size() - kEth - kIp));
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
