#include "dataplane/modules/overlay/arp_frames.h"

#include <cstring>

#include "common/big_endian.h"

namespace sluice {
namespace {


constexpr size_t kArpFrameLen = 14 + 28;
constexpr size_t kMinFrame = 60;  // Ethernet minimum without FCS

}  // namespace

std::vector<uint8_t> buildArpRequest(MacAddress mac, Ipv4Address ip, Ipv4Address target) {
  std::vector<uint8_t> f(kMinFrame, 0);
  std::memset(f.data(), 0xff, 6);
  std::memcpy(f.data() + 6, mac.bytes.data(), 6);
  storeBe16(f.data() + 12, 0x0806);
  uint8_t* a = f.data() + 14;
  storeBe16(a, 1);          // Ethernet
  storeBe16(a + 2, 0x0800);  // IPv4
  a[4] = 6;
  a[5] = 4;
  storeBe16(a + 6, 1);  // request
  std::memcpy(a + 8, mac.bytes.data(), 6);
  storeBe32(a + 14, ip.value);
  // target hardware address stays zero
  storeBe32(a + 24, target.value);
  return f;
}

std::vector<uint8_t> tagFrame(std::vector<uint8_t> frame, uint16_t vlan) {
  const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(vlan >> 8), static_cast<uint8_t>(vlan)};
  frame.insert(frame.begin() + 12, tag, tag + 4);
  return frame;
}

std::optional<ArpSender> parseArp(const uint8_t* data, size_t len) {
  if (len < kArpFrameLen || loadBe16(data + 12) != 0x0806) return std::nullopt;
  const uint8_t* a = data + 14;
  if (loadBe16(a) != 1 || loadBe16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4) return std::nullopt;
  ArpSender s;
  std::memcpy(s.eth_dst.bytes.data(), data, 6);
  s.op = loadBe16(a + 6);
  std::memcpy(s.mac.bytes.data(), a + 8, 6);
  s.ip = Ipv4Address{loadBe32(a + 14)};
  s.target = Ipv4Address{loadBe32(a + 24)};
  return s;
}

}  // namespace sluice
