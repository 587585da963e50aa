// Integration tests on real DPDK: sluiced runs as a child process with real
// vhost-user ports (DPDK's vhost library); this process plays the pods with net_virtio_user devices
// (tests/integration/virtio_pod.h) and checks bytes and counters exactly.
#include <gtest/gtest.h>
#include <poll.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.11");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kMacB = MacAddress::fromIpv4(kIpB);
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);

// sluiced with pods A and B plugged in (server mode) and their links up.
class TwoPodsTest : public ::testing::Test {
 protected:
  void SetUp() override { startNode({}); }

  void startNode(const SluicedOptions& options) {
    std::string error;
    node_ = SluicedProcess::start(options, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse a, b;
    ASSERT_TRUE(node_->addPort(portRequest("pod-a", kIpA.toString()), &a).ok());
    ASSERT_TRUE(node_->addPort(portRequest("pod-b", kIpB.toString()), &b).ok());
    port_a_ = a.port().port_no();
    port_b_ = b.port().port_no();
    auto pa = VirtioPod::create(a.port().socket_path(), false, podPool());
    auto pb = VirtioPod::create(b.port().socket_path(), false, podPool());
    ASSERT_TRUE(pa.ok()) << pa.status();
    ASSERT_TRUE(pb.ok()) << pb.status();
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    ASSERT_TRUE(node_->waitLinkUp(port_a_)) << node_->log();
    ASSERT_TRUE(node_->waitLinkUp(port_b_)) << node_->log();
  }

  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  std::vector<Frame> aToB(size_t n, uint8_t ttl = 64, Ipv4Address dst = kIpB) {
    std::vector<Frame> frames;
    for (size_t i = 0; i < n; ++i) {
      UdpFrameSpec s{kMacA, kGatewayMac, kIpA, dst};
      s.ttl = ttl;
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(1000 + i % 7);
      frames.push_back(udpFrame(s));
    }
    return frames;
  }

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint32_t port_a_ = 0, port_b_ = 0;
};

TEST_F(TwoPodsTest, PacketsArriveRewrittenAndCountersMoveByExactlyTheNumberSent) {
  constexpr size_t kCount = 2000;
  std::vector<Frame> sent = aToB(kCount);
  std::vector<Frame> got;
  // In rounds smaller than B's 1024-entry ring, so B never overflows.
  for (size_t at = 0; at < kCount; at += 500) {
    std::vector<Frame> round(sent.begin() + static_cast<long>(at), sent.begin() + static_cast<long>(at + 500));
    ASSERT_EQ(pod_a_->send(round), round.size());
    std::vector<Frame> part = pod_b_->receive(round.size());
    ASSERT_EQ(part.size(), round.size()) << node_->stats().DebugString();
    got.insert(got.end(), part.begin(), part.end());
  }
  for (size_t i = 0; i < kCount; ++i) {
    const Frame& f = got[i];
    ASSERT_EQ(f.size(), sent[i].size());
    EXPECT_EQ(udpSequence(f), i) << "order kept";
    EXPECT_EQ(ethDst(f), kMacB);
    EXPECT_EQ(ethSrc(f), kGatewayMac);
    EXPECT_EQ(ipv4Ttl(f), 63);
    EXPECT_TRUE(ipv4ChecksumValid(f));
    // Everything after the IPv4 checksum (addresses, UDP, payload) is untouched.
    ASSERT_TRUE(std::equal(f.begin() + 26, f.end(), sent[i].begin() + 26)) << i;
  }
  v1::GetStatsResponse s = node_->stats();
  ASSERT_EQ(s.pmds_size(), 1);
  EXPECT_EQ(s.pmds(0).packets(), kCount);
  EXPECT_EQ(s.pmds(0).tx_packets(), kCount);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), kCount);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), kCount);
  EXPECT_EQ(portStats(s, port_b_)->tx_dropped(), 0u);
  for (const v1::DropCounter& d : s.drops()) EXPECT_EQ(d.packets(), 0u) << d.reason();
  EXPECT_GT(s.pmds(0).busy_cycles(), 0u);
  // pmd-max-sleep-us is 0 by default: the PMD busy-polls, never sleeps.
  EXPECT_EQ(s.pmds(0).sleeps(), 0u);
  EXPECT_EQ(s.pmds(0).sleep_cycles(), 0u);
}

// A PMD allowed to sleep while its queues run light.
class SleepingPmdTest : public TwoPodsTest {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.extra_flags = {"--pmd-max-sleep-us", "500"};
    startNode(o);
  }
};

TEST_F(SleepingPmdTest, AQuietPmdSleepsAndStillForwardsEveryPacketWhenTrafficReturns) {
  // Quiet node (links up, no traffic): the PMD sleeps.
  uint64_t sleeps = 0;
  for (int i = 0; i < 2000 && sleeps == 0; ++i) {
    sleeps = node_->stats().pmds(0).sleeps();
    if (sleeps == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GT(sleeps, 0u) << node_->log();
  // Traffic after the quiet spell: every packet arrives, rewritten and in order.
  constexpr size_t kCount = 1000;
  std::vector<Frame> sent = aToB(kCount);
  std::vector<Frame> got;
  for (size_t at = 0; at < kCount; at += 250) {
    std::vector<Frame> round(sent.begin() + static_cast<long>(at), sent.begin() + static_cast<long>(at + 250));
    ASSERT_EQ(pod_a_->send(round), round.size());
    std::vector<Frame> part = pod_b_->receive(round.size());
    ASSERT_EQ(part.size(), round.size()) << node_->stats().DebugString();
    got.insert(got.end(), part.begin(), part.end());
  }
  for (size_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(udpSequence(got[i]), i);
    EXPECT_EQ(ipv4Ttl(got[i]), 63);
    ASSERT_TRUE(std::equal(got[i].begin() + 26, got[i].end(), sent[i].begin() + 26)) << i;
  }
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(s.pmds(0).packets(), kCount);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), kCount);
  EXPECT_EQ(portStats(s, port_b_)->tx_dropped(), 0u);
  EXPECT_GT(s.pmds(0).sleep_cycles(), 0u);
  EXPECT_GE(s.pmds(0).sleeps(), sleeps);
}

TEST_F(TwoPodsTest, ArpForTheGatewayIsAnswered) {
  ASSERT_EQ(pod_a_->send({arpRequest(kMacA, kIpA, kGateway)}), 1u);
  std::vector<Frame> got = pod_a_->receive(1);
  ASSERT_EQ(got.size(), 1u);
  const Frame& r = got[0];
  EXPECT_EQ(etherType(r), 0x0806);
  EXPECT_EQ(ethDst(r), kMacA);
  EXPECT_EQ(ethSrc(r), kGatewayMac);
  EXPECT_EQ(r[21], 2);  // ARP reply
  EXPECT_TRUE(std::equal(r.begin() + 22, r.begin() + 28, kGatewayMac.bytes.begin()));
  EXPECT_EQ(Frame(r.begin() + 28, r.begin() + 32), (Frame{10, 250, 0, 1}));
  EXPECT_EQ(Frame(r.begin() + 38, r.begin() + 42), (Frame{10, 250, 0, 10}));
  EXPECT_EQ(pod_b_->drainCount(), 0u);
}

TEST_F(TwoPodsTest, TtlExpiredAndUnknownDestinationsAreDroppedUnderTheirReasons) {
  const std::vector<Frame> expired = aToB(10, /*ttl=*/1);
  ASSERT_EQ(pod_a_->send(expired), 10u);
  const std::vector<Frame> unused = aToB(7, 64, *Ipv4Address::parse("10.250.0.99"));
  ASSERT_EQ(pod_a_->send(unused), 7u);
  ASSERT_EQ(pod_a_->send(aToB(3, 64, *Ipv4Address::parse("192.0.2.1"))), 3u);
  // A good frame after them: once it arrives, the ones before were processed
  // (one queue, one PMD, order kept).
  ASSERT_EQ(pod_a_->send(aToB(1)), 1u);
  std::vector<Frame> got = pod_b_->receive(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(ipv4Ttl(got[0]), 63);
  // Each expired packet came back to A as an ICMP Time Exceeded from the
  // gateway (within the default icmp-error-rate's burst of 50), in order;
  // then each one to the unused pod address as host unreachable; the
  // destination outside the pod CIDR gets no error.
  std::vector<Frame> errors = pod_a_->receive(17);
  ASSERT_EQ(errors.size(), 17u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(errors[i], icmpTimeExceeded(expired[i], kGatewayMac, kGateway)) << i;
  for (size_t i = 0; i < 7; ++i)
    EXPECT_EQ(errors[10 + i], icmpError(unused[i], kGatewayMac, kGateway, 3, 1, 0)) << i;
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "ttl_exceeded"), 10u) << "answered, and still counted as dropped";
  EXPECT_EQ(dropCount(s, "no_route"), 10u);
  EXPECT_EQ(s.pmds(0).icmp_errors_sent(), 17u);
  EXPECT_EQ(s.pmds(0).icmp_errors_rate_limited(), 0u);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), 21u);
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 20u);
  EXPECT_EQ(portStats(s, port_a_)->tx_packets(), 17u);
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), 1u);
  EXPECT_EQ(pod_b_->drainCount(), 0u);
  EXPECT_EQ(pod_a_->drainCount(), 0u);
}

TEST_F(TwoPodsTest, AThirdPodComingAndGoingLosesNoTrafficBeyondWhatIsCounted) {
  std::atomic<bool> done{false};
  std::atomic<int> cycles{0};
  std::string failure;
  std::thread churn([&] {
    while (!done.load()) {
      v1::AddPortResponse c;
      grpc::Status s = node_->addPort(portRequest("pod-c", "10.250.0.12"), &c);
      if (!s.ok() || c.port().port_no() != 2) {
        failure = "add: " + s.error_message();
        return;
      }
      v1::DeletePortResponse d;
      if (!node_->deletePort("pod-c", "net1", &d).ok() || !d.deleted()) {
        failure = "delete failed";
        return;
      }
      ++cycles;
    }
  });
  constexpr size_t kRounds = 400, kPerRound = 256;
  size_t sent = 0, received = 0;
  std::vector<Frame> round = aToB(kPerRound);
  // Keep going until the third pod came and went several times.
  for (size_t r = 0; r < kRounds || cycles.load() < 5; ++r) {
    sent += pod_a_->send(round);
    received += pod_b_->drainCount();
    if (r > 100000) break;
  }
  done = true;
  churn.join();
  ASSERT_TRUE(failure.empty()) << failure;
  EXPECT_GE(cycles.load(), 5);
  // Wait for everything in flight: sluiced has received all A sent and
  // decided every packet (a burst it counted at A may still be on its way to
  // B), and B has everything sluiced transmitted.
  for (int i = 0; i < 2000; ++i) {
    received += pod_b_->drainCount();
    v1::GetStatsResponse s = node_->stats();
    const v1::PortStats* a = portStats(s, port_a_);
    const v1::PortStats* b = portStats(s, port_b_);
    if (a->rx_packets() == sent && received == b->tx_packets() &&
        b->tx_packets() + b->tx_dropped() + a->rx_dropped() == sent)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  v1::GetStatsResponse s = node_->stats();
  const v1::PortStats* a = portStats(s, port_a_);
  const v1::PortStats* b = portStats(s, port_b_);
  EXPECT_EQ(a->rx_packets(), sent);
  EXPECT_EQ(b->tx_packets(), received);
  // Every packet is accounted for: delivered, or dropped under a counted reason.
  EXPECT_EQ(received + b->tx_dropped() + a->rx_dropped(), sent);
  EXPECT_EQ(dropCount(s, "port_gone"), 0u);
  EXPECT_EQ(node_->ports().ports_size(), 2);
}

// A third pod, C, goes away while traffic flows to it and from it (the
// device is destroyed while the PMD sends to it and polls it): A's traffic
// to B loses nothing uncounted, sluiced survives, and C's port comes back
// when C connects again (server mode keeps listening), in both directions.
TEST_F(TwoPodsTest, APodGoingAwayWhileTrafficFlowsCostsTheOthersNothingAndItsPortComesBack) {
  const Ipv4Address ip_c = *Ipv4Address::parse("10.250.0.12");
  v1::AddPortResponse c;
  ASSERT_TRUE(node_->addPort(portRequest("pod-c", ip_c.toString()), &c).ok());
  const uint32_t port_c = c.port().port_no();
  auto listed = [&](uint32_t port_no) {
    const v1::ListPortsResponse all = node_->ports();
    for (const auto& p : all.ports())
      if (p.port_no() == port_no) return p;
    return v1::Port{};
  };
  auto linkUp = [&](uint32_t port_no) { return listed(port_no).link_up(); };
  // The NUMA node of a vhost-user port is its pod's memory's: unknown until
  // the pod connects, then the vhost library's answer (this machine has one
  // node, 0), unknown again once the pod is gone.
  EXPECT_FALSE(listed(port_c).has_numa_socket());
  auto made = VirtioPod::create(c.port().socket_path(), false, podPool());
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<VirtioPod> pod_c = std::move(*made);
  ASSERT_TRUE(node_->waitLinkUp(port_c)) << node_->log();
  ASSERT_TRUE(waitFor([&] { return listed(port_c).has_numa_socket(); })) << node_->log();
  EXPECT_EQ(listed(port_c).numa_socket(), 0u);
  std::vector<Frame> a_to_c = aToB(64, 64, ip_c);
  std::vector<Frame> c_to_b;
  for (uint32_t i = 0; i < 64; ++i) {
    UdpFrameSpec s{MacAddress::fromIpv4(ip_c), kGatewayMac, ip_c, kIpB};
    s.sequence = i;
    c_to_b.push_back(udpFrame(s));
  }
  const std::vector<Frame> a_to_b = aToB(64);
  size_t a_sent = 0, a_sent_to_b = 0, received_b = 0;
  constexpr size_t kRounds = 400;
  for (size_t r = 0; r < kRounds; ++r) {
    const size_t to_b = pod_a_->send(a_to_b);
    a_sent_to_b += to_b;
    a_sent += to_b + pod_a_->send(a_to_c);
    if (pod_c) {
      pod_c->send(c_to_b);
      pod_c->drainCount();
    }
    received_b += pod_b_->drainCount();
    if (r == kRounds / 2) pod_c.reset();  // mid-stream, with frames in both of its vrings
  }
  ASSERT_TRUE(waitFor([&] { return !linkUp(port_c); })) << node_->log();
  ASSERT_TRUE(waitFor([&] { return !listed(port_c).has_numa_socket(); })) << node_->log();
  // Settled: sluiced has received all A sent, and B everything sluiced sent it.
  v1::GetStatsResponse s;
  ASSERT_TRUE(waitFor([&] {
    received_b += pod_b_->drainCount();
    s = node_->stats();
    return portStats(s, port_a_)->rx_packets() == a_sent && portStats(s, port_b_)->tx_packets() == received_b;
  })) << node_->log();
  // To B: all of A's frames and what sluiced took from C before it went,
  // delivered or counted as dropped (B's ring full), nothing else.
  const v1::PortStats* b = portStats(s, port_b_);
  EXPECT_EQ(received_b + b->tx_dropped(), a_sent_to_b + portStats(s, port_c)->rx_packets());
  EXPECT_EQ(portStats(s, port_a_)->rx_dropped(), 0u);
  EXPECT_EQ(dropCount(s, "port_gone"), 0u);

  // C comes back on the same port: both ways work again, frame for frame.
  made = VirtioPod::create(c.port().socket_path(), false, podPool());
  ASSERT_TRUE(made.ok()) << made.status();
  pod_c = std::move(*made);
  ASSERT_TRUE(node_->waitLinkUp(port_c)) << node_->log();
  ASSERT_EQ(pod_a_->send(a_to_c), a_to_c.size());
  const std::vector<Frame> at_c = pod_c->receive(a_to_c.size());
  ASSERT_EQ(at_c.size(), a_to_c.size());
  for (size_t i = 0; i < at_c.size(); ++i) EXPECT_EQ(udpSequence(at_c[i]), udpSequence(a_to_c[i]));
  pod_b_->drainCount();
  ASSERT_EQ(pod_c->send(c_to_b), c_to_b.size());
  EXPECT_EQ(pod_b_->receive(c_to_b.size()).size(), c_to_b.size());
  EXPECT_EQ(node_->ports().ports_size(), 3);
}

// A pod of four queue pairs (a multi-queue virtio-net device) sends distinct
// flows on each of its tx queues: sluiced polls all four rx queues, and B
// gets every packet, byte for byte; sluiced counts them all at the port. The
// way back (one PMD: tx queue 0) reaches the pod as well.
TEST_F(TwoPodsTest, AMultiQueuePodSpreadsItsFlowsOverItsQueuesAndLosesNothing) {
  constexpr uint16_t kQueues = 4;
  constexpr size_t kPerQueue = 250;  // below B's 1024-entry ring per round
  const Ipv4Address ip_m = *Ipv4Address::parse("10.250.0.12");
  const MacAddress mac_m = MacAddress::fromIpv4(ip_m);
  v1::AddPortRequest req = portRequest("pod-m", ip_m.toString());
  req.set_queues(kQueues);
  v1::AddPortResponse m;
  ASSERT_TRUE(node_->addPort(req, &m).ok());
  EXPECT_EQ(m.port().queues(), kQueues);
  EXPECT_EQ(std::vector<uint32_t>(m.port().queue_pmds().begin(), m.port().queue_pmds().end()),
            std::vector<uint32_t>(kQueues, 0)) << "one PMD polls every queue";
  auto pod = VirtioPod::create(m.port().socket_path(), false, podPool(), kQueues);
  ASSERT_TRUE(pod.ok()) << pod.status();
  std::unique_ptr<VirtioPod> pod_m = std::move(*pod);
  ASSERT_TRUE(node_->waitLinkUp(m.port().port_no())) << node_->log();
  // The vhost library's vring-state callbacks told sluiced which tx queues the pod enabled.
  const std::string enabled = "port " + std::to_string(m.port().port_no()) + ": the pod enabled ";
  EXPECT_TRUE(waitFor([&] { return node_->log().find(enabled + "4 of 4 tx queues") != std::string::npos; }))
      << node_->log();

  uint64_t bytes = 0;
  for (uint16_t q = 0; q < kQueues; ++q) {
    std::vector<Frame> sent;
    for (size_t i = 0; i < kPerQueue; ++i) {
      UdpFrameSpec s{mac_m, kGatewayMac, ip_m, kIpB};
      const auto n = static_cast<uint32_t>(q * kPerQueue + i);
      s.sequence = n;
      s.src_port = static_cast<uint16_t>(2000 + n);  // a flow of its own
      s.frame_len = 60 + n % 64;
      sent.push_back(udpFrame(s));
      bytes += sent.back().size();
    }
    ASSERT_EQ(pod_m->send(sent, std::chrono::seconds(10), q), kPerQueue) << "queue " << q;
    std::vector<Frame> got = pod_b_->receive(kPerQueue);
    ASSERT_EQ(got.size(), kPerQueue) << "queue " << q << ": " << node_->stats().DebugString();
    for (size_t i = 0; i < kPerQueue; ++i) {
      ASSERT_EQ(got[i].size(), sent[i].size()) << "queue " << q << " packet " << i;
      EXPECT_EQ(udpSequence(got[i]), q * kPerQueue + i) << "order kept within a queue";
      EXPECT_EQ(ethDst(got[i]), kMacB);
      EXPECT_EQ(ipv4Ttl(got[i]), 63);
      ASSERT_TRUE(std::equal(got[i].begin() + 26, got[i].end(), sent[i].begin() + 26)) << i;
    }
  }
  // The pod really sent on four queues (its driver's per-queue counters).
  rte_eth_stats pod_stats{};
  ASSERT_EQ(rte_eth_stats_get(pod_m->portId(), &pod_stats), 0);
  for (uint16_t q = 0; q < kQueues; ++q) EXPECT_EQ(pod_stats.q_opackets[q], kPerQueue) << "pod tx queue " << q;
  // The way back: B to the multi-queue pod.
  std::vector<Frame> back;
  for (uint32_t i = 0; i < 10; ++i) {
    UdpFrameSpec s{kMacB, kGatewayMac, kIpB, ip_m};
    s.sequence = i;
    back.push_back(udpFrame(s));
  }
  ASSERT_EQ(pod_b_->send(back), back.size());
  EXPECT_EQ(pod_m->receive(back.size()).size(), back.size());

  constexpr uint64_t kTotal = uint64_t{kQueues} * kPerQueue;
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(portStats(s, m.port().port_no())->rx_packets(), kTotal);
  EXPECT_EQ(portStats(s, m.port().port_no())->rx_bytes(), bytes);
  EXPECT_EQ(portStats(s, m.port().port_no())->tx_packets(), back.size());
  EXPECT_EQ(portStats(s, port_b_)->tx_packets(), kTotal);
  EXPECT_EQ(portStats(s, port_b_)->tx_bytes(), bytes);
  for (const v1::DropCounter& d : s.drops()) EXPECT_EQ(d.packets(), 0u) << d.reason();
  // Each rx queue brought exactly what the pod sent on it, polled by PMD 0;
  // together, the port's count.
  uint64_t by_queue = 0;
  std::vector<uint32_t> queues_seen;
  for (const v1::RxQueueStats& q : s.rx_queues()) {
    if (q.port_no() != m.port().port_no()) continue;
    queues_seen.push_back(q.queue());
    EXPECT_EQ(q.packets(), kPerQueue) << "rx queue " << q.queue();
    EXPECT_EQ(q.pmd(), 0u) << "rx queue " << q.queue();
    by_queue += q.packets();
  }
  EXPECT_EQ(queues_seen, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(by_queue, portStats(s, m.port().port_no())->rx_packets());
  CommandResult pmd = sluicectl(node_->apiSocket(), "pmd");
  EXPECT_NE(pmd.output.find("queues 0 (250), 1 (250), 2 (250), 3 (250) of 4\n"), std::string::npos) << pmd.output;
  CommandResult ports = sluicectl(node_->apiSocket(), "ports");
  EXPECT_NE(ports.output.find(" queues 4 pmds 0,0,0,0"), std::string::npos) << ports.output;
  // A pod that goes away leaves sluiced sending on queue 0 only.
  pod_m.reset();
  const size_t all_at = node_->log().find(enabled + "4 of 4 tx queues");
  EXPECT_TRUE(waitFor([&] { return node_->log().find(enabled + "1 of 4 tx queues", all_at) != std::string::npos; }))
      << node_->log();
}

TEST_F(TwoPodsTest, StatsClearResetsEveryCounter) {
  ASSERT_EQ(pod_a_->send(aToB(50)), 50u);
  ASSERT_EQ(pod_b_->receive(50).size(), 50u);
  grpc::ClientContext ctx;
  v1::ClearStatsResponse cleared;
  ASSERT_TRUE(node_->api().ClearStats(&ctx, {}, &cleared).ok());
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(s.pmds(0).packets(), 0u);
  EXPECT_EQ(portStats(s, port_a_)->rx_packets(), 0u);
  ASSERT_EQ(pod_a_->send(aToB(5)), 5u);
  ASSERT_EQ(pod_b_->receive(5).size(), 5u);
  EXPECT_EQ(portStats(node_->stats(), port_b_)->tx_packets(), 5u);
}

class TimedFlushTest : public TwoPodsTest {
 protected:
  void SetUp() override {
    SluicedOptions o;
    o.tx_flush_interval_us = 200;
    startNode(o);
  }
};

TEST_F(TimedFlushTest, HeldBatchesAreFlushedWhenTheirTimeIsUp) {
  // Fewer packets than a full batch: only the timer can send them.
  ASSERT_EQ(pod_a_->send(aToB(5)), 5u);
  EXPECT_EQ(pod_b_->receive(5).size(), 5u);
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(s.tx_flush_interval_us(), 200u);
  EXPECT_EQ(s.pmds(0).tx_packets(), 5u);
  EXPECT_EQ(s.pmds(0).tx_batched_packets(), 5u);
}

// The pod listens (e.g. a DPDK app as vhost-user server) and sluiced connects.
TEST(ClientModeTest, SluicedConnectsToThePodsSocket) {
  std::string error;
  auto node = SluicedProcess::start({}, &error);
  ASSERT_NE(node, nullptr) << error;
  std::string dir = node->socketDir() + "/pod-x";
  // sluiced's port first: it keeps trying to connect until the pod listens
  // (a virtio_user server waits in its probe for the connection).
  v1::AddPortRequest req = portRequest("pod-x", kIpA.toString(), v1::VHOST_MODE_CLIENT);
  req.set_socket_subdir("pod-x");
  v1::AddPortResponse x;
  ASSERT_TRUE(node->addPort(req, &x).ok());
  auto server_pod = VirtioPod::create(dir + "/net1.sock", /*server=*/true, podPool());
  ASSERT_TRUE(server_pod.ok()) << server_pod.status();
  EXPECT_EQ(x.port().vhost_mode(), v1::VHOST_MODE_CLIENT);
  EXPECT_EQ(x.port().socket_path(), dir + "/net1.sock");
  ASSERT_TRUE(node->waitLinkUp(x.port().port_no())) << node->log();
  ASSERT_EQ((*server_pod)->send({arpRequest(kMacA, kIpA, kGateway)}), 1u);
  std::vector<Frame> got = (*server_pod)->receive(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(ethSrc(got[0]), kGatewayMac);
  // Deleting a client-mode port leaves the pod's socket alone.
  ASSERT_TRUE(node->deletePort("pod-x", "net1").ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/net1.sock"));
  server_pod->reset();
  EXPECT_EQ(node->stop(), 0);
}

// A pod controls its socket directory (its emptyDir, with per-pod sockets):
// a symlink it puts in place of its socket must not lead sluiced's client
// connection to another socket of the node. Here the other socket listens
// next to the pod's directory; sluiced's connects (at AddPort, then its
// retries) fail with ELOOP, which DPDK logs, and the other socket never sees
// a connection. Once the pod listens on a real socket there, sluiced connects.
TEST(ClientModeTest, ASymlinkInPlaceOfThePodsSocketIsNotFollowed) {
  std::string error;
  auto node = SluicedProcess::start({}, &error);
  ASSERT_NE(node, nullptr) << error;
  const std::string dir = node->socketDir() + "/pod-y";
  const std::string other = node->socketDir() + "/other.sock";
  ASSERT_TRUE(std::filesystem::create_directory(dir));
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(other.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, other.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(listener, 8), 0);
  std::filesystem::create_symlink(other, dir + "/net1.sock");

  v1::AddPortRequest req = portRequest("pod-y", kIpA.toString(), v1::VHOST_MODE_CLIENT);
  req.set_socket_subdir("pod-y");
  v1::AddPortResponse y;
  ASSERT_TRUE(node->addPort(req, &y).ok());
  // DPDK's vhost client logs each failed connect with its reason (and the
  // path it was given: the pod directory's handle, /proc/self/fd/N/...).
  const std::string refused = "/net1.sock) failed to connect: Too many levels of symbolic links";
  EXPECT_TRUE(waitFor([&] { return node->log().find(refused) != std::string::npos; }, std::chrono::seconds(20)))
      << node->log();
  pollfd pending{listener, POLLIN, 0};
  EXPECT_EQ(::poll(&pending, 1, 0), 0) << "sluiced connected to the socket the symlink names";

  // The pod's real socket in place of the symlink: sluiced connects to it.
  ASSERT_TRUE(std::filesystem::remove(dir + "/net1.sock"));
  auto pod = VirtioPod::create(dir + "/net1.sock", /*server=*/true, podPool());
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(node->waitLinkUp(y.port().port_no())) << node->log();
  EXPECT_EQ(::poll(&pending, 1, 0), 0) << "sluiced connected to the socket the symlink named";
  ::close(listener);
  ASSERT_TRUE(node->deletePort("pod-y", "net1").ok());
  pod->reset();
  EXPECT_EQ(node->stop(), 0);
}

TEST(ShutdownTest, SigtermClosesPortsAndRemovesEverySocket) {
  std::string error;
  auto node = SluicedProcess::start({}, &error);
  ASSERT_NE(node, nullptr) << error;
  v1::AddPortResponse a;
  v1::AddPortRequest req = portRequest("pod-s", kIpA.toString());
  req.set_socket_subdir("pod-s");
  ASSERT_TRUE(node->addPort(req, &a).ok());
  ASSERT_TRUE(std::filesystem::exists(a.port().socket_path()));
  EXPECT_EQ(node->stop(), 0) << node->log();
  EXPECT_FALSE(std::filesystem::exists(a.port().socket_path()));
  EXPECT_FALSE(std::filesystem::exists(node->socketDir() + "/pod-s"));
  EXPECT_FALSE(std::filesystem::exists(node->apiSocket()));
  EXPECT_NE(node->log().find("sluiced stopped"), std::string::npos);
}

}  // namespace
}  // namespace sluice::test
