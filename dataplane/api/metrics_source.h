// Where the metrics page's figures come from: the core's own service
// answers GetStats, Health and ListPorts exactly as it does for `sluicectl
// stats` (the control thread's snapshot of the PMDs' counters, never their
// live state), called in-process without a gRPC round trip. Metrics thread.
#pragma once

#include "dataplane/api/grpc_call_metrics.h"
#include "dataplane/api/grpc_service.h"
#include "dataplane/api/metrics_exposition.h"

namespace sluice {

MetricsSnapshot takeMetricsSnapshot(DataplaneService& service, const GrpcCallMetrics& calls,
                                    double start_time_seconds);

}  // namespace sluice
