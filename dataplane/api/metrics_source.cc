#include "dataplane/api/metrics_source.h"

#include <unistd.h>

#include <fstream>

namespace sluice {
namespace {

// Resident pages (the second figure of /proc/self/statm) in bytes; 0 when
// it cannot be read.
uint64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

MetricsSnapshot takeMetricsSnapshot(DataplaneService& service, const GrpcCallMetrics& calls,
                                    double start_time_seconds) {
  MetricsSnapshot s;
  // The handlers do not read their context; a failing one leaves its
  // message empty and the page shows what the others answered.
  const v1::GetStatsRequest stats_request;
  const v1::HealthRequest health_request;
  const v1::ListPortsRequest ports_request;
  (void)service.GetStats(nullptr, &stats_request, &s.stats);
  (void)service.Health(nullptr, &health_request, &s.health);
  (void)service.ListPorts(nullptr, &ports_request, &s.ports);
  s.calls = calls.snapshot();
  s.process.start_time_seconds = start_time_seconds;
  s.process.resident_memory_bytes = residentBytes();
  return s;
}

}  // namespace sluice
