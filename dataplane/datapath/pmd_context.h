// One PMD and everything it owns, in one place (as DPDK's l3fwd keeps an
// lcore_conf and Open vSwitch a dp_netdev_pmd_thread): its lcore, the
// mailbox and counters it shares with control, its flow caches and upcall
// queue, its upcall budget and the partial-offload mark table it reads.
// Made by sluiced before the PMD runs (everything sized by the
// configuration, so the fast path never allocates), and outlives the PMD
// thread. Control reaches a PMD only through its context.
#pragma once

#include <cstdint>
#include <memory>

#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/icmp/icmp_error_limiter.h"
#include "dataplane/datapath/mark_table.h"
#include "dataplane/datapath/pmd_counters.h"
#include "dataplane/datapath/pmd_snapshot.h"
#include "dataplane/datapath/pmd_tap.h"
#include "dataplane/datapath/upcall_gate.h"
#include "dataplane/datapath/upcall_queue.h"

namespace sluice {

struct PmdContext {
  // Sizes the per-port arrays (counters here, and the PMD's own batches,
  // made from this size) for max-ports `max_ports` (portTableSize). Before
  // the PMD is made and control reads the counters.
  void sizePortTables(uint16_t max_ports) {
    counters.ports = FixedArray<PortCounters>(sluice::portTableSize(max_ports));
    counters.rx_queue_packets = FixedArray<std::array<Counter, kMaxQueuesPerPort>>(sluice::portTableSize(max_ports));
    gate.port_table = sluice::portTableSize(max_ports);
  }
  uint16_t portTableSize() const { return static_cast<uint16_t>(counters.ports.size()); }

  unsigned lcore = 0;
  uint32_t index = 0;  // which PMD this is (what partial-offload marks name)
  PmdMailbox mailbox;
  PmdCounters counters;
  // The flow caches (null: none, as in unit tests of the port table). The
  // megaflow table and upcall queue are shared with control (see their
  // headers for who writes what); the lookup is the PMD's alone.
  std::unique_ptr<flow::MegaflowTable> megaflows;
  std::unique_ptr<flow::FlowLookup> lookup;
  UpcallQueue upcalls;
  UpcallGateConfig gate;
  // The longest the PMD sleeps while its queues run light, in µs (0: never),
  // until control's live settings say otherwise.
  uint32_t max_sleep_us = 0;
  // ICMP errors the PMD may send per second (icmp-error-rate), until
  // control's live settings say otherwise.
  IcmpErrorLimiterConfig icmp_errors;
  // Partial offload: the mark -> megaflow array (null: offload off).
  const offload::MarkTable* marks = nullptr;
  // Packet trace and capture (off unless control arms them).
  PmdTap tap;
  // Both pools are the mbuf pool of the PMD's NUMA socket (mbuf_pools.h), so
  // what the PMD allocates stays in its socket's memory.
  // The pool IPv4 fragments are made from (ipv4_fragment.h); null: an IPv4
  // packet without DF over its out port's or the overlay's MTU is dropped
  // as fragmentation_failed.
  rte_mempool* fragment_pool = nullptr;
  // The pool packets received on vhost-user ports are copied into (the
  // vhost library's dequeue allocates them; an ethdev has its own per
  // queue). Null: the PMD polls no such port.
  rte_mempool* packet_pool = nullptr;
};

}  // namespace sluice
