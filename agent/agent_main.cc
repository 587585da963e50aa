// sluice-agent: the node controller. Runs beside sluiced (a second container
// of the DaemonSet), follows the Kubernetes API's Nodes and keeps sluiced's
// remote-node table in line with them over sluiced's API socket. Kept out of
// sluiced so that API credentials, TLS and libcurl never share a process
// with the PMD threads, and so that it can crash and restart while sluiced
// goes on forwarding on its last table.
//
// Threads: the watch thread (NodeWatcher) and the main thread (Reconciler);
// SIGTERM/SIGINT set the stop flag both poll.
#include <curl/curl.h>
#include <signal.h>

#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "agent/kube_config.h"
#include "agent/node_cache.h"
#include "agent/node_watcher.h"
#include "agent/reconciler.h"
#include "agent/sluiced_client.h"
#include "common/log.h"
#include "common/prefix_ranges.h"

namespace po = boost::program_options;
using namespace sluice::agent;

namespace {

std::atomic<bool> g_stop{false};

void onSignal(int) { g_stop = true; }

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (const char* name : {"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "NODE_NAME"})
    if (const char* v = std::getenv(name)) env[name] = v;
  return env;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description desc(
      "usage: sluice-agent [options]\n"
      "Follows the Kubernetes API's Nodes and keeps sluiced's remote-node table in line with them");
  const std::map<std::string, std::string> env = environment();
  desc.add_options()("help", "this text")
      ("kubeconfig", po::value<std::string>()->default_value(""),
       "kubeconfig file (default: in-cluster service account)")
      ("context", po::value<std::string>()->default_value(""), "kubeconfig context (default: its current-context)")
      ("node-name", po::value<std::string>()->default_value(env.contains("NODE_NAME") ? env.at("NODE_NAME") : ""),
       "this node's name (default: $NODE_NAME)")
      ("api-socket", po::value<std::string>()->default_value("/run/sluice/api.sock"), "sluiced's API socket")
      ("not-ready-grace", po::value<unsigned>()->default_value(300),
       "seconds a Node may be NotReady before it leaves the table")
      ("resync-interval", po::value<unsigned>()->default_value(30),
       "seconds between whole-table reconciliations when nothing changes")
      ("watch-timeout", po::value<unsigned>()->default_value(300), "seconds the API server keeps one watch open")
      ("backoff-initial-ms", po::value<unsigned>()->default_value(500), "first reconnect delay")
      ("backoff-max-ms", po::value<unsigned>()->default_value(30000), "reconnect delay cap")
      ("allow-vtep-outside-internal-ips", po::bool_switch(),
       "take a remote node whose VTEP is none of its Node's InternalIP addresses (the VXLAN underlay is a "
       "network of its own); by default such a node is left out")
      ("routed-prefix-ranges", po::value<std::string>()->default_value(""),
       "CIDRs (comma list) other nodes' routed prefixes must lie inside (default: none is routed)")
      ("cluster-pod-cidrs", po::value<std::string>()->default_value(""),
       "the cluster's pod CIDR ranges (comma list): no other node's routed prefix may overlap them")
      ("log-level", po::value<std::string>()->default_value("info"), "error | warning | info | debug");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "sluice-agent: " << e.what() << "\n" << desc << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (!sluice::setLogLevel(vm["log-level"].as<std::string>())) {
    std::cerr << "sluice-agent: unknown log level\n";
    return 2;
  }
  const std::string node_name = vm["node-name"].as<std::string>();
  if (node_name.empty()) {
    std::cerr << "sluice-agent: no node name (--node-name or $NODE_NAME)\n";
    return 2;
  }
  const std::string kubeconfig = vm["kubeconfig"].as<std::string>();
  absl::StatusOr<KubeConfig> config =
      kubeconfig.empty() ? inClusterConfig(env) : kubeconfigFile(kubeconfig, vm["context"].as<std::string>());
  if (!config.ok()) {
    std::cerr << "sluice-agent: " << config.status().message() << "\n";
    return 2;
  }

  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  curl_global_init(CURL_GLOBAL_DEFAULT);

  WatchSettings ws;
  ws.watch_timeout = std::chrono::seconds(vm["watch-timeout"].as<unsigned>());
  ws.backoff_initial = std::chrono::milliseconds(vm["backoff-initial-ms"].as<unsigned>());
  ws.backoff_cap = std::chrono::milliseconds(vm["backoff-max-ms"].as<unsigned>());
  ReconcileSettings rs;
  rs.own_name = node_name;
  rs.not_ready_grace = std::chrono::seconds(vm["not-ready-grace"].as<unsigned>());
  rs.resync_interval = std::chrono::seconds(std::max(1u, vm["resync-interval"].as<unsigned>()));
  rs.backoff_initial = ws.backoff_initial;
  rs.backoff_cap = ws.backoff_cap;
  rs.allow_vtep_outside_internal_ips = vm["allow-vtep-outside-internal-ips"].as<bool>();
  for (const char* flag : {"routed-prefix-ranges", "cluster-pod-cidrs"}) {
    absl::StatusOr<sluice::PrefixRanges> ranges = sluice::parsePrefixRanges(vm[flag].as<std::string>());
    if (!ranges.ok()) {
      std::cerr << "sluice-agent: --" << flag << ": " << ranges.status().message() << "\n";
      return 2;
    }
    (std::string_view(flag) == "cluster-pod-cidrs" ? rs.cluster_pod_cidrs : rs.routed_prefix_ranges) = *ranges;
  }

  sluice::logInfo("sluice-agent: node ", node_name, ", API ", config->server, ", sluiced ",
                  vm["api-socket"].as<std::string>());
  NodeCache cache;
  NodeWatcher watcher(*config, ws, cache, g_stop);
  std::thread watch_thread([&] { watcher.run(); });
  {
    KubeClient kube(*config, &g_stop, ws.request_timeout);
    SluicedClient sluiced(vm["api-socket"].as<std::string>(), std::chrono::seconds(5));
    Reconciler reconciler(rs, cache, sluiced, kube, g_stop);
    reconciler.run();
  }
  cache.wake();
  watch_thread.join();
  curl_global_cleanup();
  sluice::logInfo("sluice-agent: stopped");
  return 0;
}
