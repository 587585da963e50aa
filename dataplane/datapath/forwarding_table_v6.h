// The node's IPv6 side for the fast path: the forwarding table of /128 pod
// routes (pod address → port number, pod MAC) and the node's IPv6 pod
// network with its gateway addresses. Built whole by the control path, then
// immutable: PMDs read it without locks while control builds the next
// version beside it (see pmd_snapshot.h), as the IPv4 ForwardingTable.
//
// Open addressing with linear probing over a power-of-two array at most half
// full, keyed by the 16 address bytes as they sit in the packet. The all-zero
// address (::, the unspecified address) marks an empty slot; it is never a
// pod address.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/net_address.h"

namespace sluice {

// Two 64-bit halves of an address in wire order: compares and hashes in two
// loads instead of a 16-byte memcmp.
struct Ipv6Key {
  uint64_t hi = 0;
  uint64_t lo = 0;

  static Ipv6Key load(const uint8_t* bytes) {
    Ipv6Key k;
    std::memcpy(&k.hi, bytes, 8);
    std::memcpy(&k.lo, bytes + 8, 8);
    return k;
  }
  bool isZero() const { return (hi | lo) == 0; }
  bool operator==(const Ipv6Key&) const = default;
};

struct PodRoute6 {
  Ipv6Key ip;            // key; zero = empty slot
  uint16_t port_no = 0;  // output port
  uint8_t mac[6] = {};   // pod's MAC: the rewritten Ethernet destination
};
static_assert(sizeof(PodRoute6) == 24);

// This node's IPv6 pod network, for the decisions and the neighbor
// discovery answers (all addresses in wire order). `enabled` false: the
// node has no pod-cidr-v6, every IPv6 packet is unrouted and no neighbor
// solicitation is answered.
struct Ipv6PodNet {
  bool enabled = false;
  uint8_t prefix_len = 0;
  uint8_t net[16] = {};                 // host bits zero
  uint8_t gateway[16] = {};             // gateway-v6
  uint8_t gateway_link_local[16] = {};  // fe80:: with the gateway MAC's modified EUI-64
  // A pod's Router Solicitation is answered with a Router Advertisement
  // that makes the gateway its default router for this many seconds; 0: not
  // answered (neighbor_discovery.h).
  uint16_t router_lifetime_s = 0;

  bool contains(const uint8_t* a) const {
    if (!enabled) return false;
    uint32_t bits = prefix_len;
    for (uint32_t i = 0; bits != 0; ++i) {
      const uint32_t take = bits < 8 ? bits : 8;
      const auto m = static_cast<uint8_t>(0xff00U >> take);
      if (((a[i] ^ net[i]) & m) != 0) return false;
      bits -= take;
    }
    return true;
  }
  // The gateway's global or link-local address.
  bool isGateway(const uint8_t* a) const {
    return enabled && (std::memcmp(a, gateway, 16) == 0 || std::memcmp(a, gateway_link_local, 16) == 0);
  }
};

// fe80::/64 with the modified EUI-64 interface identifier of `mac` (RFC 4291
// appendix A): the link-local address a host with that MAC forms.
Ipv6Address linkLocalFromMac(const MacAddress& mac);

class Ipv6ForwardingTable {
 public:
  struct Entry {
    Ipv6Address ip;
    uint16_t port_no;
    MacAddress mac;
  };

  Ipv6ForwardingTable() : Ipv6ForwardingTable(std::vector<Entry>{}) {}
  // Entries must have distinct, non-zero addresses (the port table ensures it).
  explicit Ipv6ForwardingTable(const std::vector<Entry>& entries);

  // Fast path: the route for a destination address (16 bytes, wire order).
  const PodRoute6* lookup(const uint8_t* ip) const {
    const Ipv6Key key = Ipv6Key::load(ip);
    // The empty-slot marker must not match: :: is a valid source but never a destination we route.
    if (key.isZero()) return nullptr;
    uint32_t i = slotFor(key);
    for (;;) {
      const PodRoute6& r = slots_[i];
      if (r.ip.isZero()) return nullptr;
      if (r.ip == key) return &r;
      i = (i + 1) & mask_;
    }
  }

  size_t size() const { return size_; }
  // Every pod address, for translations that must show a destination range
  // holds no pod; not for the per-packet path.
  const std::vector<Ipv6Address>& addresses() const { return addresses_; }

 private:
  uint32_t slotFor(const Ipv6Key& k) const {
    // Fibonacci hashing of the folded halves: pods of one CIDR differ in
    // the low bytes, which the multiply spreads into the top bits taken.
    return static_cast<uint32_t>(((k.hi ^ k.lo) * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }

  std::vector<PodRoute6> slots_;
  std::vector<Ipv6Address> addresses_;
  uint32_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace sluice
