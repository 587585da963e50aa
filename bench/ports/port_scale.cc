// What a node's port count costs its control path and memory: sluiced is
// started with max-ports 1024 and given --ports vhost-user pod ports one
// AddPort at a time (client mode, sluice-cni's default: registering the port
// and its first connect, which finds no pod), timing each call; at the
// checkpoints (1, 100, 500, 1000 by default) sluiced's resident memory is
// read from /proc. Then --connect pods (net_virtio_user in this process,
// listening) are attached to as many of the ports to show what a connected
// pod adds, and every port is deleted again, timed likewise.
//
// Output: one JSON line per checkpoint, then one for the connected pods and
// one for the deletes:
//   {"ports": N, "rss_kib": R, "add_ms_median": M, "add_ms_p99": P, "add_ms_max": X}
//     (AddPort latencies of the ports added since the previous checkpoint)
//   {"connected": C, "rss_kib": R, "rss_kib_per_pod": D}
//   {"deleted": N, "delete_ms_median": M, "delete_ms_p99": P}
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  size_t ports = 1000;
  std::vector<size_t> checkpoints{1, 100, 500, 1000};
  size_t connect = 12;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--ports") {
      o.ports = std::stoul(v);
    } else if (k == "--connect") {
      o.connect = std::stoul(v);
    } else if (k == "--checkpoints") {
      o.checkpoints.clear();
      for (size_t at = 0; at < v.size();) {
        const size_t comma = v.find(',', at);
        o.checkpoints.push_back(std::stoul(v.substr(at, comma - at)));
        at = comma == std::string::npos ? v.size() : comma + 1;
      }
    } else {
      return false;
    }
  }
  return o.ports >= 1 && o.ports <= 1020 && o.connect <= 12;
}

long rssKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

std::string podName(size_t i) { return "scale-" + std::to_string(i); }

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice;
  using namespace sluice::test;
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: port_scale [--ports N<=1020] [--checkpoints a,b,..] [--connect C<=12]\n");
    return 2;
  }
  if (!initPodEal(argv[0]) || podPool() == nullptr) return 1;
  SluicedOptions so;
  so.pod_cidr = "10.250.0.0/21";
  so.max_ports = 1024;
  std::string error;
  auto node = SluicedProcess::start(so, &error);
  if (node == nullptr) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::vector<double> add_ms;
  for (size_t i = 0; i < o.ports; ++i) {
    const Ipv4Address ip{static_cast<uint32_t>((10u << 24) | (250u << 16)) + 10 + static_cast<uint32_t>(i)};
    v1::AddPortRequest req = portRequest(podName(i), ip.toString(), v1::VHOST_MODE_CLIENT);
    req.set_socket_subdir(podName(i));
    v1::AddPortResponse resp;
    const auto t0 = Clock::now();
    const grpc::Status s = node->addPort(req, &resp);
    add_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!s.ok()) {
      std::fprintf(stderr, "AddPort %zu: %s\n%s\n", i, s.error_message().c_str(), node->log().c_str());
      return 1;
    }
    if (std::find(o.checkpoints.begin(), o.checkpoints.end(), i + 1) != o.checkpoints.end()) {
      std::printf("{\"ports\": %zu, \"rss_kib\": %ld, \"add_ms_median\": %.3f, \"add_ms_p99\": %.3f, "
                  "\"add_ms_max\": %.3f}\n",
                  i + 1, rssKib(node->pid()), quantile(add_ms, 0.5), quantile(add_ms, 0.99),
                  quantile(add_ms, 1.0));
      std::fflush(stdout);
      add_ms.clear();
    }
  }
  // Pods on the first ports: each listens where sluiced's port connects
  // (sluiced retries about once a second), and the port's link comes up.
  const long before = rssKib(node->pid());
  std::vector<std::unique_ptr<VirtioPod>> pods;
  for (size_t i = 0; i < o.connect; ++i) {
    auto pod = VirtioPod::create(node->socketDir() + "/" + podName(i) + "/net1.sock", /*server=*/true, podPool());
    if (!pod.ok()) {
      std::fprintf(stderr, "pod %zu: %s\n", i, pod.status().ToString().c_str());
      return 1;
    }
    pods.push_back(std::move(*pod));
  }
  const v1::ListPortsResponse listed = node->ports();
  for (const auto& p : listed.ports())
    if (p.port_no() < o.connect && !node->waitLinkUp(p.port_no())) {
      std::fprintf(stderr, "port %u: link not up\n", p.port_no());
      return 1;
    }
  const long after = rssKib(node->pid());
  std::printf("{\"connected\": %zu, \"rss_kib\": %ld, \"rss_kib_per_pod\": %.1f}\n", o.connect, after,
              o.connect == 0 ? 0.0 : static_cast<double>(after - before) / static_cast<double>(o.connect));
  std::fflush(stdout);
  pods.clear();
  std::vector<double> delete_ms;
  for (size_t i = 0; i < o.ports; ++i) {
    const auto t0 = Clock::now();
    const grpc::Status s = node->deletePort(podName(i), "net1");
    delete_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!s.ok()) {
      std::fprintf(stderr, "DeletePort %zu: %s\n", i, s.error_message().c_str());
      return 1;
    }
  }
  std::printf("{\"deleted\": %zu, \"delete_ms_median\": %.3f, \"delete_ms_p99\": %.3f}\n", o.ports,
              quantile(delete_ms, 0.5), quantile(delete_ms, 0.99));
  return node->stop() == 0 ? 0 : 1;
}
