// Compile-time sizes shared by the fast path and the control path. Every
// per-PMD array is sized by these at start, so PMDs never allocate.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

// Port numbers index every per-port array (the PMDs' tx batches and
// counters, the snapshots' port tables, control's port table). Those are
// sized at start by max-ports (portTableSize), never by a compile-time
// count: the most a node may be configured with is this bound, and the
// default is what a node of two-interface pods fills in practice.
inline constexpr uint16_t kMaxPortsLimit = 1024;
inline constexpr uint16_t kDefaultMaxPorts = 256;

// The uplink, when the node has one, is port 31 whatever max-ports is (pods
// never get it): the overlay opens it there and partial offload marks its
// packets. Its number predates tables larger than DPDK's 32 ethdevs, and
// operators' dashboards and the host path's number (30) follow it.
inline constexpr uint16_t kUplinkPortNo = 31;

// How many entries a per-port array holds for max-ports `max_ports`: the
// module ports' numbers always fit, so a small table (max-ports 8, as tests
// use) still has the uplink's slot, and pods are numbered below max-ports.
constexpr uint16_t portTableSize(uint16_t max_ports) {
  return max_ports > kUplinkPortNo ? max_ports : static_cast<uint16_t>(kUplinkPortNo + 1);
}

// The table size of anything built without a configuration (tests, tools):
// that of the default max-ports.
inline constexpr uint16_t kDefaultPortTable = portTableSize(kDefaultMaxPorts);

// Packets per rx burst and per output batch: DPDK's customary 32, which keeps
// a burst's mbuf pointers within four cache lines.
inline constexpr uint16_t kBurstSize = 32;

// PMD threads per sluiced (bounded by what a node would dedicate; sized so the
// per-PMD counter blocks stay small).
inline constexpr size_t kMaxPmds = 16;

// The most queue pairs one pod port may have (max-queues-per-port's bound):
// as many as PMDs, so that each PMD can have a tx queue of its own.
inline constexpr uint16_t kMaxQueuesPerPort = kMaxPmds;

// The longest a PMD may sleep while its queues run light (pmd-max-sleep-us):
// 10 ms, past which an idle PMD saves nothing measurable but the first
// packets after a quiet spell wait longer than a retransmission timer cares for.
inline constexpr uint32_t kPmdMaxSleepLimitUs = 10'000;

// The longest router lifetime a Router Advertisement may carry (RFC 4861
// section 6.2.1: MaxRtrAdvInterval's bound, 9000 seconds).
inline constexpr uint32_t kMaxRouterLifetimeS = 9000;

// "No port": marks an empty slot in port-number-indexed arrays.
inline constexpr uint16_t kInvalidPort = 0xffff;

}  // namespace sluice
