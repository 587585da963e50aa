// Per-PMD statistics. Each PMD owns one PmdCounters block and is its only
// writer; control threads read it to build `sluicectl stats`.
//
// Memory order: a counter is a std::atomic written with relaxed load+store
// (no read-modify-write, so no lock prefix: on x86-64 this is a plain add to
// memory), and read with a relaxed load. A reader may see a slightly old value,
// never a torn one. Clearing is done by the reader remembering a baseline and
// subtracting it, so PMDs never see a foreign write (as OVS's pmd-stats-clear).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/limits.h"

namespace sluice {

class Counter {
 public:
  void add(uint64_t n) { value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void inc() { add(1); }
  uint64_t read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

struct PortCounters {
  Counter rx_packets;  // received on this port by this PMD
  Counter tx_packets;  // accepted by this port's tx queue
  Counter tx_dropped;  // refused by the tx queue (or port gone) and freed
  Counter rx_dropped;  // received on this port, dropped by the pipeline
};

struct alignas(64) PmdCounters {
  Counter busy_cycles;  // TSC cycles of loop iterations that received packets
  Counter idle_cycles;  // TSC cycles of loop iterations that received nothing
  Counter packets;      // packets received
  Counter rx_bursts;    // rx bursts that returned at least one packet
  Counter tx_batches;   // tx bursts issued (output batches flushed)
  Counter tx_batched;   // packets offered to tx bursts (packets per batch = this / tx_batches)
  Counter tx_packets;   // packets accepted by tx bursts
  Counter reloads;      // snapshots picked up
  // Where each received packet was resolved: exactly one of these per packet
  // (their sum is `packets`), STYLE §8.
  Counter run_hits;        // same key as the burst's previous packet (no lookup)
  Counter emc_hits;        // exact-match cache
  Counter smc_hits;        // signature match cache (verified)
  Counter megaflow_hits;   // megaflow classifier
  Counter misses;          // no tier matched: upcall, coalesced or lost
  Counter not_looked_up;   // malformed, ARP or unsupported: decided before lookup
  // What became of the misses (their sum is `misses`).
  Counter upcalls;            // keys sent to control to become megaflows
  Counter upcalls_coalesced;  // misses of a megaflow already on its way
  Counter lost_upcalls;       // over the upcall rate (or queue full): not sent, packet forwarded uncached
  // Subtables searched, summed over megaflow hits (/ megaflow_hits = average).
  Counter subtable_lookups;
  // Partial offload: packets resolved by their NIC mark (a tier of its own:
  // counted instead of run/emc/smc/megaflow/misses/not_looked_up), and marked
  // packets whose mark named nothing usable (unknown, stale, another PMD's)
  // and took the normal pipeline (counted there too).
  Counter mark_hits;
  Counter mark_misses;
  std::array<Counter, kDropReasonCount> drops;
  std::array<PortCounters, kMaxPorts> ports;
};

}  // namespace sluice
