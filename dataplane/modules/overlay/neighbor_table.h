// The uplink's neighbor table: next-hop IPv4 -> MAC, resolved by ARP that
// sluiced sends and answers itself (the uplink belongs to DPDK, not to the
// kernel), or on an IPv6 underlay next-hop IPv6 -> MAC by neighbor
// discovery (solicitations and advertisements in ARP's places, the same
// states, timers and refusals). Pure state machine over an injected clock, so tests step time
// instead of sleeping. Control thread only (within the control core's changes).
//
// Per wanted address: incomplete (no MAC; asked every retry interval) ->
// reachable (a reply arrived; used) -> stale after reachable_time (still
// used, asked again every retry interval) -> after stale_time without a
// reply the MAC is forgotten (incomplete again: packets toward it are
// dropped as neighbor_unresolved until it answers). A static entry (the
// configuration's override) is always reachable and never asked for. A reply
// is learned only while a request of ours for that address awaits one (the
// first reply answers it), so unsolicited ARP cannot move a next hop.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/net_address.h"

namespace sluice {

// Why an ARP frame from the uplink was not learned from (arp_refusals.def).
enum class ArpRefusal : uint8_t {
#define SLUICE_ARP_REFUSAL(e, name, what) e,
#include "dataplane/modules/overlay/arp_refusals.def"
#undef SLUICE_ARP_REFUSAL
};
inline constexpr size_t kArpRefusalCount = 0
#define SLUICE_ARP_REFUSAL(e, name, what) +1
#include "dataplane/modules/overlay/arp_refusals.def"
#undef SLUICE_ARP_REFUSAL
    ;
const char* arpRefusalName(ArpRefusal r);
// Refused frames counted per reason, indexed by ArpRefusal.
using ArpRefusalCounts = std::array<uint64_t, kArpRefusalCount>;

// How long answers are trusted and how often to ask.
struct NeighborTiming {
  // As the Linux kernel's defaults: base_reachable_time 30 s (the kernel
  // randomises 15-45 s), retransmit 1 s; a stale entry is kept 3 retries
  // beyond (the kernel's delay + probes), then forgotten.
  std::chrono::steady_clock::duration reachable_time = std::chrono::seconds(30);
  std::chrono::steady_clock::duration retry_interval = std::chrono::seconds(1);
  std::chrono::steady_clock::duration stale_time = std::chrono::seconds(3);
};

enum class NeighborState { kIncomplete, kReachable, kStale, kStatic };

// Addr: Ipv4Address (ARP) or Ipv6Address (neighbor discovery).
template <typename Addr>
class BasicNeighborTable {
 public:
  using Clock = std::chrono::steady_clock;
  using Timing = NeighborTiming;
  using State = NeighborState;
  struct View {
    Addr ip;
    std::optional<MacAddress> mac;
    State state = State::kIncomplete;
    double age_seconds = 0;   // since the MAC was last confirmed (0 if none)
    uint64_t requests = 0;    // ARP requests sent for it
  };

  explicit BasicNeighborTable(Timing timing = Timing()) : timing_(timing) {}

  void setStatic(Addr ip, MacAddress mac);
  // The addresses to resolve (next hops of the remote nodes): new ones start
  // incomplete and are due at once; entries no longer wanted are forgotten
  // (static ones stay). Returns whether a MAC became unknown or known.
  bool setWanted(const std::set<Addr>& ips);
  // What an ARP reply did: whether the usable MAC changed, or why it was
  // refused (not a wanted address, a static entry, or no request of ours
  // awaiting a reply: each request is answered by the first reply only).
  struct Learned {
    bool changed = false;
    std::optional<ArpRefusal> refused;
  };
  // An ARP reply (already checked to be addressed to us) from ip with mac.
  Learned learn(Addr ip, MacAddress mac, Clock::time_point now);
  // Addresses to send an ARP request for now (marks them asked). Also
  // forgets MACs stale beyond stale_time; *changed says whether any did.
  std::vector<Addr> due(Clock::time_point now, bool* changed);
  // The usable MAC (reachable, stale or static).
  std::optional<MacAddress> lookup(const Addr& ip) const;
  // The state of one address (nullopt when it is no entry): what list()
  // says of it, without listing every entry.
  std::optional<State> state(const Addr& ip, Clock::time_point now) const;
  std::vector<View> list(Clock::time_point now) const;

 private:
  struct Entry {
    std::optional<MacAddress> mac;
    bool is_static = false;
    Clock::time_point confirmed{};   // last reply
    Clock::time_point asked{};       // last request sent
    bool ever_asked = false;
    bool awaiting_reply = false;     // a request was sent and no reply taken since
    uint64_t requests = 0;
  };
  State stateOf(const Entry& e, Clock::time_point now) const;

  Timing timing_;
  std::map<Addr, Entry> entries_;
};

extern template class BasicNeighborTable<Ipv4Address>;
extern template class BasicNeighborTable<Ipv6Address>;
using NeighborTable = BasicNeighborTable<Ipv4Address>;
using NeighborTable6 = BasicNeighborTable<Ipv6Address>;

std::string neighborStateName(NeighborState s);

}  // namespace sluice
