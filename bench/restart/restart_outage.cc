// Traffic through sluiced across its restarts: one process plays two pods
// whose vhost-user ports are in client mode (the pods listen, server=1, and
// sluiced connects), sends paced 64-byte UDP frames from pod A to pod B and
// measures every outage: the time from the last frame received before a gap
// to the first one after it. Driven by upgrade_outage.sh, which restarts
// sluiced under it.
//
// Output, one JSON line each, flushed at once:
//   {"ready": true}                 the first frame arrived
//   {"outage_ms": X, "n": K}        traffic resumed after its K-th outage
//   {"sent": N, "received": N}      at SIGINT/SIGTERM
// A gap counts as an outage when it is longer than --gap-ms (well above the
// pacing interval, so a frame lost in a ring is not one).
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "tests/integration/virtio_pod.h"
#include "tests/support/frames.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void onStop(int) { g_stop = 1; }

struct Options {
  std::string sock_a, sock_b;
  double interval_us = 200;  // one frame per interval: 5 kpps
  double gap_ms = 20;
  bool hugepages = false;
  sluice::MacAddress gateway_mac;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--sock-a") o.sock_a = v;
    else if (k == "--sock-b") o.sock_b = v;
    else if (k == "--interval-us") o.interval_us = std::stod(v);
    else if (k == "--gap-ms") o.gap_ms = std::stod(v);
    else if (k == "--hugepages") o.hugepages = v == "1";
    else if (k == "--gateway-mac") {
      auto m = sluice::MacAddress::parse(v);
      if (!m) return false;
      o.gateway_mac = *m;
    } else return false;
  }
  return !o.sock_a.empty() && !o.sock_b.empty() && o.interval_us > 0 && o.gap_ms > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: restart_outage --sock-a PATH --sock-b PATH --gateway-mac MAC [--interval-us U] "
                 "[--gap-ms G] [--hugepages 0|1]\n");
    return 2;
  }
  if (!sluice::test::initPodEal(argv[0], 0, o.hugepages)) return 1;
  rte_mempool* pool = rte_pktmbuf_pool_create("outage", 8192, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  // server=true: the pods listen, so a restarted sluiced reconnects to them.
  auto a = sluice::test::VirtioPod::create(o.sock_a, true, pool);
  auto b = sluice::test::VirtioPod::create(o.sock_b, true, pool);
  if (pool == nullptr || !a.ok() || !b.ok()) {
    std::fprintf(stderr, "restart_outage: %s\n",
                 pool == nullptr ? "no mbuf pool" : std::string((a.ok() ? b.status() : a.status()).message()).c_str());
    return 1;
  }
  auto ip_a = *sluice::Ipv4Address::parse("10.250.0.10");
  auto ip_b = *sluice::Ipv4Address::parse("10.250.0.11");
  const sluice::test::Frame frame =
      sluice::test::udpFrame({sluice::MacAddress::fromIpv4(ip_a), o.gateway_mac, ip_a, ip_b});
  std::signal(SIGINT, onStop);
  std::signal(SIGTERM, onStop);

  const uint16_t port_a = (*a)->portId(), port_b = (*b)->portId();
  const uint64_t hz = rte_get_tsc_hz();
  const auto interval = static_cast<uint64_t>(o.interval_us * 1e-6 * static_cast<double>(hz));
  const auto gap = static_cast<uint64_t>(o.gap_ms * 1e-3 * static_cast<double>(hz));
  const uint64_t link_poll = hz / 100;  // 10 ms
  uint64_t next_send = rte_rdtsc(), next_link_poll = next_send, last_rx = 0;
  uint64_t sent = 0, received = 0, outages = 0;
  rte_mbuf* burst[32];
  while (g_stop == 0) {
    const uint64_t now = rte_rdtsc();
    if (now >= next_send) {
      next_send = now + interval;
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      if (m != nullptr) {
        std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(), frame.size());
        if (rte_eth_tx_burst(port_a, 0, &m, 1) == 1) ++sent;
        else rte_pktmbuf_free(m);
      }
    }
    // A virtio_user server notices its peer went away, and takes the next
    // connection, when its link status is read.
    if (now >= next_link_poll) {
      next_link_poll = now + link_poll;
      rte_eth_link link;
      rte_eth_link_get_nowait(port_a, &link);
      rte_eth_link_get_nowait(port_b, &link);
    }
    const uint16_t r = rte_eth_rx_burst(port_b, 0, burst, 32);
    if (r > 0) {
      if (last_rx == 0) {
        std::printf("{\"ready\": true}\n");
        std::fflush(stdout);
      } else if (now - last_rx > gap) {
        std::printf("{\"outage_ms\": %.1f, \"n\": %llu}\n",
                    static_cast<double>(now - last_rx) * 1e3 / static_cast<double>(hz),
                    static_cast<unsigned long long>(++outages));
        std::fflush(stdout);
      }
      last_rx = now;
      received += r;
      rte_pktmbuf_free_bulk(burst, r);
    }
    // Two busy pollers (this and sluiced's PMD) on two cores would starve
    // sluiced's start-up, which is what is measured: yield between polls.
    const timespec pause{0, 20'000};
    nanosleep(&pause, nullptr);
  }
  std::printf("{\"sent\": %llu, \"received\": %llu}\n", static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(received));
  a->reset();
  b->reset();
  return 0;
}
