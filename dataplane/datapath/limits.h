// Compile-time sizes shared by the fast path and the control path. Every
// per-PMD array is sized by these at start, so PMDs never allocate.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice {

// Port numbers index the PMDs' tx arrays. Debian's DPDK is built with
// RTE_MAX_ETHPORTS = 32, which bounds how many ethdevs one process can hold;
// our port numbers cannot usefully exceed it.
inline constexpr uint16_t kMaxPorts = 32;

// The uplink, when the node has one, takes the last port number (pods never
// get it): the overlay opens it there and partial offload marks its packets.
inline constexpr uint16_t kUplinkPortNo = kMaxPorts - 1;

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
