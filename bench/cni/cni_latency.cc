// CNI ADD and DEL latency of sluice-cni against a real sluiced, with
// host-local IPAM, as a container runtime sees it: wall time from exec of
// the plugin to its exit, stdin config and CNI_* environment as a runtime
// passes them. Two phases:
//   sequential: N attachments one after another (each ADD, then the DEL of
//               the attachment added `window` ADDs before, so the port table
//               holds a realistic number of ports while it is measured);
//   parallel:   M attachments in waves of W concurrent ADDs, then W
//               concurrent DELs (W and K at most sluiced's max-ports,
//               256 unless a --sluiced-flag raises it).
// Reports median, p90, p99 and max per phase and verb. A benchmark: it never
// fails on a figure (it fails only if a CNI call fails).
//
// Usage: cni_latency [--sequential N] [--parallel M] [--wave W] [--window K]
//                    [--plugin PATH] [--ipam-dir /usr/lib/cni] [--json]
//                    [--sluiced-flag F]...  (e.g. --sluiced-flag --checkpoint-fsync=false)
//                    [--cni-version 1.0.0|1.1.0]
// Needs root (sluiced's EAL) and the built sluiced next to it (SLUICED_PATH).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataplane/datapath/limits.h"
#include "tests/integration/sluiced_process.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  int sequential = 200, parallel = 50, wave = 25, window = 16;
  std::string plugin = SLUICE_CNI_BINARY;
  std::string cni_path = "/usr/lib/cni";
  bool json_out = false;
  std::vector<std::string> sluiced_flags;  // passed through to sluiced
  std::string cni_version = "1.0.0";
};

struct CallResult {
  double ms = 0;
  int exit_code = -1;
  std::string out;
};

// Runs the plugin once: `conf` on stdin, `env` as its whole environment.
CallResult runPlugin(const std::string& plugin, const std::vector<std::string>& env, const std::string& conf) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<char*> argv = {const_cast<char*>(plugin.c_str()), nullptr};
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  CallResult r;
  auto t0 = Clock::now();
  pid_t pid = -1;
  int rc = posix_spawn(&pid, plugin.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return r;
  }
  // The config is far below a pipe's buffer: one write, then EOF.
  ssize_t w = ::write(in[1], conf.data(), conf.size());
  (void)w;
  ::close(in[1]);
  char buf[4096];
  while (ssize_t n = ::read(out[0], buf, sizeof buf)) {
    if (n < 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct Stats {
  double median, p90, p99, max;
  size_t n;
};

Stats summarize(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0, 0, 0};
  std::sort(v.begin(), v.end());
  // Nearest-rank percentiles: with 200 samples p99 is the 198th.
  auto rank = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1)]; };
  return {rank(0.5), rank(0.9), rank(0.99), v.back(), v.size()};
}

class Bench {
 public:
  Bench(Options o, sluice::test::SluicedProcess& node) : o_(std::move(o)), node_(node) {
    work_ = node.dir() + "/cni";
    std::filesystem::create_directories(work_);
    // The node's plugin config lets records and sockets live in this run's
    // directory (a network config alone may not put them there).
    node_config_ = work_ + "/node-cni.json";
    std::ofstream(node_config_) << json{{"dataDirRoot", work_}, {"socketDirRoot", node.dir()}}.dump() << "\n";
    conf_ = json{{"cniVersion", o_.cni_version},
                 {"name", "bench"},
                 {"type", "sluice-cni"},
                 {"apiSocket", node.apiSocket()},
                 {"socketDir", node.socketDir()},
                 {"dataDir", work_ + "/records"},
                 {"ipam",
                  {{"type", "host-local"},
                   {"dataDir", work_ + "/ipam"},
                   {"ranges", {{{{"subnet", "10.250.0.0/24"}, {"gateway", "10.250.0.1"}}}}}}}}
                .dump();
  }

  CallResult call(const std::string& verb, int id) {
    const std::string cid = "bench" + std::to_string(id) + "0123456789abcdef";
    std::vector<std::string> env = {"CNI_COMMAND=" + verb,
                                    "CNI_CONTAINERID=" + cid,
                                    "CNI_NETNS=/var/run/netns/bench-" + std::to_string(id),
                                    "CNI_IFNAME=net1",
                                    "CNI_PATH=" + o_.cni_path,
                                    "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=bench;K8S_POD_NAME=pod-" +
                                        std::to_string(id),
                                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                    "SLUICE_CNI_NODE_CONFIG=" + node_config_};
    CallResult r = runPlugin(o_.plugin, env, conf_);
    if (r.exit_code != 0) {
      std::fprintf(stderr, "%s %d failed (exit %d): %s\n", verb.c_str(), id, r.exit_code, r.out.c_str());
      failed_ = true;
    }
    return r;
  }

  void sequential(std::vector<double>& add, std::vector<double>& del) {
    for (int i = 0; i < o_.sequential; ++i) {
      add.push_back(call("ADD", i).ms);
      if (i >= o_.window) del.push_back(call("DEL", i - o_.window).ms);
    }
    for (int i = std::max(0, o_.sequential - o_.window); i < o_.sequential; ++i) del.push_back(call("DEL", i).ms);
  }

  void parallel(std::vector<double>& add, std::vector<double>& del) {
    const int base = 100000;  // ids distinct from the sequential phase
    for (int first = 0; first < o_.parallel; first += o_.wave) {
      int n = std::min(o_.wave, o_.parallel - first);
      for (const char* verb : {"ADD", "DEL"}) {
        std::vector<double> ms(static_cast<size_t>(n));
        std::vector<std::thread> threads;
        for (int k = 0; k < n; ++k)
          threads.emplace_back([&, k] { ms[static_cast<size_t>(k)] = call(verb, base + first + k).ms; });
        for (auto& t : threads) t.join();
        auto& into = std::string(verb) == "ADD" ? add : del;
        into.insert(into.end(), ms.begin(), ms.end());
      }
    }
  }

  bool failed() const { return failed_; }

 private:
  Options o_;
  sluice::test::SluicedProcess& node_;
  std::string work_, conf_, node_config_;
  bool failed_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--sequential") o.sequential = std::stoi(next());
    else if (a == "--parallel") o.parallel = std::stoi(next());
    else if (a == "--wave") o.wave = std::stoi(next());
    else if (a == "--window") o.window = std::stoi(next());
    else if (a == "--plugin") o.plugin = next();
    else if (a == "--ipam-dir") o.cni_path = next();
    else if (a == "--json") o.json_out = true;
    else if (a == "--sluiced-flag") o.sluiced_flags.push_back(next());
    else if (a == "--cni-version") o.cni_version = next();
    else {
      std::fprintf(stderr, "usage: %s [--sequential N] [--parallel M] [--wave W] [--window K] [--plugin PATH] "
                           "[--ipam-dir DIR] [--json] [--sluiced-flag F]... [--cni-version V]\n", argv[0]);
      return 2;
    }
  }
  if (o.wave < 1 || o.wave > sluice::kMaxPortsLimit || o.window < 0 || o.window > sluice::kMaxPortsLimit) {
    std::fprintf(stderr, "--wave 1..%u and --window 0..%u: sluiced holds at most max-ports ports\n",
                 unsigned{sluice::kMaxPortsLimit}, unsigned{sluice::kMaxPortsLimit});
    return 2;
  }
  std::string error;
  sluice::test::SluicedOptions so;
  so.extra_flags = o.sluiced_flags;
  auto node = sluice::test::SluicedProcess::start(so, &error);
  if (!node) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  Bench bench(o, *node);
  // One untimed ADD/DEL: page cache and host-local's first directory set-up.
  bench.call("ADD", 999999);
  bench.call("DEL", 999999);

  std::vector<double> seq_add, seq_del, par_add, par_del;
  bench.sequential(seq_add, seq_del);
  bench.parallel(par_add, par_del);
  if (bench.failed()) {
    std::fprintf(stderr, "some CNI calls failed; sluiced log:\n%s\n", node->log().c_str());
    return 1;
  }
  json report = json::object();
  auto put = [&](const char* name, const std::vector<double>& v) {
    Stats s = summarize(v);
    report[name] = {{"n", s.n}, {"median_ms", s.median}, {"p90_ms", s.p90}, {"p99_ms", s.p99}, {"max_ms", s.max}};
    if (!o.json_out)
      std::printf("%-16s n=%-4zu median %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  max %6.2f ms\n", name, s.n, s.median,
                  s.p90, s.p99, s.max);
  };
  put("sequential ADD", seq_add);
  put("sequential DEL", seq_del);
  put(("parallel ADD x" + std::to_string(o.wave)).c_str(), par_add);
  put(("parallel DEL x" + std::to_string(o.wave)).c_str(), par_del);
  if (o.json_out) std::printf("%s\n", report.dump().c_str());
  return 0;
}
