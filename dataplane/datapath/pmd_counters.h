// Per-PMD statistics. Each PMD owns one PmdCounters block and is its only
// writer; control threads read it to build `sluicectl stats`. The per-PMD
// counters are declared in pmd_counters.def, which also generates control's
// view of them and their gRPC translation.
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
#include "dataplane/datapath/fixed_array.h"
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
#define SLUICE_PMD_COUNTER(field, proto_field, help) Counter field;
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  std::array<Counter, kDropReasonCount> drops;
  // Per port number; sized by max-ports (PmdContext::sizePortTables) before
  // the PMD runs.
  FixedArray<PortCounters> ports{kDefaultPortTable};
  // Packets received per (port number, rx queue id) by this PMD: which of a
  // multi-queue port's queues bring its traffic. One add per non-empty rx
  // burst; sized with `ports` (kMaxQueuesPerPort counters a port), so nothing
  // is allocated when ports or queues come and go.
  FixedArray<std::array<Counter, kMaxQueuesPerPort>> rx_queue_packets{kDefaultPortTable};
  // IPv4 datagrams without DF fragmented to an MTU (ipv4_fragment.h), and
  // the fragments made of them. Not per-PMD fields of the API: the health
  // call reports their sums over the PMDs (since start; ClearStats leaves
  // them).
  Counter ipv4_fragmented;
  Counter ipv4_fragments;
};

}  // namespace sluice
