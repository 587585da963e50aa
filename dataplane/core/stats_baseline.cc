#include "dataplane/core/stats_baseline.h"

#include <algorithm>

#include "dataplane/core/port_table.h"

namespace sluice {

StatsBaseline::StatsBaseline(std::vector<PmdContext*> pmds, std::vector<unsigned> pmd_sockets, PortBackend& backend,
                             const PortTable& ports, uint64_t tsc_hz, std::chrono::steady_clock::time_point started_at)
    : pmds_(std::move(pmds)), pmd_sockets_(std::move(pmd_sockets)), backend_(backend), tsc_hz_(tsc_hz),
      cleared_at_(started_at) {
  baseline_ = readTotals(ports);
}

StatsBaseline::Totals StatsBaseline::readTotals(const PortTable& ports) const {
  Totals t;
  t.ports.resize(ports.size());
  t.rx_queues.resize(ports.size());
  for (size_t p = 0; p < pmds_.size(); ++p) {
    const PmdCounters& c = pmds_[p]->counters;
    PmdStatsView& v = t.pmds.emplace_back(readPmdStats(c));
    v.index = static_cast<unsigned>(p);
    v.lcore = pmds_[p]->lcore;
    v.numa_socket = pmd_sockets_[p];
    for (size_t r = 0; r < kDropReasonCount; ++r) t.drops[r] += c.drops[r].read();
  }
  for (uint16_t n = 0; n < ports.size(); ++n) readPortTotals(ports, n, t.ports[n], t.rx_queues[n]);
  return t;
}

void StatsBaseline::readPortTotals(const PortTable& ports, uint16_t port_no, PortStatsView& port,
                                   std::array<uint64_t, kMaxQueuesPerPort>& rx_queues) const {
  for (const PmdContext* pmd : pmds_) {
    const PmdCounters& c = pmd->counters;
    for (uint16_t q = 0; q < kMaxQueuesPerPort; ++q) rx_queues[q] += c.rx_queue_packets[port_no][q].read();
    port.rx_packets += c.ports[port_no].rx_packets.read();
    port.tx_packets += c.ports[port_no].tx_packets.read();
    port.tx_dropped += c.ports[port_no].tx_dropped.read();
    port.rx_dropped += c.ports[port_no].rx_dropped.read();
  }
  const PortEntry* e = ports.find(port_no);
  if (e == nullptr) return;
  const PortBackend::ByteCounts b = backend_.bytes(e->dpdk);
  port.rx_bytes = b.rx;
  port.tx_bytes = b.tx;
}

void StatsBaseline::zeroPort(const PortTable& ports, uint16_t port_no) {
  // This port's counters only: reading every port's (and every connected
  // pod's byte counts from its driver) would make each AddPort cost the
  // whole table.
  baseline_.ports[port_no] = {};
  baseline_.rx_queues[port_no] = {};
  readPortTotals(ports, port_no, baseline_.ports[port_no], baseline_.rx_queues[port_no]);
}

void StatsBaseline::clear(const PortTable& ports) {
  baseline_ = readTotals(ports);
  cleared_at_ = std::chrono::steady_clock::now();
}

void StatsBaseline::addPortStats(const PortTable& ports, const Totals& now, bool pods, StatsView& v) const {
  ports.forEachPort([&](uint16_t n, const PortEntry& e) {
    if (e.isPod() != pods) return;
    const PortStatsView& c = now.ports[n];
    const PortStatsView& b = baseline_.ports[n];
    v.ports.push_back({n, e.request.attachment, c.rx_packets - b.rx_packets, c.tx_packets - b.tx_packets,
                       c.tx_dropped - b.tx_dropped, c.rx_dropped - b.rx_dropped, c.rx_bytes - b.rx_bytes,
                       c.tx_bytes - b.tx_bytes});
    // A module's port has one rx queue, on its PMD; a pod's, each on the
    // PMD placement gave it (none yet: not polled, not listed).
    const size_t queues = e.isPod() ? e.queue_pmds.size() : 1;
    for (uint16_t q = 0; q < queues; ++q)
      v.rx_queues.push_back(
          {n, q, e.isPod() ? e.queue_pmds[q] : e.pmd, now.rx_queues[n][q] - baseline_.rx_queues[n][q]});
  });
}

StatsView StatsBaseline::view(const PortTable& ports, const std::vector<FlowControlCounters>& flows) const {
  Totals now = readTotals(ports);
  StatsView v;
  v.tsc_hz = tsc_hz_;
  v.seconds_since_clear = std::chrono::duration<double>(std::chrono::steady_clock::now() - cleared_at_).count();
  for (size_t p = 0; p < now.pmds.size(); ++p) {
    PmdStatsView s = subtract(now.pmds[p], baseline_.pmds[p]);
    s.megaflows = flows[p].megaflows;
    v.pmds.push_back(s);
  }
  for (size_t r = 0; r < kDropReasonCount; ++r) v.drops[r] = now.drops[r] - baseline_.drops[r];
  // Modules' own ports (the uplink) first, then the pods'.
  addPortStats(ports, now, false, v);
  addPortStats(ports, now, true, v);
  return v;
}

std::vector<double> StatsBaseline::measurePmdLoads() {
  // A window shorter than this says nothing about a PMD's load.
  const uint64_t min_window = tsc_hz_ / 100;
  pmd_load_.resize(pmds_.size());
  std::vector<double> shares(pmds_.size());
  for (size_t p = 0; p < pmds_.size(); ++p) {
    const PmdCounters& c = pmds_[p]->counters;
    const uint64_t busy = c.busy_cycles.read();
    const uint64_t total = busy + c.idle_cycles.read() + c.sleep_cycles.read();
    PmdLoadSample& s = pmd_load_[p];
    if (total - s.total >= std::max<uint64_t>(min_window, 1)) {
      s.share = static_cast<double>(busy - s.busy) / static_cast<double>(total - s.total);
      s.busy = busy;
      s.total = total;
    }
    shares[p] = s.share;
  }
  return shares;
}

}  // namespace sluice
