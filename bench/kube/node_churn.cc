// The node controller at scale: a real sluiced (uplink on a net_null device,
// only the node table matters here), the real sluice-agent and the fake
// Kubernetes API server. For each Node count N:
//   1. the fake API server holds N Sluice Nodes (annotated, distinct VTEPs,
//      distinct /24 pod CIDRs, Ready) before the agent starts;
//   2. the agent starts; the initial sync is the time from its start until
//      sluiced's table holds all N; sluiced's RSS before the agent and after
//      the sync, and the agent's RSS after it;
//   3. B Nodes get a new VTEP in one burst (one control call). The fake
//      server records when it wrote each event to the watch stream
//      (CLOCK_MONOTONIC); this program polls RemoteNodes.ListNodes back to
//      back and records, per node, the end of the first poll whose reply
//      shows the new VTEP (CLOCK_MONOTONIC). Each latency is
//      appeared - emitted, an upper bound late by at most one poll's round
//      trip (reported as the poll granularity).
// Writes one JSON line per N to stdout and a markdown table to --out. A
// benchmark: it reports figures and never passes or fails.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/sluiced_process.h"
#include "tests/kube/fake_apiserver.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sluice::test::FakeApiServer;
using sluice::test::SluicedOptions;
using sluice::test::SluicedProcess;

constexpr char kToken[] = "bench-token";
constexpr uint32_t kVni = 7;
constexpr char kOwnNode[] = "node-self";

double monotonicSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// VmRSS of a process, in KiB (0 when it cannot be read).
uint64_t rssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

// Node i's VTEP (generation 0: as listed; 1: after the burst) and pod CIDR:
// 172.16-17.x.1-250 and 10.1-32.x.0/24 hold 8000 of each, apart from this
// node's 192.168.77.1 and 10.250.0.0/24.
std::string vtepOf(size_t i, int generation) {
  return "172." + std::to_string(16 + generation) + "." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
}
std::string cidrOf(size_t i) { return "10." + std::to_string(1 + i / 256) + "." + std::to_string(i % 256) + ".0/24"; }
std::string nameOf(size_t i) {
  char b[32];
  std::snprintf(b, sizeof b, "node-%05zu", i);
  return b;
}
std::string macOf(size_t i, int generation) {
  char b[32];
  std::snprintf(b, sizeof b, "02:%02x:00:00:%02zx:%02zx", 0x10 + generation, i / 256 % 256, i % 256);
  return b;
}

json nodeCommand(size_t i, int generation) {
  const std::string vtep = vtepOf(i, generation);
  const json annotation = {{"version", 1}, {"vtep", vtep}, {"mac", macOf(i, generation)}, {"vni", kVni}};
  return {{"name", nameOf(i)},
          {"pod_cidrs", {cidrOf(i)}},
          {"internal_ip", vtep},
          {"ready", true},
          {"annotations", {{"sluice.dev/vtep", annotation.dump()}}}};
}

class Agent {
 public:
  Agent(const std::string& log, std::vector<std::string> args) {
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* out = std::freopen(log.c_str(), "a", stderr);
      if (out != nullptr) ::dup2(::fileno(stderr), STDOUT_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
  }
  ~Agent() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

struct Options {
  std::vector<size_t> counts = {1000, 2500, 5000};
  size_t burst = 1000;
  std::string out;   // the summary's markdown file (empty: none)
  std::string work;  // scratch directory
  std::string label;
};

struct Poll {
  sluice::v1::ListNodesResponse reply;
  double start = 0, end = 0;
  bool ok = false;
};

Poll poll(SluicedProcess& sluiced) {
  Poll p;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  p.start = monotonicSeconds();
  p.ok = sluiced.remoteNodes().ListNodes(&ctx, {}, &p.reply).ok();
  p.end = monotonicSeconds();
  return p;
}

size_t kubernetesNodes(const sluice::v1::ListNodesResponse& r) {
  size_t n = 0;
  for (const auto& node : r.nodes()) n += node.source() == sluice::v1::NODE_SOURCE_KUBERNETES;
  return n;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[k];
}

struct Result {
  size_t n = 0;
  bool synced = false;
  double sync_s = 0;
  double sync_poll_ms = 0;  // median ListNodes round trip while waiting for the sync
  double sluiced_rss_before_mib = 0, sluiced_rss_after_mib = 0, agent_rss_mib = 0;
  size_t burst = 0, seen = 0;
  double median_ms = 0, p99_ms = 0, max_ms = 0, total_s = 0;
  double burst_poll_ms = 0;  // median ListNodes round trip during the burst
  size_t burst_polls = 0;
  // The agent's calls to sluiced (its reported counters): ApplyNodes batches
  // and ListNodes reads during the sync and during the burst.
  uint64_t sync_batches = 0, sync_lists = 0, burst_batches = 0, burst_lists = 0;
};

// One of the agent's counters as its last report to sluiced gives it.
uint64_t agentCounter(const Poll& p, const std::string& name) {
  const auto& c = p.reply.controller().counters();
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

Result runOne(const Options& o, size_t n) {
  Result r;
  r.n = n;
  const std::string dir = o.work + "/n" + std::to_string(n);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string error;
  auto api = FakeApiServer::start(dir + "/api", kToken, &error);
  if (!api) {
    std::cerr << "node_churn: " << error << "\n";
    return r;
  }
  // This node, as the kubelet made it (the agent publishes its VTEP), and N others.
  json nodes = json::array();
  nodes.push_back({{"name", kOwnNode}, {"pod_cidrs", {"10.250.0.0/24"}}, {"internal_ip", "192.168.77.1"}});
  for (size_t i = 0; i < n; ++i) nodes.push_back(nodeCommand(i, 0));
  if (api->control({{"op", "put_many"}, {"nodes", nodes}}).is_null()) {
    std::cerr << "node_churn: bulk put of " << n << " Nodes failed\n";
    return r;
  }
  const std::string config = dir + "/sluiced.json";
  std::ofstream(config) << R"({"vni": 7, "uplink": {"devargs": "net_null_churn0,no-rx=1", "vtep": "192.168.77.1/24"}})";
  SluicedOptions so;
  so.pod_cidr = "10.250.0.0/24";
  so.extra_flags = {"--config", config};
  auto sluiced = SluicedProcess::start(so, &error);
  if (!sluiced) {
    std::cerr << "node_churn: " << error << "\n";
    return r;
  }
  // Settle: the first listings allocate what every later one reuses.
  for (int k = 0; k < 3; ++k) poll(*sluiced);
  r.sluiced_rss_before_mib = static_cast<double>(rssKib(sluiced->pid())) / 1024;

  const double t0 = monotonicSeconds();
  Agent agent(dir + "/agent.log",
              {SLUICE_AGENT_PATH, "--kubeconfig", api->kubeconfig(), "--node-name", kOwnNode, "--api-socket",
               sluiced->apiSocket(), "--log-level", "warning"});
  std::vector<double> rtts;
  while (monotonicSeconds() - t0 < 600) {
    Poll p = poll(*sluiced);
    rtts.push_back((p.end - p.start) * 1e3);
    if (p.ok && kubernetesNodes(p.reply) == n) {
      r.synced = true;
      r.sync_s = p.end - t0;
      break;
    }
  }
  r.sync_poll_ms = percentile(rtts, 0.5);
  if (!r.synced) {
    std::cerr << "node_churn: N=" << n << ": the table did not reach " << n << " nodes in 600 s\n";
    return r;
  }
  // Let the agent finish its pass (the report after the last add, its own
  // VTEP's patch) before measuring memory and starting the burst.
  ::usleep(2000 * 1000);
  r.sluiced_rss_after_mib = static_cast<double>(rssKib(sluiced->pid())) / 1024;
  r.agent_rss_mib = static_cast<double>(rssKib(agent.pid())) / 1024;
  const Poll synced = poll(*sluiced);
  r.sync_batches = agentCounter(synced, "sluiced_batches");
  r.sync_lists = agentCounter(synced, "sluiced_lists");

  // The burst: B Nodes get a new VTEP (and MAC), in one control call.
  const size_t b = std::min(o.burst, n);
  r.burst = b;
  json changes = json::array();
  std::map<std::string, std::string> want;  // name -> new VTEP
  for (size_t i = 0; i < b; ++i) {
    changes.push_back(nodeCommand(i, 1));
    want[nameOf(i)] = vtepOf(i, 1);
  }
  const json before = api->stats();
  const uint64_t rv_before = before.is_object() ? before.value("rv", 0ull) : 0;
  if (api->control({{"op", "put_many"}, {"nodes", changes}}).is_null()) {
    std::cerr << "node_churn: burst failed\n";
    return r;
  }
  std::map<std::string, double> appeared;
  rtts.clear();
  const double burst_start = monotonicSeconds();
  while (appeared.size() < b && monotonicSeconds() - burst_start < 600) {
    Poll p = poll(*sluiced);
    rtts.push_back((p.end - p.start) * 1e3);
    if (!p.ok) continue;
    for (const auto& node : p.reply.nodes()) {
      auto w = want.find(node.name());
      if (w != want.end() && node.vtep() == w->second) appeared.emplace(node.name(), p.end);
    }
  }
  r.burst_polls = rtts.size();
  // The agent reports after each pass: give the last one its moment.
  ::usleep(1000 * 1000);
  const Poll after = poll(*sluiced);
  r.burst_batches = agentCounter(after, "sluiced_batches") - r.sync_batches;
  r.burst_lists = agentCounter(after, "sluiced_lists") - r.sync_lists;
  r.burst_poll_ms = percentile(rtts, 0.5);
  r.seen = appeared.size();
  const json emitted = api->emitted(rv_before);
  std::map<std::string, double> emitted_at;
  if (emitted.is_array())
    for (const json& e : emitted) emitted_at.emplace(e[1].get<std::string>(), e[2].get<double>());
  std::vector<double> lat;
  double first_emit = 1e300, last_seen = 0;
  for (const auto& [name, t] : appeared) {
    auto e = emitted_at.find(name);
    if (e == emitted_at.end()) continue;
    lat.push_back((t - e->second) * 1e3);
    first_emit = std::min(first_emit, e->second);
    last_seen = std::max(last_seen, t);
  }
  r.median_ms = percentile(lat, 0.5);
  r.p99_ms = percentile(lat, 0.99);
  r.max_ms = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  r.total_s = lat.empty() ? 0 : last_seen - first_emit;
  if (lat.size() != b)
    std::cerr << "node_churn: N=" << n << ": " << appeared.size() << " of " << b << " changes seen, "
              << lat.size() << " with an emission time\n";
  fs::remove_all(dir);
  return r;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--counts") {
      o.counts.clear();
      std::stringstream s(v);
      for (std::string part; std::getline(s, part, ',');) o.counts.push_back(std::stoul(part));
    } else if (k == "--burst") {
      o.burst = std::stoul(v);
    } else if (k == "--out") {
      o.out = v;
    } else if (k == "--work") {
      o.work = v;
    } else if (k == "--label") {
      o.label = v;
    } else {
      return false;
    }
  }
  return !o.counts.empty() && *std::max_element(o.counts.begin(), o.counts.end()) <= 8000;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (argc % 2 == 0 || !parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: node_churn [--counts 1000,2500,5000] [--burst 1000] [--out summary.md] [--work DIR] "
                 "[--label TEXT]\n");
    return 2;
  }
  if (o.work.empty()) o.work = "/tmp/sluice-node-churn-" + std::to_string(::getpid());
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<Result> results;
  for (size_t n : o.counts) {
    Result r = runOne(o, n);
    results.push_back(r);
    std::cout << json{{"n", r.n},
                      {"synced", r.synced},
                      {"initial_sync_s", r.sync_s},
                      {"sync_poll_ms", r.sync_poll_ms},
                      {"sluiced_rss_before_mib", r.sluiced_rss_before_mib},
                      {"sluiced_rss_after_mib", r.sluiced_rss_after_mib},
                      {"agent_rss_mib", r.agent_rss_mib},
                      {"burst", r.burst},
                      {"burst_seen", r.seen},
                      {"burst_median_ms", r.median_ms},
                      {"burst_p99_ms", r.p99_ms},
                      {"burst_max_ms", r.max_ms},
                      {"burst_total_s", r.total_s},
                      {"burst_polls", r.burst_polls},
                      {"burst_poll_ms", r.burst_poll_ms},
                      {"agent_batches_sync", r.sync_batches},
                      {"agent_lists_sync", r.sync_lists},
                      {"agent_batches_burst", r.burst_batches},
                      {"agent_lists_burst", r.burst_lists}}
                     .dump()
              << std::endl;
  }
  fs::remove_all(o.work);
  if (o.out.empty()) return 0;
  std::ofstream md(o.out, std::ios::app);
  char line[512];
  md << "\n### " << (o.label.empty() ? "node_churn" : o.label) << "\n\n"
     << "| N | initial sync s | sluiced RSS growth MiB | agent RSS MiB | burst | burst median ms | burst p99 ms | "
        "burst max ms | burst total s | poll ms (sync / burst) | agent batches, lists (sync / burst) |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Result& r : results) {
    std::snprintf(line, sizeof line,
                  "| %zu | %.2f | %.1f | %.1f | %zu/%zu | %.1f | %.1f | %.1f | %.2f | %.1f / %.1f | %llu, %llu / %llu, "
                  "%llu |\n",
                  r.n, r.sync_s, r.sluiced_rss_after_mib - r.sluiced_rss_before_mib, r.agent_rss_mib, r.seen,
                  r.burst, r.median_ms, r.p99_ms, r.max_ms, r.total_s, r.sync_poll_ms, r.burst_poll_ms,
                  static_cast<unsigned long long>(r.sync_batches), static_cast<unsigned long long>(r.sync_lists),
                  static_cast<unsigned long long>(r.burst_batches), static_cast<unsigned long long>(r.burst_lists));
    md << line;
  }
  return 0;
}
