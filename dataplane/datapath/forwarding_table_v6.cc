#include "dataplane/datapath/forwarding_table_v6.h"

#include <algorithm>
#include <bit>

namespace sluice {

Ipv6Address linkLocalFromMac(const MacAddress& mac) {
  Ipv6Address a;
  a.bytes[0] = 0xfe;
  a.bytes[1] = 0x80;
  // The universal/local bit flipped, ff:fe in the middle.
  a.bytes[8] = static_cast<uint8_t>(mac.bytes[0] ^ 0x02);
  a.bytes[9] = mac.bytes[1];
  a.bytes[10] = mac.bytes[2];
  a.bytes[11] = 0xff;
  a.bytes[12] = 0xfe;
  a.bytes[13] = mac.bytes[3];
  a.bytes[14] = mac.bytes[4];
  a.bytes[15] = mac.bytes[5];
  return a;
}

Ipv6ForwardingTable::Ipv6ForwardingTable(const std::vector<Entry>& entries) {
  // At most half full keeps probe sequences short; at least 16 slots.
  const size_t capacity = std::bit_ceil(std::max<size_t>(16, entries.size() * 2));
  slots_.assign(capacity, PodRoute6{});
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (const Entry& e : entries) {
    const Ipv6Key key = Ipv6Key::load(e.ip.bytes.data());
    if (key.isZero()) continue;
    uint32_t i = slotFor(key);
    while (!slots_[i].ip.isZero() && !(slots_[i].ip == key)) i = (i + 1) & mask_;
    if (slots_[i].ip.isZero()) {
      ++size_;
      addresses_.push_back(e.ip);
    }
    slots_[i].ip = key;
    slots_[i].port_no = e.port_no;
    std::memcpy(slots_[i].mac, e.mac.bytes.data(), 6);
  }
}

}  // namespace sluice
