#include "dataplane/sluiced/api_stack.h"

#include <absl/strings/str_cat.h>
#include <rte_cycles.h>
#include <unistd.h>

#include <chrono>

#include "common/log.h"
#include "dataplane/api/metrics_http.h"
#include "dataplane/api/metrics_source.h"
#include "dataplane/config/ipv4_allow_list.h"

namespace sluice {
namespace {

constexpr char kVersion[] = "0.1.0";

// How often a metrics port that could not be listened on is tried again:
// one bind() per attempt, so often enough that scrapes resume within
// seconds of the port freeing.
constexpr std::chrono::milliseconds kMetricsRetryInterval{2000};

// How long calls in flight at shutdown get to finish before they are cancelled.
constexpr std::chrono::milliseconds kCallsGrace{500};

}  // namespace

ApiStack::ApiStack(const SluicedArgs& args, DataplaneControl& control, FeatureApi features,
                   const std::vector<PmdContext*>& pmds, double start_time_seconds)
    : config_(args.config),
      start_time_seconds_(start_time_seconds),
      settings_(args,
                [&control](const SluicedConfig& next) {
                  setLogLevel(next.log_level);
                  control.applyLiveSettings(next);
                }),
      service_(control, kVersion, std::move(features.extensions), std::move(features.forwards), &settings_),
      taps_(pmds, rte_get_tsc_hz()),
      observe_(control, taps_, [this](const grpc::ServerContext& ctx) { return peers_.describe(ctx.peer()); }),
      metrics_(kMetricsRetryInterval) {
  services_.push_back(&service_);
  services_.insert(services_.end(), features.services.begin(), features.services.end());
  services_.push_back(&observe_);
  watchConfigFiles();
  startMetricsEndpoint();
}

// The config files, watched (on a control thread of the watcher's own)
// from before the API serves; a change made since they were read at start
// is picked up by the first re-read here.
void ApiStack::watchConfigFiles() {
  if (settings_.files().empty()) return;
  auto reload = [this] {
    absl::StatusOr<ReloadResult> reloaded = settings_.reloadFiles();
    if (!reloaded.ok()) logError("config file not applied (nothing changed): ", reloaded.status().message());
  };
  auto started = ConfigFileWatcher::start(settings_.files(), reload);
  if (started.ok()) watcher_ = *std::move(started);
  else logWarning("config files will not be re-read when they change: ", started.status().message());
  reload();
}

// The Prometheus endpoint, when configured: its page is built on its own
// threads from the service's answers (the same snapshot sluicectl reads). A
// port it cannot listen on (e.g. held by another process) is retried while
// the node serves pods, never a reason to stop.
void ApiStack::startMetricsEndpoint() {
  if (config_.metrics_port == 0) return;
  absl::StatusOr<Ipv4AllowList> allowed = Ipv4AllowList::parse(config_.metrics_allowed_cidrs);
  MetricsHttpOptions http;
  http.address = config_.metrics_address;
  http.port = config_.metrics_port;
  http.allowed = allowed.ok() ? *std::move(allowed) : Ipv4AllowList{};  // checked when the key was read
  const MetricsPageOptions page{.pod_labels = config_.metrics_pod_labels};
  metrics_.start([this, http, page] {
    return MetricsHttpServer::start(http, [this, page] {
      MetricsSnapshot snapshot = takeMetricsSnapshot(service_, call_metrics_, start_time_seconds_);
      snapshot.process.metrics_bind_failures = metrics_.bindFailures();
      return renderMetrics(snapshot, page);
    });
  });
}

// Only root (the CNI plugin, sluicectl via kubectl exec) may drive the
// dataplane: the socket is born mode 0600.
absl::Status ApiStack::serve(size_t pmds, const std::string& features) {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(makeGrpcCallMetricsInterceptor(call_metrics_));
  absl::StatusOr<std::unique_ptr<ApiServer>> server =
      startApiServer(config_.api_socket, services_, peers_, std::move(interceptors));
  if (!server.ok()) return server.status();
  server_ = *std::move(server);
  if (absl::Status s = serveAgentApi(); !s.ok()) {
    server_.reset();
    return s;
  }
  logInfo("sluiced ", kVersion, " ready: API ", config_.api_socket, ", ", pmds, " PMD(s), pod CIDR ",
          config_.pod_cidr.toString(), ", gateway ", config_.gateway.toString(), " ", config_.gateway_mac.toString(),
          ", features: ", features,
          metrics_.port() != 0 ? absl::StrCat(", metrics http://", config_.metrics_address, ":", metrics_.port(), "/metrics")
                               : "");
  return absl::OkStatus();
}

// The node controller's socket, when configured: its calls reach the main
// server through an in-process channel, so it starts after it.
absl::Status ApiStack::serveAgentApi() {
  if (config_.agent_api_socket.empty()) return absl::OkStatus();
  ::unlink(config_.agent_api_socket.c_str());
  agent_gateway_ = std::make_unique<AgentApiGateway>(server_->grpc().InProcessChannel(grpc::ChannelArguments()));
  auto started = startAgentApiServer(config_.agent_api_socket, config_.agent_api_gid, *agent_gateway_, peers_);
  if (!started.ok()) return started.status();
  agent_server_ = *std::move(started);
  logInfo("node controller API ", config_.agent_api_socket, " (mode 0660, group ", config_.agent_api_gid, ")");
  return absl::OkStatus();
}

ApiStack::~ApiStack() {
  // No scrape reads the core from here on.
  metrics_.stop();
  // The controller's calls pass through the main server: they go first.
  if (agent_server_) agent_server_->shutdown(std::chrono::system_clock::now() + kCallsGrace);
  agent_server_.reset();
  if (server_) server_->shutdown(std::chrono::system_clock::now() + kCallsGrace);
  // Destroyed, not only shut down: that joins its threads, so no handler
  // touches the core or a feature once they start going away.
  server_.reset();
  // No re-read from here on: the core is about to go.
  watcher_.reset();
  ::unlink(config_.api_socket.c_str());
  if (!config_.agent_api_socket.empty()) ::unlink(config_.agent_api_socket.c_str());
}

}  // namespace sluice
