// The statistics the API reports: every PMD's and port's counters summed
// over the PMDs, minus the baseline ClearStats took (the PMDs' own counters
// are never written by control). Also measures each PMD's busy share of its
// cycles for rx queue placement.
//
// Owned by DataplaneControl and guarded by its table lock.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "dataplane/core/flow_control.h"
#include "dataplane/core/pmd_stats.h"
#include "dataplane/core/port_backend.h"
#include "dataplane/core/port_request.h"
#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_context.h"

namespace sluice {

class PortTable;

struct PortStatsView {
  uint16_t port_no = 0;
  AttachmentId attachment;
  uint64_t rx_packets = 0, tx_packets = 0, tx_dropped = 0, rx_dropped = 0;
  uint64_t rx_bytes = 0, tx_bytes = 0;  // as the port's driver counts them
};

// One rx queue of a port, and the packets it brought (summed over the PMDs
// that polled it since the counters were cleared).
struct RxQueueStatsView {
  uint16_t port_no = 0;
  uint16_t queue = 0;
  unsigned pmd = 0;  // the PMD polling it now
  uint64_t packets = 0;
};

struct StatsView {
  uint64_t tsc_hz = 0;
  std::vector<PmdStatsView> pmds;
  std::vector<PortStatsView> ports;
  std::vector<RxQueueStatsView> rx_queues;  // every port's (modules' first), in port and queue order
  std::array<uint64_t, kDropReasonCount> drops{};
  double seconds_since_clear = 0;
  uint32_t tx_flush_interval_us = 0;
};

class StatsBaseline {
 public:
  // `pmds` (outliving this) and their NUMA sockets; `backend` reads the
  // ports' byte counts. The baseline starts as the counters read now, with
  // `ports` (usually empty); `started_at` is the first clear.
  StatsBaseline(std::vector<PmdContext*> pmds, std::vector<unsigned> pmd_sockets, PortBackend& backend,
                const PortTable& ports, uint64_t tsc_hz, std::chrono::steady_clock::time_point started_at);

  // Every counter's growth since the last clear (`flows`: each PMD's
  // megaflow counts, by PMD).
  StatsView view(const PortTable& ports, const std::vector<FlowControlCounters>& flows) const;
  // Takes the counters as they read now as the new baseline (ClearStats).
  void clear(const PortTable& ports);
  // Starts a reused port number's counters from zero (for the new port).
  void zeroPort(const PortTable& ports, uint16_t port_no);
  // Each PMD's busy share of its cycles since the previous call (a PMD that
  // ran too briefly since keeps its previous share).
  std::vector<double> measurePmdLoads();

 private:
  // Raw counter sums over all PMDs; statistics report raw minus baseline.
  struct Totals {
    std::vector<PmdStatsView> pmds;
    std::vector<PortStatsView> ports;  // by port number, one per port table entry
    std::vector<std::array<uint64_t, kMaxQueuesPerPort>> rx_queues;
    std::array<uint64_t, kDropReasonCount> drops{};
  };
  struct PmdLoadSample {
    uint64_t busy = 0, total = 0;  // cycles
    double share = 0;              // busy / total over the window that ended here
  };

  Totals readTotals(const PortTable& ports) const;
  // Adds port `port_no`'s counters summed over the PMDs to `port` and
  // `rx_queues`, and sets its byte counts from the driver (a port in the table).
  void readPortTotals(const PortTable& ports, uint16_t port_no, PortStatsView& port,
                      std::array<uint64_t, kMaxQueuesPerPort>& rx_queues) const;
  void addPortStats(const PortTable& ports, const Totals& now, bool pods, StatsView& v) const;

  const std::vector<PmdContext*> pmds_;
  const std::vector<unsigned> pmd_sockets_;  // each PMD's NUMA socket
  PortBackend& backend_;
  const uint64_t tsc_hz_;
  Totals baseline_;
  std::chrono::steady_clock::time_point cleared_at_;
  std::vector<PmdLoadSample> pmd_load_;  // one per PMD, as measurePmdLoads last read
};

}  // namespace sluice
