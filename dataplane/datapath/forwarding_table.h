// The node's IPv4 forwarding table: pod address → (port number, pod MAC).
// Built whole by the control path, then immutable: PMDs look it up without
// locks while control builds the next version beside it (see pmd_snapshot.h).
//
// Open addressing with linear probing over a power-of-two array at most half
// full, keyed by the address in network byte order (as it sits in the packet,
// so the fast path never byte-swaps). 0.0.0.0 marks an empty slot; it is never
// a pod address.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/net_address.h"

namespace sluice {

struct PodRoute {
  uint32_t ip_be = 0;     // key; 0 = empty slot
  uint16_t port_no = 0;   // output port
  uint8_t mac[6] = {};    // pod's MAC: the rewritten Ethernet destination
};
static_assert(sizeof(PodRoute) == 12);

class ForwardingTable {
 public:
  struct Entry {
    Ipv4Address ip;
    uint16_t port_no;
    MacAddress mac;
  };

  ForwardingTable() : ForwardingTable(std::vector<Entry>{}) {}
  // Entries must have distinct, non-zero addresses (the port table ensures it).
  explicit ForwardingTable(const std::vector<Entry>& entries);

  // Fast path: returns the route for a destination address in network order.
  const PodRoute* lookup(uint32_t ip_be) const {
    uint32_t i = slotFor(ip_be);
    for (;;) {
      const PodRoute& r = slots_[i];
      // Empty first: 0.0.0.0 (a valid destination in a hostile frame) must
      // not match an empty slot.
      if (r.ip_be == 0) return nullptr;
      if (r.ip_be == ip_be) return &r;
      i = (i + 1) & mask_;
    }
  }

  size_t size() const { return size_; }
  // Every pod address (network order), for translations that must show a
  // destination range holds no pod; not for the per-packet path.
  const std::vector<uint32_t>& addresses() const { return addresses_; }

 private:
  uint32_t slotFor(uint32_t ip_be) const {
    // Fibonacci hashing: spreads consecutive pod addresses across the table.
    return static_cast<uint32_t>((uint64_t{ip_be} * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }

  std::vector<PodRoute> slots_;
  std::vector<uint32_t> addresses_;
  uint32_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace sluice
