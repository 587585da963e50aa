// Traffic source and sink for the pod-to-pod benchmark: one process playing
// both pods (so only two busy-polling processes run on this 2-core machine:
// this one and the dataplane under test). It owns two net_virtio_user ports:
// it sends 64-byte IPv4/UDP frames from pod A to pod B's address on port A as
// fast as the ring accepts them, and counts what arrives on port B.
// With --server 1 the ports listen on the sockets (virtio_user server=1) and
// the dataplane connects, as it does for ports in vhost-user client mode
// (sluice-cni's default); otherwise they connect to the dataplane's sockets.
// Prints one JSON line: {"sent": N, "received": N, "seconds": S, "rx_mpps": M}.
// SIGINT or SIGTERM end the run early; the line then covers the measured
// time until the signal (a script that times its own window stops it then).
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/integration/virtio_pod.h"
#include "tests/support/frames.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void onStop(int) { g_stop = 1; }

struct Options {
  std::string sock_a, sock_b;
  double warmup_seconds = 1, seconds = 5;
  unsigned flows = 1;
  bool hugepages = false;
  bool server = false;
  sluice::MacAddress gateway_mac;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--sock-a") o.sock_a = v;
    else if (k == "--sock-b") o.sock_b = v;
    else if (k == "--seconds") o.seconds = std::stod(v);
    else if (k == "--warmup") o.warmup_seconds = std::stod(v);
    else if (k == "--flows") o.flows = static_cast<unsigned>(std::stoul(v));
    else if (k == "--hugepages") o.hugepages = v == "1";
    else if (k == "--server" && (v == "0" || v == "1")) o.server = v == "1";
    else if (k == "--gateway-mac") {
      auto m = sluice::MacAddress::parse(v);
      if (!m) return false;
      o.gateway_mac = *m;
    } else return false;
  }
  return !o.sock_a.empty() && !o.sock_b.empty() && o.flows > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: pvp_traffic --sock-a PATH --sock-b PATH --gateway-mac MAC [--seconds S] [--warmup S] "
                 "[--flows N] [--hugepages 0|1] [--server 0|1]\n");
    return 2;
  }
  if (!sluice::test::initPodEal(argv[0], 0, o.hugepages)) return 1;
  rte_mempool* pool = rte_pktmbuf_pool_create("gen", 32768, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  // As servers, each create() returns once the dataplane has connected.
  auto a = sluice::test::VirtioPod::create(o.sock_a, o.server, pool);
  auto b = sluice::test::VirtioPod::create(o.sock_b, o.server, pool);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "pvp_traffic: %s\n", std::string((a.ok() ? b.status() : a.status()).message()).c_str());
    return 1;
  }
  // Frames A → B, one per flow, 60 bytes + FCS, sent round-robin (the worst
  // case for caches). Flows differ in their UDP source port, and past 60000
  // also in their destination port (one further per 60000 flows): always
  // from A's own MAC and address, which sluiced's source validation lets
  // through.
  auto ip_a = *sluice::Ipv4Address::parse("10.250.0.10");
  auto ip_b = *sluice::Ipv4Address::parse("10.250.0.11");
  std::vector<sluice::test::Frame> frames;
  frames.reserve(o.flows);
  for (unsigned f = 0; f < o.flows; ++f) {
    sluice::test::UdpFrameSpec s{sluice::MacAddress::fromIpv4(ip_a), o.gateway_mac, ip_a, ip_b};
    s.dst_port = static_cast<uint16_t>(5001 + f / 60000);
    s.src_port = static_cast<uint16_t>(1024 + f % 60000);
    frames.push_back(sluice::test::udpFrame(s));
  }
  std::signal(SIGINT, onStop);
  std::signal(SIGTERM, onStop);
  uint16_t port_a = (*a)->portId(), port_b = (*b)->portId();
  uint64_t hz = rte_get_tsc_hz();
  uint64_t start = rte_rdtsc();
  uint64_t measure_from = start + static_cast<uint64_t>(o.warmup_seconds * static_cast<double>(hz));
  uint64_t end = measure_from + static_cast<uint64_t>(o.seconds * static_cast<double>(hz));
  uint64_t sent = 0, received = 0;
  bool measuring = false;
  size_t next_flow = 0;
  rte_mbuf* burst[32];
  uint64_t now = start;
  for (; now < end && g_stop == 0; now = rte_rdtsc()) {
    if (!measuring && now >= measure_from) {
      measuring = true;
      sent = received = 0;
    }
    if (rte_pktmbuf_alloc_bulk(pool, burst, 32) == 0) {
      for (auto* m : burst) {
        const auto& f = frames[next_flow];
        next_flow = next_flow + 1 == frames.size() ? 0 : next_flow + 1;
        std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
      }
      uint16_t n = rte_eth_tx_burst(port_a, 0, burst, 32);
      sent += n;
      if (n < 32) rte_pktmbuf_free_bulk(burst + n, 32u - n);
    }
    uint16_t r = rte_eth_rx_burst(port_b, 0, burst, 32);
    received += r;
    rte_pktmbuf_free_bulk(burst, r);
  }
  double measured = now < end ? (now > measure_from ? static_cast<double>(now - measure_from) / static_cast<double>(hz) : 0)
                              : o.seconds;
  std::printf("{\"sent\": %llu, \"received\": %llu, \"seconds\": %.3f, \"rx_mpps\": %.3f}\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(received), measured,
              measured > 0 ? static_cast<double>(received) / measured / 1e6 : 0.0);
  a->reset();
  b->reset();
  return 0;
}
