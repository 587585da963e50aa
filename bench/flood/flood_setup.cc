// The flow setup rate a pod keeps while the node is flooded.
//
// The ring node (the real PMD loop and control path in one process, ring
// ethdevs for pods and the VXLAN uplink) with sluiced's default upcall budget
// and flow limit. The innocent pod talks to pods on many remote CIDRs (remote
// node r2 announces `--cidrs` /24s), so each of its destinations is a new
// encap megaflow to set up; it keeps sending to all of them, as traffic that
// goes on would, until every one is cached. Its setup rate is the number of
// destinations over the time from its first packet to the install of its last
// megaflow (megaflow ages, as control lists them, give the install times).
//
// Three conditions, each on a fresh node, alternated over the rounds:
//  - quiet: nothing else on the node (the baseline of the same round);
//  - flood: from the innocent pod's first packet on, a flood thread offers
//    bursts as fast as the PMD takes them: random destinations from the
//    attacker pod and VXLAN from random sources (no remote node) on the
//    uplink;
//  - flood-warm: the same flood, started a second before the innocent pod,
//    so the attacker's drop megaflows are in place when it begins.
// Reports the innocent pod's setup rate, its ratio to quiet in the same
// round, how many of its packets were forwarded, and what the PMD took of the
// flood and where that was dropped. A figure, not a test: it never fails.
#include <pthread.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ring_node.h"

namespace sluice::bench {
namespace {

using test::Frame;
using test::Node;
using test::NodeOptions;

constexpr unsigned kAttacker = 10, kInnocent = 11;
constexpr size_t kFloodFrames = 3072;  // distinct frames per flood kind, replayed

// Remote pod CIDR i of r2: 10.(128 + i/256).(i%256).0/24, i < 4096.
Ipv4Address remotePod(unsigned i) { return Ipv4Address{(10U << 24) | ((128U + i / 256) << 16) | ((i % 256) << 8) | 5}; }
bool inRemoteCidrs(uint32_t a, unsigned n) { return a >= remotePod(0).value - 5 && a < remotePod(n).value - 5; }

NodeOptions nodeOptions(unsigned cidrs) {
  NodeOptions o;
  o.vxlan = true;
  const SluicedConfig defaults;
  o.flow_limit = defaults.flow_limit;
  o.gate.rate_per_sec = defaults.upcall_rate;
  o.gate.burst = defaults.upcall_burst;
  o.edit_config = [cidrs](SluicedConfig& c) {
    for (unsigned i = 0; i < cidrs; ++i)
      c.overlay.remote_nodes[0].pod_cidrs.push_back(Ipv4Cidr{Ipv4Address{remotePod(i).value - 5}, 24});
    // r2's MAC is known: the innocent pod's first packets leave at once.
    c.overlay.uplink->static_neighbors.push_back({test::kRemote2, *MacAddress::parse("02:55:00:00:00:02")});
  };
  return o;
}

// Bursts of copies of `frames` (cycled) into an rx ring, as fast as the PMD
// empties it; the single producer of that ring.
class Replayer {
 public:
  Replayer(rte_ring* ring, rte_mempool* pool, std::vector<Frame> frames)
      : ring_(ring), pool_(pool), frames_(std::move(frames)) {}
  // One burst; how many frames the ring took.
  unsigned offer() {
    rte_mbuf* burst[kBurstSize];
    if (rte_ring_free_count(ring_) < kBurstSize || rte_pktmbuf_alloc_bulk(pool_, burst, kBurstSize) != 0) return 0;
    for (rte_mbuf* m : burst) {
      const Frame& f = frames_[next_++ % frames_.size()];
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
      handOver(m);
    }
    const unsigned n = rte_ring_sp_enqueue_burst(ring_, reinterpret_cast<void**>(burst), kBurstSize, nullptr);
    for (unsigned i = n; i < kBurstSize; ++i) {
      takeOver(burst[i]);
      rte_pktmbuf_free(burst[i]);
    }
    next_ -= kBurstSize - n;  // the refused ones come next
    return n;
  }

 private:
  rte_ring* ring_;
  rte_mempool* pool_;
  std::vector<Frame> frames_;
  size_t next_ = 0;
};

// The flood, as fast as the PMD takes it: a fixed set of mbufs, each holding
// one frame, offered again and again. Each offer adds a reference that the
// PMD's free (after its drop) takes away, so no frame is copied or allocated
// per packet and the generator outruns the PMD. Only for frames the PMD drops
// without writing to them; there are more mbufs than the ring holds, so an
// mbuf is offered again only long after the PMD has dropped it.
class FloodReplayer {
 public:
  FloodReplayer(rte_ring* ring, rte_mempool* pool, const std::vector<Frame>& frames) : ring_(ring) {
    for (const Frame& f : frames) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      if (m == nullptr) break;
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
      mbufs_.push_back(m);
    }
  }
  ~FloodReplayer() {
    for (rte_mbuf* m : mbufs_) rte_pktmbuf_free(m);
  }
  unsigned offer() {
    if (mbufs_.size() < 2 * rte_ring_get_capacity(ring_)) return 0;
    rte_mbuf* burst[kBurstSize];
    for (rte_mbuf*& m : burst) {
      m = mbufs_[next_++ % mbufs_.size()];
      rte_mbuf_refcnt_update(m, 1);
      handOver(m);
    }
    const unsigned n = rte_ring_sp_enqueue_burst(ring_, reinterpret_cast<void**>(burst), kBurstSize, nullptr);
    for (unsigned i = n; i < kBurstSize; ++i) {
      takeOver(burst[i]);
      rte_mbuf_refcnt_update(burst[i], -1);
    }
    next_ -= kBurstSize - n;
    return n;
  }

 private:
  rte_ring* ring_;
  std::vector<rte_mbuf*> mbufs_;
  size_t next_ = 0;
};

std::vector<Frame> randomDestinations(std::mt19937& rng, unsigned cidrs) {
  std::vector<Frame> out;
  while (out.size() < kFloodFrames) {
    const uint32_t dst = static_cast<uint32_t>(rng());
    // Anything but a pod: narrow prefixes near the node's and r2's CIDRs too.
    if ((dst >> 8) == (test::kGateway.value >> 8) || (dst >> 8) == (10U << 16 | 78U) || inRemoteCidrs(dst, cidrs))
      continue;
    out.push_back(test::udpTo(kAttacker, Ipv4Address{dst}, 64, static_cast<uint16_t>(rng()), 0));
  }
  return out;
}
std::vector<Frame> randomSources(std::mt19937& rng) {
  std::vector<Frame> out;
  while (out.size() < kFloodFrames) {
    const Ipv4Address src{static_cast<uint32_t>(rng())};
    if (src.value == test::kRemote2.value || src.value == test::kVtep.value) continue;
    out.push_back(test::vxlanTo(src, test::podIp(kInnocent), 64, static_cast<uint16_t>(rng()), 0));
  }
  return out;
}

enum class Condition { kQuiet, kFlood, kFloodWarm };
const char* name(Condition c) {
  return c == Condition::kQuiet ? "quiet" : c == Condition::kFlood ? "flood" : "flood-warm";
}

struct Result {
  double setups_per_sec = 0;
  uint64_t innocent_sent = 0, innocent_forwarded = 0;
  double flood_mpps = 0;  // flood packets the PMD took per second while the innocent pod set up
  uint64_t flood_taken = 0, dropped_at_attacker = 0, dropped_at_uplink = 0;
  uint64_t upcalls = 0, lost_upcalls = 0, megaflows = 0;
  double pmd_busy = 0;  // share of the PMD's loop iterations that received packets, by cycles
  // Share of the flood's burst offers that found their ring full: the PMD
  // was behind the flood (it took all it could) that often.
  double ring_full = 0;
  bool complete = false;
};

// Runs the calling thread (and the threads it starts) on one CPU.
void pinTo(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// The flood's own mbufs: DPDK's ring mempool is a multi-producer ring whose
// users must not share a CPU (one preempted in the middle of a get or put
// stalls the others for its whole time slice), so the flood thread and the
// innocent pod, which share CPU 0, take from separate pools.
rte_mempool* floodPool() {
  static rte_mempool* pool =
      rte_pktmbuf_pool_create("flood_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  return pool;
}

Result measure(Condition condition, unsigned cidrs, uint32_t seed) {
  // The PMD (and control's flow thread) on CPU 1, as sluiced gives a PMD a
  // core of its own; the innocent pod and the flood on CPU 0.
  pinTo(1);
  Node node(nullptr, nodeOptions(cidrs));
  pinTo(0);
  const uint16_t attacker = node.addPod("flood-a", kAttacker);
  const uint16_t innocent = node.addPod("flood-b", kInnocent);
  std::mt19937 rng(seed);

  std::atomic<bool> stop{false};
  std::atomic<bool> measuring{condition != Condition::kFloodWarm};
  uint64_t offers = 0, full = 0;  // the flood thread's, read after it is joined
  std::thread flood;
  if (condition != Condition::kQuiet) {
    flood = std::thread([&, a = randomDestinations(rng, cidrs), v = randomSources(rng)] {
      FloodReplayer from_pod(node.backend().ring(attacker)->rx, floodPool(), a);
      FloodReplayer from_underlay(node.uplinkRx(), floodPool(), v);
      while (!stop.load(std::memory_order_relaxed)) {
        const bool pod_full = from_pod.offer() == 0, underlay_full = from_underlay.offer() == 0;
        if (measuring.load(std::memory_order_relaxed)) {
          offers += 2;
          full += (pod_full ? 1 : 0) + (underlay_full ? 1 : 0);
        }
        if (pod_full && underlay_full) std::this_thread::yield();
      }
    });
    if (condition == Condition::kFloodWarm) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      measuring.store(true);
    }
  }

  std::vector<Frame> mine;
  for (unsigned i = 0; i < cidrs; ++i)
    mine.push_back(test::udpTo(kInnocent, remotePod(i), 64, static_cast<uint16_t>(1000 + i % 4096), i));
  Replayer innocent_rx(node.backend().ring(innocent)->rx, test::ringNodePool(), mine);
  // Megaflows do not match the in-port; the innocent pod's are the encap
  // ones (the attacker sends to no remote pod).
  auto innocentFlows = [&](double* youngest_age) {
    size_t n = 0;
    for (const FlowView& f : node.control().listFlows()) {
      if (f.actions.rfind("vxlan_encap", 0) != 0) continue;
      ++n;
      *youngest_age = std::min(*youngest_age, f.age_seconds);
    }
    return n;
  };

  Result r;
  const PmdCounters& c = node.counters();
  const uint64_t packets0 = c.packets.read();
  const uint64_t attacker_dropped0 = c.ports[attacker].rx_dropped.read();
  const uint64_t uplink_dropped0 = c.ports[test::kUplinkPort].rx_dropped.read();
  const uint64_t upcalls0 = c.upcalls.read(), lost0 = c.lost_upcalls.read();
  const uint64_t busy0 = c.busy_cycles.read(), idle0 = c.idle_cycles.read();
  const uint64_t start_tsc = rte_rdtsc();
  uint64_t end_tsc = 0;
  const uint64_t deadline = start_tsc + 60 * rte_get_tsc_hz();
  uint64_t next_check = start_tsc;
  while (rte_rdtsc() < deadline) {
    // A pass over every destination, taking what arrived on the uplink as
    // it goes (its tx ring holds 4k frames).
    for (unsigned sent = 0; sent < cidrs;) {
      const unsigned n = innocent_rx.offer();
      if (n == 0) std::this_thread::yield();  // its ring is full: the flood's turn on this CPU
      sent += n;
      if (sent % 1024 < kBurstSize) r.innocent_forwarded += node.collectAll().size();
    }
    r.innocent_sent += cidrs;
    if (rte_rdtsc() < next_check) continue;
    next_check = rte_rdtsc() + rte_get_tsc_hz() / 50;
    double youngest = 1e9;
    const uint64_t listed_tsc = rte_rdtsc();
    if (innocentFlows(&youngest) == cidrs) {
      end_tsc = listed_tsc - static_cast<uint64_t>(youngest * static_cast<double>(rte_get_tsc_hz()));
      r.complete = true;
      break;
    }
  }
  const uint64_t stop_tsc = rte_rdtsc();
  stop.store(true);
  if (flood.joinable()) flood.join();
  // What is still in flight reaches the uplink.
  test::waitUntil([&] { return rte_ring_count(node.backend().ring(innocent)->rx) == 0; });
  r.innocent_forwarded += node.collectAll().size();

  const double hz = static_cast<double>(rte_get_tsc_hz());
  if (r.complete) r.setups_per_sec = cidrs / (static_cast<double>(end_tsc - start_tsc) / hz);
  const uint64_t processed = c.packets.read() - packets0;
  r.flood_taken = processed - std::min(processed, r.innocent_sent);
  r.flood_mpps = static_cast<double>(r.flood_taken) / (static_cast<double>(stop_tsc - start_tsc) / hz) / 1e6;
  r.dropped_at_attacker = c.ports[attacker].rx_dropped.read() - attacker_dropped0;
  r.dropped_at_uplink = c.ports[test::kUplinkPort].rx_dropped.read() - uplink_dropped0;
  r.upcalls = c.upcalls.read() - upcalls0;
  r.lost_upcalls = c.lost_upcalls.read() - lost0;
  r.megaflows = node.control().listFlows().size();
  r.ring_full = offers == 0 ? 0 : 100.0 * static_cast<double>(full) / static_cast<double>(offers);
  const uint64_t busy = c.busy_cycles.read() - busy0, idle = c.idle_cycles.read() - idle0;
  r.pmd_busy = busy + idle == 0 ? 0 : 100.0 * static_cast<double>(busy) / static_cast<double>(busy + idle);
  return r;
}

int run(int argc, char** argv) {
  unsigned rounds = 3, cidrs = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") rounds = static_cast<unsigned>(std::stoul(argv[i + 1]));
    else if (flag == "--cidrs") cidrs = std::clamp<unsigned>(static_cast<unsigned>(std::stoul(argv[i + 1])), 1, 4096);
    else {
      std::fprintf(stderr, "usage: flood_setup [--rounds N] [--cidrs N (<= 4096)]\n");
      return 2;
    }
  }
  if (!test::startRingNodeEal("flood_setup") || floodPool() == nullptr) return 1;
  if (std::thread::hardware_concurrency() < 2) {
    std::fprintf(stderr, "flood_setup needs 2 CPUs (the PMD on one, the traffic on the other)\n");
    return 1;
  }
  const SluicedConfig defaults;
  std::printf("# innocent pod: %u new encap megaflows; upcall budget %u/s, burst %u; flow limit %u\n", cidrs,
              defaults.upcall_rate, defaults.upcall_burst, defaults.flow_limit);
  std::printf("%-5s %-10s %10s %8s %8s %9s %10s %9s %10s %12s %12s %8s %7s %9s\n", "round", "condition",
              "setups/s", "vs_quiet", "sent", "forwarded", "flood_Mpps", "pmd_busy%", "ring_full%", "drop@attack",
              "drop@uplink", "upcalls", "lost", "megaflows");
  for (unsigned round = 1; round <= rounds; ++round) {
    double quiet = 0;
    for (Condition cond : {Condition::kQuiet, Condition::kFlood, Condition::kFloodWarm}) {
      const Result r = measure(cond, cidrs, 2026 + round);
      if (cond == Condition::kQuiet) quiet = r.setups_per_sec;
      std::printf("%-5u %-10s %10.0f %8.2f %8lu %9lu %10.3f %9.1f %10.1f %12lu %12lu %8lu %7lu %9lu%s\n",
                  round, name(cond), r.setups_per_sec, quiet > 0 ? r.setups_per_sec / quiet : 0.0,
                  r.innocent_sent, r.innocent_forwarded, r.flood_mpps, r.pmd_busy, r.ring_full, r.dropped_at_attacker,
                  r.dropped_at_uplink, r.upcalls, r.lost_upcalls, r.megaflows,
                  r.complete ? "" : "  (incomplete after 60 s)");
      std::fflush(stdout);
    }
  }
  rte_eal_cleanup();
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) { return sluice::bench::run(argc, argv); }
