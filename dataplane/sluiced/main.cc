// sluiced: the node dataplane daemon. Main thread: parses the configuration,
// starts DPDK's EAL, the PMD lcores and the gRPC API, then waits for
// SIGTERM/SIGINT and shuts down in reverse order (API stops taking calls,
// ports are closed and their sockets removed, PMDs stop, EAL is released).
#include <absl/cleanup/cleanup.h>
#include <absl/strings/str_cat.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/thread_sanitizer.h"
#include "dataplane/api/agent_api_gateway.h"
#include "dataplane/api/api_server.h"
#include "dataplane/api/feature.h"
#include "dataplane/api/grpc_call_metrics.h"
#include "dataplane/api/grpc_observe.h"
#include "dataplane/api/grpc_service.h"
#include "dataplane/api/metrics_endpoint.h"
#include "dataplane/api/metrics_http.h"
#include "dataplane/api/metrics_source.h"
#include "dataplane/config/config.h"
#include "dataplane/config/ipv4_allow_list.h"
#include "dataplane/config/lcore_placement.h"
#include "dataplane/config/runtime_config.h"
#include "dataplane/core/config_file_watcher.h"
#include "dataplane/core/checkpoint.h"
#include "dataplane/core/crash_points.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/dpdk_numa_topology.h"
#include "dataplane/core/dpdk_port_backend.h"
#include "dataplane/core/mbuf_pools.h"
#include "dataplane/core/split_port_backend.h"
#include "dataplane/core/vhost_port_backend.h"
#include "dataplane/datapath/pmd.h"
#include "dataplane/datapath/tsan_dpdk.h"

namespace sluice {
namespace {

constexpr char kVersion[] = "0.1.0";

// How often a metrics port that could not be listened on is tried again:
// one bind() per attempt, so often enough that scrapes resume within
// seconds of the port freeing.
constexpr std::chrono::milliseconds kMetricsRetryInterval{2000};

std::vector<std::string> ealArguments(const SluicedConfig& c, const LcorePlacement& placement) {
  std::vector<std::string> args = {"sluiced"};
  args.insert(args.end(), {"--lcores", placement.ealLcores(), "--main-lcore", std::to_string(c.main_core)});
  std::istringstream extra(c.eal_args);
  for (std::string word; extra >> word;) args.push_back(word);
  // DPDK's own messages: keep them to warnings unless we are debugging.
  args.push_back(c.log_level == "debug" ? "--log-level=8" : "--log-level=5");
  return args;
}

// A connected vhost-user port holds a few descriptors (its socket, a kick and
// a call eventfd per vring, a listening socket in server mode, its pod
// socket directory): a full port
// table needs thousands, past the soft limit a shell starts with (1024). The
// soft limit is raised to the hard one, which the container runtime sets.
void raiseDescriptorLimit(uint16_t max_ports) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  // Two queue pairs' worth per port, and the rest of sluiced.
  const rlim_t wanted = static_cast<rlim_t>(max_ports) * 10 + 256;
  if (limit.rlim_cur < wanted)
    logWarning("open-file limit ", limit.rlim_cur, " is below the ", wanted, " a table of max-ports ", max_ports,
               " may need: ports beyond it fail to open or connect");
}

// True if something accepts connections on the unix socket at `path`.
bool socketIsLive(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

int run(int argc, char** argv) {
  // Block the shutdown signals before EAL and gRPC start their threads, so
  // they inherit the mask and only sigwait() below receives them.
  const double start_time_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto args = parseSluicedArgs(argc, argv);
  if (!args.ok()) {
    if (args.status().code() == absl::StatusCode::kCancelled) {
      std::fputs(std::string(args.status().message()).c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "sluiced: %s\n", std::string(args.status().message()).c_str());
    return 2;
  }
  // What sluiced starts with; restart-only keys keep these values for the
  // whole run (live ones may change: `settings` below).
  const SluicedConfig* config = &args->config;
  setLogLevel(config->log_level);
  for (const std::string& key : config->ignored_keys)
    logWarning("config key '", key, "' is for a feature this sluiced does not have yet; ignored");
  if (absl::Status s = loadCrashPointFromEnvironment(); !s.ok()) {
    logError(s.message());
    return 2;
  }

  // The features linked into this sluiced (feature.h), made from the
  // configuration before anything starts: one that cannot be (e.g. a
  // configured SR-IOV pool that is not there) stops sluiced with the reason.
  std::vector<std::unique_ptr<Feature>> features;
  std::string feature_names;
  for (const FeatureRegistration& f : registeredFeatures()) {
    auto made = f.make(*config);
    if (!made.ok()) {
      logError(made.status().message());
      return 1;
    }
    if (*made == nullptr) continue;  // off in this configuration
    features.push_back(std::move(*made));
    feature_names += std::string(feature_names.empty() ? "" : " ") + std::string(f.name);
  }

  std::error_code ec;
  std::filesystem::create_directories(config->socket_dir, ec);
  if (ec) {
    logError("creating socket directory ", config->socket_dir, ": ", ec.message());
    return 1;
  }
  std::filesystem::create_directories(std::filesystem::path(config->api_socket).parent_path(), ec);
  if (!config->agent_api_socket.empty())
    std::filesystem::create_directories(std::filesystem::path(config->agent_api_socket).parent_path(), ec);
  if (socketIsLive(config->api_socket)) {
    logError("another sluiced is serving ", config->api_socket);
    return 1;
  }
  ::unlink(config->api_socket.c_str());

  // The checkpoint is read before anything starts: a file of a newer version
  // than this sluiced's holds a newer sluiced's promises, which starting
  // empty would break (and the first save would overwrite). sluiced stops
  // instead, leaving the file for the sluiced that wrote it.
  CheckpointStore checkpoint(config->state_dir, config->checkpoint_fsync);
  absl::StatusOr<CheckpointLoad> loaded = checkpoint.load();
  if (!loaded.ok()) {
    logError("not starting: ", loaded.status().message(),
             " (run a sluiced that reads it, or move the file away to start with no ports)");
    return 1;
  }

  // Read before the EAL pins this thread to the main lcore's CPU.
  absl::StatusOr<std::vector<unsigned>> cpus = allowedCpus();
  absl::StatusOr<LcorePlacement> placement =
      cpus.ok() ? placeLcores(*cpus, config->main_core, config->pmd_cores) : cpus.status();
  if (!placement.ok()) {
    logError("not starting: ", placement.status().message());
    return 1;
  }
  logInfo(placement->describe(*cpus));

  raiseDescriptorLimit(config->max_ports);
  std::vector<std::string> eal_args = ealArguments(*config, *placement);
  std::vector<char*> eal_argv;
  for (std::string& a : eal_args) eal_argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0) {
    logError("EAL initialisation failed: ", rte_strerror(rte_errno));
    return 1;
  }

  // One pool of `mbufs` buffers per NUMA socket the PMDs run on, in that
  // socket's memory (one socket: the one pool). Cache of 256 per lcore:
  // DPDK's recommended ceiling, amortises the ring. DPDK's default ops, or
  // (built with TSan) ops that state its hand-overs.
  DpdkNumaTopology topology;
  const std::vector<unsigned> pmd_sockets = pmdSockets(config->pmd_cores, topology);
  absl::StatusOr<MbufPools> pools = MbufPools::create(
      pmd_sockets,
      [&](unsigned socket) {
        return rte_pktmbuf_pool_create_by_ops(absl::StrCat("sluice_mbufs_s", socket).c_str(), config->mbufs, 256, 0,
                                              static_cast<uint16_t>(config->mbuf_size + RTE_PKTMBUF_HEADROOM),
                                              static_cast<int>(socket), handoverPoolOps());
      },
      rte_mempool_free);
  if (!pools.ok()) {
    logError(pools.status().message(), " (", config->mbufs, " mbufs per socket)");
    rte_eal_cleanup();
    return 1;
  }
  if (pools->bySocket().size() > 1) {
    std::string sockets;
    for (size_t p = 0; p < pmd_sockets.size(); ++p)
      sockets += absl::StrCat(p == 0 ? "" : ", ", "PMD ", p, " on ", pmd_sockets[p]);
    logInfo("NUMA: ", pools->bySocket().size(), " mbuf pools of ", config->mbufs, " mbufs, one per socket (", sockets,
            ")");
  }

  // One context per PMD, and the PMD that runs on it.
  std::vector<std::unique_ptr<PmdContext>> contexts;
  for (unsigned lcore : config->pmd_cores) {
    auto& ctx = *contexts.emplace_back(std::make_unique<PmdContext>());
    ctx.lcore = lcore;
    ctx.index = static_cast<uint32_t>(contexts.size() - 1);
    ctx.sizePortTables(config->max_ports);
    // Every flow-cache structure is sized and allocated here, before the PMD
    // runs: the fast path never allocates.
    ctx.megaflows = std::make_unique<flow::MegaflowTable>(config->flow_limit);
    flow::FlowLookupConfig fc;
    fc.emc.entries = config->emc_entries;
    fc.emc.insert_inv_prob = config->emc_insert_inv_prob;
    fc.emc.seed = 0x5eed + lcore;  // distinct insertion coin flips per PMD
    fc.smc.enabled = config->smc_enable;
    auto lookup = flow::FlowLookup::create(fc, *ctx.megaflows);
    if (!lookup.ok()) {
      logError("flow caches: ", lookup.status().message());
      rte_eal_cleanup();
      return 1;
    }
    ctx.lookup = std::move(*lookup);
    ctx.gate.tsc_hz = rte_get_tsc_hz();
    ctx.gate.rate_per_sec = config->upcall_rate;
    ctx.gate.burst = config->upcall_burst;
    ctx.max_sleep_us = config->pmd_max_sleep_us;
    ctx.icmp_errors = {rte_get_tsc_hz(), config->icmp_error_rate};
  }
  std::vector<PmdContext*> pmd_contexts;
  for (auto& ctx : contexts) pmd_contexts.push_back(ctx.get());
  givePmdsTheirPools(pmd_contexts, topology, *pools);
  for (auto& f : features)
    if (absl::Status s = f->preparePmds(pmd_contexts); !s.ok()) {
      logError(s.message());
      rte_eal_cleanup();
      return 1;
    }
  std::vector<std::unique_ptr<Pmd>> pmds;
  for (auto& ctx : contexts) pmds.push_back(std::make_unique<Pmd>(*ctx));

  // vhost-user ports on the vhost library (no ethdev each), DPDK vdevs as
  // ethdevs. Partial offload on a pod's port (offload-port, tests and
  // benchmarks) marks packets in an ethdev's rx path: then pod ports are
  // net_vhost ethdevs, as many as RTE_MAX_ETHPORTS allows.
  std::vector<PmdMailbox*> mailboxes;
  for (auto& ctx : contexts) mailboxes.push_back(&ctx->mailbox);
  VhostPortBackend vhost_ports(std::move(mailboxes));
  DpdkPortBackend ethdev_ports(*pools, topology);
  const bool pod_ports_are_ethdevs = config->offload_provider != "off" && !config->offload_port.empty();
  if (pod_ports_are_ethdevs) logInfo("offload-port names a pod: vhost-user ports are net_vhost ethdevs");
  SplitPortBackend backend(pod_ports_are_ethdevs ? static_cast<PortBackend&>(ethdev_ports) : vhost_ports, ethdev_ports);
  DataplaneControl control(*config, backend, pmd_contexts, rte_get_tsc_hz(), &topology);
  // Whichever way run() returns, the features' modules leave the core
  // before it goes.
  absl::Cleanup features_before_core = [&features] { features.clear(); };
  // Every feature's control modules first, then their ports, so each
  // module sees every port added.
  for (auto& f : features)
    if (absl::Status s = f->registerModules(control); !s.ok()) {
      logError(s.message());
      rte_eal_cleanup();
      return 1;
    }
  for (auto& f : features)
    if (absl::Status s = f->openPorts(control, pools->home()); !s.ok()) {
      logError(s.message());
      rte_eal_cleanup();
      return 1;
    }
  for (auto& f : features) f->start();
  control.start();
  // Keep the word given before a restart: every checkpointed port comes back
  // with its number and socket before the API serves (so no CNI call can
  // race the restore), and pods that went away meanwhile are collected.
  {
    control.setCheckpointStore(&checkpoint);
    RestoreSummary r = control.restore(loaded->state);
    if (loaded->found)
      logInfo("checkpoint ", checkpoint.path(), ": ", r.restored, " port(s) restored, ", r.dropped,
              " dropped, ", r.garbage_collected, " garbage-collected (pod netns gone)");
    control.collectGarbage();
    control.startGarbageCollector(std::chrono::milliseconds(config->gc_interval_ms));
    // Only now: the restore's own checkpoint write is not a step under test.
    armCrashPoint();
  }
  for (size_t i = 0; i < pmds.size(); ++i) {
    tsanRelease(pmds[i].get());  // Pmd::launch acquires it on the lcore
    if (int rc = rte_eal_remote_launch(Pmd::launch, pmds[i].get(), config->pmd_cores[i]); rc != 0) {
      logError("launching the PMD on lcore ", config->pmd_cores[i], ": ", rte_strerror(-rc));
      for (auto& ctx : contexts) ctx->mailbox.stop.store(true);
      rte_eal_mp_wait_lcore();
      rte_eal_cleanup();
      return 1;
    }
  }

  // The core's service, and each feature's own beside it on one socket.
  std::vector<ServiceExtension*> extensions;
  DeprecatedForwards forwards;
  std::vector<grpc::Service*> services;
  for (auto& f : features) {
    if (ServiceExtension* e = f->extension()) extensions.push_back(e);
    if (grpc::Service* s = f->service()) services.push_back(s);
    f->forwardDeprecated(forwards);
  }
  // The live settings: changed through the API or by a re-read of the
  // --config files; each change reaches the logger and the core (which
  // hands the PMDs theirs in a snapshot) before the call returns.
  RuntimeConfig settings(*args, [&control](const SluicedConfig& next) {
    setLogLevel(next.log_level);
    control.applyLiveSettings(next);
  });
  DataplaneService service(control, kVersion, std::move(extensions), std::move(forwards), &settings);
  services.insert(services.begin(), &service);
  // Who is at the other end of each API connection (the kernel's word),
  // for the log of who captured what.
  PeerCredentials peers;
  // Packet trace and capture: the PMDs' taps, armed only while a session runs.
  PacketTaps taps(pmd_contexts, rte_get_tsc_hz());
  ObserveService observe(control, taps,
                         [&peers](const grpc::ServerContext& ctx) { return peers.describe(ctx.peer()); });
  services.push_back(&observe);
  // The config files, watched (on a control thread of the watcher's own)
  // from before the API serves; a change made since they were read at
  // start is picked up by the first re-read here.
  auto reload = [&settings] {
    absl::StatusOr<ReloadResult> reloaded = settings.reloadFiles();
    if (!reloaded.ok()) logError("config file not applied (nothing changed): ", reloaded.status().message());
  };
  std::unique_ptr<ConfigFileWatcher> watcher;
  if (!settings.files().empty()) {
    auto started = ConfigFileWatcher::start(settings.files(), reload);
    if (started.ok()) watcher = *std::move(started);
    else logWarning("config files will not be re-read when they change: ", started.status().message());
    reload();
  }
  // Only root (the CNI plugin, sluicectl via kubectl exec) may drive the
  // dataplane: the socket is born mode 0600.
  // Every call served is counted and timed for the metrics endpoint.
  GrpcCallMetrics call_metrics;
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(makeGrpcCallMetricsInterceptor(call_metrics));
  // The Prometheus endpoint, when configured: its page is built on its own
  // threads from the service's answers (the same snapshot sluicectl reads).
  // It is tried before the API serves, so that once the readiness probe
  // (an API call) passes, a scrape normally finds sluiced too; a port it
  // cannot listen on (e.g. held by another process) is retried while the
  // node serves pods, never a reason to stop.
  MetricsEndpoint metrics(kMetricsRetryInterval);
  if (config->metrics_port != 0) {
    absl::StatusOr<Ipv4AllowList> allowed = Ipv4AllowList::parse(config->metrics_allowed_cidrs);
    MetricsHttpOptions http;
    http.address = config->metrics_address;
    http.port = config->metrics_port;
    http.allowed = allowed.ok() ? *std::move(allowed) : Ipv4AllowList{};  // checked when the key was read
    const MetricsPageOptions page{.pod_labels = config->metrics_pod_labels};
    metrics.start([&, http, page] {
      return MetricsHttpServer::start(http, [&, page] {
        MetricsSnapshot snapshot = takeMetricsSnapshot(service, call_metrics, start_time_seconds);
        snapshot.process.metrics_bind_failures = metrics.bindFailures();
        return renderMetrics(snapshot, page);
      });
    });
  }
  absl::StatusOr<std::unique_ptr<ApiServer>> server =
      startApiServer(config->api_socket, services, peers, std::move(interceptors));
  // The node controller's socket, when configured: its calls reach the
  // server above through an in-process channel, so it starts after it.
  std::unique_ptr<AgentApiGateway> agent_gateway;
  std::unique_ptr<ApiServer> agent_server;
  if (server.ok() && !config->agent_api_socket.empty()) {
    ::unlink(config->agent_api_socket.c_str());
    agent_gateway = std::make_unique<AgentApiGateway>((*server)->grpc().InProcessChannel(grpc::ChannelArguments()));
    auto started = startAgentApiServer(config->agent_api_socket, config->agent_api_gid, *agent_gateway, peers);
    if (started.ok()) {
      agent_server = *std::move(started);
      logInfo("node controller API ", config->agent_api_socket, " (mode 0660, group ", config->agent_api_gid, ")");
    } else {
      server = started.status();  // the main server shuts down as it goes
    }
  }
  int exit_code = 0;
  if (!server.ok()) {
    logError(server.status().message());
    exit_code = 1;
    // No scrape reads the core from here on.
    metrics.stop();
  } else {
    logInfo("sluiced ", kVersion, " ready: API ", config->api_socket, ", ", pmds.size(), " PMD(s), pod CIDR ",
            config->pod_cidr.toString(), ", gateway ", config->gateway.toString(), " ",
            config->gateway_mac.toString(), ", features: ", feature_names.empty() ? "none" : feature_names,
            metrics.port() != 0 ? absl::StrCat(", metrics http://", config->metrics_address, ":", metrics.port(), "/metrics")
                                : "");
    int sig = 0;
    sigwait(&signals, &sig);
    logInfo("signal ", sig, " received, shutting down");
    // No scrape reads the core from here on.
    metrics.stop();
    // The controller's calls pass through the main server: they go first.
    if (agent_server) agent_server->shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    agent_server.reset();
    // In-flight calls get a moment to finish; then they are cancelled.
    (*server)->shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    // Destroyed, not only shut down: that joins its threads, so no handler
    // touches the core or a feature (their services and extensions) once
    // they start going away below.
    server->reset();
  }

  // No re-read from here on: the core is about to go.
  watcher.reset();
  control.stopGarbageCollector();
  // Closes the ports but leaves the checkpoint: a restarted sluiced (e.g. a
  // DaemonSet upgrade) restores them for the pods that are still running.
  control.removeAllPorts();
  // The vhost library lets go of the pods' sockets on the backend's own
  // thread (within the sockets' timeouts); its memory goes with EAL below.
  while (!vhost_ports.waitUnregistered(std::chrono::seconds(5)))
    logWarning("shutdown: still waiting for the vhost library to release the pods' sockets");
  control.stopFlowThread();
  for (auto& f : features) f->stopBeforePmds();
  for (auto& ctx : contexts) ctx->mailbox.stop.store(true, std::memory_order_relaxed);
  rte_eal_mp_wait_lcore();
  // A PMD's last act is storing `running` false (release); loading it
  // (acquire) orders all its work before what is freed below, in our own
  // code, where ThreadSanitizer sees it (it cannot see inside DPDK's wait).
  for (auto& ctx : contexts)
    while (ctx->mailbox.running.load(std::memory_order_acquire)) {
    }
  // No PMD or control thread uses the features' ports any more (the uplink):
  // out of the port table and closed; then the features go, before the
  // core they are registered with.
  for (auto& f : features) f->closeAfterPmds();
  features.clear();
  ::unlink(config->api_socket.c_str());
  if (!config->agent_api_socket.empty()) ::unlink(config->agent_api_socket.c_str());
  for (const auto& [socket, pool] : pools->bySocket()) rte_mempool_free(pool);
  rte_eal_cleanup();
  logInfo("sluiced stopped");
  return exit_code;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::run(argc, argv); }
