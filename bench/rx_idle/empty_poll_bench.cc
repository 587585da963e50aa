// What one empty poll of a connected vhost-user rx queue costs: the figure
// behind RxSchedule's kRxIdlePollsPerIteration (dataplane/datapath/rx_schedule.h).
// One process holds both sides: net_vhost ports (what sluiced polls) and
// net_virtio_user ports connected to them (the pods: queues set up, nothing
// sent). Debian's DPDK holds 32 ethdevs, so at most 15 pairs. Polls go
// round-robin over `queues` of them, as a PMD's scan does; cyc/pkt is
// cycles per poll. Informative only.
#include <benchmark/benchmark.h>
#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/cycle_meter.h"

namespace {

constexpr unsigned kPairs = 15;
std::vector<uint16_t> g_vhost_ports;  // sluiced's side, connected and silent
std::vector<uint16_t> g_all_ports;    // both sides, to stop at the end

bool startPort(uint16_t port, rte_mempool* pool) {
  rte_eth_conf conf{};
  if (rte_eth_dev_configure(port, 1, 1, &conf) != 0) return false;
  if (rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, nullptr, pool) != 0) return false;
  if (rte_eth_tx_queue_setup(port, 0, 256, SOCKET_ID_ANY, nullptr) != 0) return false;
  return rte_eth_dev_start(port) == 0;
}

bool setUp(const std::string& dir) {
  rte_mempool* pool = rte_pktmbuf_pool_create("empty_poll_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool == nullptr) return false;
  for (unsigned i = 0; i < kPairs; ++i) {
    const std::string sock = dir + "/q" + std::to_string(i) + ".sock";
    const std::string vhost = "net_vhost" + std::to_string(i), virtio = "net_virtio_user" + std::to_string(i);
    uint16_t vp = 0, up = 0;
    if (rte_vdev_init(vhost.c_str(), ("iface=" + sock + ",queues=1").c_str()) != 0 ||
        rte_eth_dev_get_port_by_name(vhost.c_str(), &vp) != 0 || !startPort(vp, pool))
      return false;
    g_all_ports.push_back(vp);
    if (rte_vdev_init(virtio.c_str(), ("path=" + sock + ",queues=1,queue_size=256").c_str()) != 0 ||
        rte_eth_dev_get_port_by_name(virtio.c_str(), &up) != 0 || !startPort(up, pool))
      return false;
    g_all_ports.push_back(up);
    g_vhost_ports.push_back(vp);
  }
  // The vhost side's queues are usable once the virtio side has set them up
  // (link up); until then a poll returns at once and would flatter the figure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (uint16_t p : g_vhost_ports) {
    rte_eth_link link{};
    while (rte_eth_link_get_nowait(p, &link) == 0 && link.link_status != RTE_ETH_LINK_UP) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return true;
}

// One empty rx burst per step, over the first state.range(0) queues in turn.
void BM_EmptyVhostPoll(benchmark::State& state) {
  const auto queues = static_cast<size_t>(state.range(0));
  rte_mbuf* pkts[32];
  uint64_t polls = 0, received = 0;
  size_t q = 0;
  const sluice::bench::CycleMeter meter;
  for (auto _ : state) {
    received += rte_eth_rx_burst(g_vhost_ports[q], 0, pkts, 32);
    if (++q == queues) q = 0;
    ++polls;
  }
  meter.report(state, polls);
  if (received != 0) state.SkipWithError("a silent queue returned packets");
}
BENCHMARK(BM_EmptyVhostPoll)->Arg(1)->Arg(4)->Arg(kPairs);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::string dir = "/tmp/empty_poll_bench." + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string prefix = "--file-prefix=empty_poll_" + std::to_string(::getpid());
  std::vector<std::string> args = {argv[0], "-l", "0", "--no-huge", "--no-pci", "-m", "512", "--no-shconf", prefix,
                                   "--log-level=3"};
  std::vector<char*> eal;
  for (auto& a : args) eal.push_back(a.data());
  int rc = 1;
  if (rte_eal_init(static_cast<int>(eal.size()), eal.data()) < 0) {
    std::fprintf(stderr, "EAL init failed\n");
  } else if (!setUp(dir)) {
    std::fprintf(stderr, "setting up the vhost-user pairs failed\n");
  } else {
    benchmark::RunSpecifiedBenchmarks();
    rc = 0;
  }
  for (uint16_t p : g_all_ports) {
    rte_eth_dev_stop(p);
    rte_eth_dev_close(p);
  }
  rte_eal_cleanup();
  std::filesystem::remove_all(dir);
  return rc;
}
