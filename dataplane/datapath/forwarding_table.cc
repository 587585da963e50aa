#include "dataplane/datapath/forwarding_table.h"

#include <bit>
#include <cstring>

namespace sluice {

ForwardingTable::ForwardingTable(const std::vector<Entry>& entries) {
  // At most half full keeps probe sequences short; at least 16 slots.
  size_t capacity = std::bit_ceil(std::max<size_t>(16, entries.size() * 2));
  slots_.assign(capacity, PodRoute{});
  mask_ = static_cast<uint32_t>(capacity - 1);
  for (const Entry& e : entries) {
    uint32_t ip_be = e.ip.networkOrder();
    uint32_t i = slotFor(ip_be);
    while (slots_[i].ip_be != 0 && slots_[i].ip_be != ip_be) i = (i + 1) & mask_;
    if (slots_[i].ip_be == 0) {
      ++size_;
      addresses_.push_back(ip_be);
    }
    slots_[i].ip_be = ip_be;
    slots_[i].port_no = e.port_no;
    std::memcpy(slots_[i].mac, e.mac.bytes.data(), 6);
  }
}

}  // namespace sluice
