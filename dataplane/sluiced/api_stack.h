// sluiced's API, on top of the running dataplane: the live settings, the
// core's service with each feature's beside it, packet trace and capture,
// the config files' watcher, the call metrics and the Prometheus endpoint,
// and the gRPC servers on the API socket and (when configured) the node
// controller's. Made once the PMDs run; when it goes, nothing serves any
// more and no handler touches the core or a feature. Main thread only; the
// servers, the watcher and the endpoint run threads of their own.
#pragma once

#include <absl/status/status.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "dataplane/api/agent_api_gateway.h"
#include "dataplane/api/api_server.h"
#include "dataplane/api/grpc_call_metrics.h"
#include "dataplane/api/grpc_observe.h"
#include "dataplane/api/grpc_service.h"
#include "dataplane/api/metrics_endpoint.h"
#include "dataplane/config/config.h"
#include "dataplane/config/runtime_config.h"
#include "dataplane/core/config_file_watcher.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/packet_taps.h"
#include "dataplane/sluiced/feature_set.h"

namespace sluice {

class ApiStack {
 public:
  // Everything but the servers: the config files are watched (and re-read
  // once) and the metrics endpoint tried before the API serves, so that once
  // the readiness probe (an API call) passes, a scrape normally finds
  // sluiced too. `start_time_seconds`: when sluiced started, for the metrics.
  ApiStack(const SluicedArgs& args, DataplaneControl& control, FeatureApi features,
           const std::vector<PmdContext*>& pmds, double start_time_seconds);
  // Stops serving (the endpoint, the controller's server, then the main one,
  // each call in flight given a moment), stops the watcher and removes the
  // sockets.
  ~ApiStack();
  ApiStack(const ApiStack&) = delete;
  ApiStack& operator=(const ApiStack&) = delete;

  // Serves the API socket, then the node controller's, and logs that sluiced
  // is ready (`pmds` and `features` for that line). An error: neither serves.
  absl::Status serve(size_t pmds, const std::string& features);

 private:
  void watchConfigFiles();
  void startMetricsEndpoint();
  absl::Status serveAgentApi();

  const SluicedConfig& config_;
  const double start_time_seconds_;
  // The live settings: changed through the API or by a re-read of the
  // --config files; each change reaches the logger and the core (which
  // hands the PMDs theirs in a snapshot) before the call returns.
  RuntimeConfig settings_;
  DataplaneService service_;
  std::vector<grpc::Service*> services_;  // the core's, the features', observe_
  // Who is at the other end of each API connection (the kernel's word), for
  // the log of who captured what.
  PeerCredentials peers_;
  // Packet trace and capture: the PMDs' taps, armed only while a session runs.
  PacketTaps taps_;
  ObserveService observe_;
  std::unique_ptr<ConfigFileWatcher> watcher_;  // null without --config files or when it could not start
  // Every call served, counted and timed for the metrics endpoint.
  GrpcCallMetrics call_metrics_;
  MetricsEndpoint metrics_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<AgentApiGateway> agent_gateway_;
  std::unique_ptr<ApiServer> agent_server_;
};

}  // namespace sluice
