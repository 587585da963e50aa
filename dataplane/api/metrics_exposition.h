// sluiced's /metrics page: the same figures `sluicectl stats` and `sluicectl
// health` show (the GetStats, Health and ListPorts answers), plus the gRPC
// calls served and the process's own health, in the Prometheus text format.
//
// The stats and health messages are walked by their descriptors, so a field
// added to them (a PMD counter in pmd_counters.def and the proto, a module's
// figures) is exported without a change here: a uint64 is a counter
// (`_total`) unless the field carries the (gauge) option (metrics.proto),
// any other number or bool is a gauge, strings are not figures. Repeated
// messages are exported per element with the labels kCollections below names
// (e.g. pmds: pmd, lcore); ports are labelled with their interface, and with
// their pod's namespace and name only when asked (they map tenants to
// nodes for whoever scrapes). Pure: tested with exact text for a given
// snapshot.
#pragma once

#include <cstdint>
#include <string>

#include "dataplane/api/grpc_call_metrics.h"
#include "sluice/v1/dataplane.pb.h"

namespace sluice {

struct ProcessFacts {
  double start_time_seconds = 0;  // Unix time sluiced started
  uint64_t resident_memory_bytes = 0;
  uint64_t metrics_bind_failures = 0;  // attempts to listen that failed (MetricsEndpoint)
};

struct MetricsSnapshot {
  v1::GetStatsResponse stats;
  v1::HealthResponse health;
  v1::ListPortsResponse ports;
  GrpcCallSnapshot calls;
  ProcessFacts process;
};

struct MetricsPageOptions {
  bool pod_labels = false;  // port series carry namespace= and pod= (metrics-pod-labels)
};

std::string renderMetrics(const MetricsSnapshot& snapshot, const MetricsPageOptions& options = {});

}  // namespace sluice
