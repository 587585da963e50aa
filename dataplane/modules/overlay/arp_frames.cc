#include "dataplane/modules/overlay/arp_frames.h"

#include <cstring>

namespace sluice {
namespace {

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) {
  put16(p, static_cast<uint16_t>(v >> 16));
  put16(p + 2, static_cast<uint16_t>(v));
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t get32(const uint8_t* p) { return (uint32_t{get16(p)} << 16) | get16(p + 2); }

constexpr size_t kArpFrameLen = 14 + 28;
constexpr size_t kMinFrame = 60;  // Ethernet minimum without FCS

}  // namespace

std::vector<uint8_t> buildArpRequest(MacAddress mac, Ipv4Address ip, Ipv4Address target) {
  std::vector<uint8_t> f(kMinFrame, 0);
  std::memset(f.data(), 0xff, 6);
  std::memcpy(f.data() + 6, mac.bytes.data(), 6);
  put16(f.data() + 12, 0x0806);
  uint8_t* a = f.data() + 14;
  put16(a, 1);          // Ethernet
  put16(a + 2, 0x0800);  // IPv4
  a[4] = 6;
  a[5] = 4;
  put16(a + 6, 1);  // request
  std::memcpy(a + 8, mac.bytes.data(), 6);
  put32(a + 14, ip.value);
  // target hardware address stays zero
  put32(a + 24, target.value);
  return f;
}

std::vector<uint8_t> tagFrame(std::vector<uint8_t> frame, uint16_t vlan) {
  const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(vlan >> 8), static_cast<uint8_t>(vlan)};
  frame.insert(frame.begin() + 12, tag, tag + 4);
  return frame;
}

std::optional<ArpSender> parseArp(const uint8_t* data, size_t len) {
  if (len < kArpFrameLen || get16(data + 12) != 0x0806) return std::nullopt;
  const uint8_t* a = data + 14;
  if (get16(a) != 1 || get16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4) return std::nullopt;
  ArpSender s;
  std::memcpy(s.eth_dst.bytes.data(), data, 6);
  s.op = get16(a + 6);
  std::memcpy(s.mac.bytes.data(), a + 8, 6);
  s.ip = Ipv4Address{get32(a + 14)};
  s.target = Ipv4Address{get32(a + 24)};
  return s;
}

}  // namespace sluice
