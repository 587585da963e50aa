// The latency of the first packet after a quiet spell: one process plays two
// pods whose vhost-user ports are in client mode (the pods listen), stays
// quiet for a given gap, sends one 64-byte UDP frame from pod A to pod B and
// busy-polls B until it arrives. With pmd-max-sleep-us above 0 sluiced's PMD
// is asleep when the frame comes, so the figure includes its wake-up.
//
// Output, one JSON line each, flushed at once:
//   {"quiet": true} / {"quiet_done": true}   around --quiet-s seconds without
//                                            traffic (links up, flows known),
//                                            for the driver to read CPU use
//   {"gap_ms": G, "samples": N, "median_us": X, "p99_us": Y, "max_us": Z, "lost": L}
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "tests/integration/virtio_pod.h"
#include "tests/support/frames.h"

namespace {

struct Options {
  std::string sock_a, sock_b;
  std::vector<double> gaps_ms{1, 10, 100};
  int samples = 100;
  double quiet_s = 5;
  bool hugepages = false;
  sluice::MacAddress gateway_mac;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--sock-a") o.sock_a = v;
    else if (k == "--sock-b") o.sock_b = v;
    else if (k == "--samples") o.samples = std::stoi(v);
    else if (k == "--quiet-s") o.quiet_s = std::stod(v);
    else if (k == "--hugepages") o.hugepages = v == "1";
    else if (k == "--gaps-ms") {
      o.gaps_ms.clear();
      for (size_t at = 0; at < v.size();) {
        size_t comma = v.find(',', at);
        o.gaps_ms.push_back(std::stod(v.substr(at, comma - at)));
        at = comma == std::string::npos ? v.size() : comma + 1;
      }
    } else if (k == "--gateway-mac") {
      auto m = sluice::MacAddress::parse(v);
      if (!m) return false;
      o.gateway_mac = *m;
    } else return false;
  }
  return !o.sock_a.empty() && !o.sock_b.empty() && o.samples > 0 && !o.gaps_ms.empty();
}

void pause(double ms) {
  const auto ns = static_cast<long>(ms * 1e6);
  const timespec t{ns / 1'000'000'000, ns % 1'000'000'000};
  nanosleep(&t, nullptr);
}

// Sends one frame from A and polls B until it arrives: the time in µs, or a
// negative value when it did not come within a second.
double oneFrame(uint16_t port_a, uint16_t port_b, rte_mempool* pool, const sluice::test::Frame& frame) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return -1;
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(), frame.size());
  const uint64_t hz = rte_get_tsc_hz();
  const uint64_t start = rte_rdtsc();
  if (rte_eth_tx_burst(port_a, 0, &m, 1) != 1) {
    rte_pktmbuf_free(m);
    return -1;
  }
  rte_mbuf* burst[32];
  while (rte_rdtsc() - start < hz) {
    const uint16_t r = rte_eth_rx_burst(port_b, 0, burst, 32);
    if (r == 0) continue;
    const uint64_t arrived = rte_rdtsc();
    rte_pktmbuf_free_bulk(burst, r);
    return static_cast<double>(arrived - start) * 1e6 / static_cast<double>(hz);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: wake_latency --sock-a PATH --sock-b PATH --gateway-mac MAC [--gaps-ms 1,10,100] "
                 "[--samples N] [--quiet-s S] [--hugepages 0|1]\n");
    return 2;
  }
  if (!sluice::test::initPodEal(argv[0], 0, o.hugepages)) return 1;
  rte_mempool* pool = rte_pktmbuf_pool_create("wake", 4096, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  auto a = sluice::test::VirtioPod::create(o.sock_a, true, pool);
  auto b = sluice::test::VirtioPod::create(o.sock_b, true, pool);
  if (pool == nullptr || !a.ok() || !b.ok()) {
    std::fprintf(stderr, "wake_latency: %s\n",
                 pool == nullptr ? "no mbuf pool" : std::string((a.ok() ? b.status() : a.status()).message()).c_str());
    return 1;
  }
  auto ip_a = *sluice::Ipv4Address::parse("10.250.0.10");
  auto ip_b = *sluice::Ipv4Address::parse("10.250.0.11");
  const sluice::test::Frame frame =
      sluice::test::udpFrame({sluice::MacAddress::fromIpv4(ip_a), o.gateway_mac, ip_a, ip_b});
  const uint16_t port_a = (*a)->portId(), port_b = (*b)->portId();

  // sluiced connects to the listening pods and installs the megaflow on the
  // first frames: until one arrives nothing is measured.
  bool through = false;
  for (int i = 0; i < 600 && !through; ++i) {
    rte_eth_link link;
    rte_eth_link_get_nowait(port_a, &link);
    rte_eth_link_get_nowait(port_b, &link);
    through = oneFrame(port_a, port_b, pool, frame) >= 0;
    if (!through) pause(100);
  }
  if (!through) {
    std::fprintf(stderr, "wake_latency: no frame reached pod B\n");
    return 1;
  }
  std::printf("{\"quiet\": true}\n");
  std::fflush(stdout);
  pause(o.quiet_s * 1e3);
  std::printf("{\"quiet_done\": true}\n");
  std::fflush(stdout);
  for (double gap : o.gaps_ms) {
    std::vector<double> us;
    int lost = 0;
    for (int s = 0; s < o.samples; ++s) {
      pause(gap);
      double t = oneFrame(port_a, port_b, pool, frame);
      if (t < 0) ++lost;
      else us.push_back(t);
    }
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us.empty() ? 0.0 : us[std::min(us.size() - 1, static_cast<size_t>(q * us.size()))]; };
    std::printf("{\"gap_ms\": %g, \"samples\": %zu, \"median_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f, "
                "\"lost\": %d}\n",
                gap, us.size(), at(0.5), at(0.99), us.empty() ? 0.0 : us.back(), lost);
    std::fflush(stdout);
  }
  a->reset();
  b->reset();
  return 0;
}
