// Packet trace, the "what would happen" trace and packet capture on the real
// PMD loop and control path (ring ethdevs for pods, tests/support/ring_node.h):
// what a trace records for known flows, TTL 1 and malformed frames; the
// "would happen" decision against what packets really did, over random
// packets and table changes; captured bytes against the bytes sent and
// received, read back from a pcap by libpcap; and a full capture ring,
// which drops and counts records while every packet is still forwarded.
#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>

#include "dataplane/api/pcap_writer.h"
#include "dataplane/core/flow_control.h"
#include "dataplane/core/packet_spec.h"
#include "dataplane/core/packet_taps.h"
#include "dataplane/core/would_happen.h"
#include "dataplane/datapath/l3_forward.h"
#include "tests/support/ring_node.h"

namespace sluice::test {
namespace {

// A trace session on its own thread (PacketTaps::trace blocks), started
// once the PMD's tap is armed; it gives up after 10 s so that a missing
// record fails the test instead of hanging it.
class TraceRun {
 public:
  TraceRun(PacketTaps& taps, PmdTap& tap, const TraceSpec& spec) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    thread_ = std::thread([&taps, spec, deadline, this] {
      status_ = taps.trace(
          spec,
          [this](unsigned, const TraceRecord& r, uint64_t dropped) {
            records_.push_back(r);
            dropped_ = dropped;
            return true;
          },
          [deadline] { return std::chrono::steady_clock::now() > deadline; });
    });
    EXPECT_TRUE(waitUntil([&tap] { return (tap.armed.load() & kTapTrace) != 0; }));
  }
  // Waits for the session to end; its records.
  const std::vector<TraceRecord>& finish() {
    thread_.join();
    EXPECT_TRUE(status_.ok()) << status_;
    return records_;
  }

 private:
  std::thread thread_;
  absl::Status status_;
  std::vector<TraceRecord> records_;
  uint64_t dropped_ = 0;
};

class PacketTraceTest : public ::testing::Test {
 protected:
  PacketTraceTest() : taps_({&node_.pmdContext()}, rte_get_tsc_hz()) {}

  TraceRecord traceOne(uint16_t port, const Frame& f, TapFilter filter = {}) {
    TraceRun run(taps_, tap(), TraceSpec{port, filter, 1});
    node_.inject(port, f);
    const std::vector<TraceRecord>& r = run.finish();
    EXPECT_EQ(r.size(), 1u);
    return r.empty() ? TraceRecord{} : r[0];
  }
  PmdTap& tap() { return node_.pmdContext().tap; }
  uint64_t drops(DropReason r) { return node_.counters().drops[static_cast<size_t>(r)].read(); }

  Node node_{nullptr};
  PacketTaps taps_;
};

TEST_F(PacketTraceTest, KnownFlowShowsMissThenTierMegaflowAndOutput) {
  const uint16_t a = node_.addPod("trc-a", 10);
  const uint16_t b = node_.addPod("trc-b", 11);
  // The first packet: no tier has it; translated inline and upcalled.
  TraceRecord r = traceOne(a, udpTo(10, podIp(11), 64, 1000, 1));
  EXPECT_EQ(r.tier, TraceTier::kMiss);
  EXPECT_EQ(r.upcall, TraceUpcall::kSent);
  EXPECT_EQ(r.in_port, a);
  EXPECT_EQ(r.pkt_len, 60u);
  EXPECT_EQ(r.parse_result, static_cast<uint8_t>(flow::ParseResult::kOk));
  EXPECT_EQ(r.megaflow, flow::kNoMegaflow);
  EXPECT_EQ(describeActions(r.actions), "output:" + std::to_string(b) + "(l3_rewrite)");
  EXPECT_NE(describeMatch(r.mf_key, r.mf_mask).find("ipv4_dst=10.77.0.11"), std::string::npos);
  ASSERT_TRUE(node_.waitForFlow("ipv4_dst=10.77.0.11"));
  uint32_t index = flow::kNoMegaflow;
  std::string match;
  for (const FlowView& f : node_.control().listFlows())
    if (f.match.find("ipv4_dst=10.77.0.11") != std::string::npos) index = f.index, match = f.match;

  // Later packets hit a tier; the trace names the one whose counter moved.
  for (uint32_t i = 0; i < 6; ++i) {
    const uint64_t emc = node_.counters().emc_hits.read(), smc = node_.counters().smc_hits.read(),
                   mf = node_.counters().megaflow_hits.read();
    r = traceOne(a, udpTo(10, podIp(11), 64, 1000, 2 + i));
    const TraceTier moved = node_.counters().emc_hits.read() != emc   ? TraceTier::kEmc
                            : node_.counters().smc_hits.read() != smc ? TraceTier::kSmc
                            : node_.counters().megaflow_hits.read() != mf ? TraceTier::kMegaflow
                                                                          : TraceTier::kMiss;
    EXPECT_EQ(r.tier, moved) << "packet " << i;
    EXPECT_NE(moved, TraceTier::kMiss);
    EXPECT_EQ(r.megaflow, index);
    EXPECT_EQ(describeMatch(r.mf_key, r.mf_mask), match);
    EXPECT_EQ(r.actions.kind, flow::MegaflowActions::Kind::kOutput);
    EXPECT_EQ(r.actions.out_port, b);
  }
  // Every traced packet was forwarded to b, TTL decremented.
  auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 7u);
  for (auto& [port, f] : out) {
    EXPECT_EQ(port, b);
    EXPECT_EQ(ipv4Ttl(f), 63);
  }

  // One burst of three packets of one flow: one lookup, then two run hits.
  TraceRun run(taps_, tap(), TraceSpec{a, {}, 3});
  const Frame f = udpTo(10, podIp(11), 64, 1000, 50);
  node_.injectBurst(a, {f, f, f});
  const std::vector<TraceRecord>& burst = run.finish();
  ASSERT_EQ(burst.size(), 3u);
  EXPECT_NE(burst[0].tier, TraceTier::kRunHit);
  EXPECT_NE(burst[0].tier, TraceTier::kMiss);
  EXPECT_EQ(burst[1].tier, TraceTier::kRunHit);
  EXPECT_EQ(burst[2].tier, TraceTier::kRunHit);
  EXPECT_EQ(burst[2].megaflow, index);
  EXPECT_EQ(node_.collectAll().size(), 3u);
}

TEST_F(PacketTraceTest, TtlOneShowsTheDropReason) {
  const uint16_t a = node_.addPod("trc-a", 10);
  node_.addPod("trc-b", 11);
  const uint64_t before = drops(DropReason::kTtlExceeded);
  const TraceRecord r = traceOne(a, udpTo(10, podIp(11), 1, 1000, 1));
  EXPECT_EQ(r.tier, TraceTier::kMiss);
  EXPECT_EQ(r.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(r.actions.drop_reason, static_cast<uint16_t>(DropReason::kTtlExceeded));
  EXPECT_EQ(describeActions(r.actions), "drop:ttl_exceeded");
  EXPECT_NE(describeMatch(r.mf_key, r.mf_mask).find("ttl=1"), std::string::npos);
  EXPECT_EQ(drops(DropReason::kTtlExceeded), before + 1);
  // Answered: an ICMP Time Exceeded back to the sender (icmp_error_pipeline_test checks its bytes).
  const auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, a);
  EXPECT_EQ(out[0].second[34], 11);
}

TEST_F(PacketTraceTest, MalformedFrameIsScreenedWithItsParseResult) {
  const uint16_t a = node_.addPod("trc-a", 10);
  Frame f = udpTo(10, podIp(11), 64, 1000, 1);
  f.resize(20);  // Ethernet and 6 bytes of IPv4
  const uint64_t before = drops(DropReason::kTruncated);
  const TraceRecord r = traceOne(a, f);
  EXPECT_EQ(r.tier, TraceTier::kScreened);
  EXPECT_EQ(r.parse_result, static_cast<uint8_t>(flow::ParseResult::kIpv4Truncated));
  EXPECT_EQ(r.next, kNextDrop);
  EXPECT_EQ(r.reason, static_cast<uint8_t>(DropReason::kTruncated));
  EXPECT_EQ(drops(DropReason::kTruncated), before + 1);
}

TEST_F(PacketTraceTest, FilterRecordsOnlyMatchingPackets) {
  const uint16_t a = node_.addPod("trc-a", 10);
  node_.addPod("trc-b", 11);
  TapFilter filter;
  filter.tp_src = htons(2000);
  filter.ip_proto = 17;
  TraceRun run(taps_, tap(), TraceSpec{a, filter, 1});
  node_.inject(a, udpTo(10, podIp(11), 64, 1000, 1));
  node_.inject(a, udpTo(10, podIp(11), 64, 2000, 2));
  const std::vector<TraceRecord>& r = run.finish();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].key.tp_src, htons(2000));
  // Disarmed at the end: nothing more is recorded.
  EXPECT_EQ(tap().armed.load() & kTapTrace, 0u);
}

TEST_F(PacketTraceTest, SecondTraceIsRefusedWhileOneRuns) {
  const uint16_t a = node_.addPod("trc-a", 10);
  node_.addPod("trc-b", 11);
  TraceRun run(taps_, tap(), TraceSpec{a, {}, 1});
  const absl::Status second = taps_.trace(
      TraceSpec{a, {}, 1}, [](unsigned, const TraceRecord&, uint64_t) { return true; }, [] { return true; });
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  node_.inject(a, udpTo(10, podIp(11), 64, 1000, 1));
  EXPECT_EQ(run.finish().size(), 1u);
}

// The "would happen" decision of a packet, made before it is sent, against
// what the PMD then did with it: the port it came out of (and the bytes the
// rewrite is known to make), or the drop reason whose counter moved.
TEST_F(PacketTraceTest, WouldHappenAgreesWithWhatPacketsDid) {
  const uint16_t a = node_.addPod("trc-a", 10);
  node_.addPod("trc-b", 11);
  std::map<unsigned, bool> present;
  std::mt19937 rng(20261202);
  const std::vector<Ipv4Address> dsts = {podIp(11), podIp(12), podIp(13), podIp(50), kGateway,
                                         *Ipv4Address::parse("10.99.0.1"), podIp(10)};
  const std::vector<uint8_t> ttls = {0, 1, 2, 64};
  uint32_t forwarded = 0, dropped = 0;
  for (uint32_t i = 0; i < 300; ++i) {
    if (rng() % 16 == 0) node_.togglePod(12 + rng() % 2, present);  // the tables change meanwhile
    const Ipv4Address dst = dsts[rng() % dsts.size()];
    const uint8_t ttl = ttls[rng() % ttls.size()];
    const Frame f = udpTo(10, dst, ttl, static_cast<uint16_t>(1000 + rng() % 4), i);
    const WouldHappen w = wouldHappen(node_.control(), a, f);
    std::array<uint64_t, kDropReasonCount> before{};
    for (size_t r = 0; r < kDropReasonCount; ++r) before[r] = node_.counters().drops[r].read();
    node_.inject(a, f);
    auto out = node_.collectAll();
    ASSERT_FALSE(w.screened);
    const flow::MegaflowActions& act = w.translation.actions;
    if (act.kind == flow::MegaflowActions::Kind::kOutput) {
      ASSERT_EQ(out.size(), 1u) << "packet " << i;
      EXPECT_EQ(out[0].first, act.out_port) << "packet " << i;
      EXPECT_EQ(ipv4Ttl(out[0].second), ttl - 1) << "packet " << i;
      EXPECT_TRUE(ipv4ChecksumValid(out[0].second)) << "packet " << i;
      EXPECT_EQ(ethSrc(out[0].second), MacAddress::fromIpv4(kGateway)) << "packet " << i;
      ++forwarded;
    } else {
      ASSERT_EQ(act.kind, flow::MegaflowActions::Kind::kDrop);
      if (act.drop_reason == static_cast<uint16_t>(DropReason::kTtlExceeded)) {
        // Answered with a Time Exceeded back out of the port it came in on.
        ASSERT_EQ(out.size(), 1u) << "packet " << i;
        EXPECT_EQ(out[0].first, a) << "packet " << i;
        EXPECT_EQ(out[0].second[34], 11) << "packet " << i;
      } else if (act.rewrite_flags & kAnswerUnreachable) {
        // An unused address of the pod CIDR: answered with host unreachable.
        ASSERT_EQ(out.size(), 1u) << "packet " << i;
        EXPECT_EQ(out[0].first, a) << "packet " << i;
        EXPECT_EQ(out[0].second[34], 3) << "packet " << i;
        EXPECT_EQ(out[0].second[35], 1) << "packet " << i;
      } else {
        EXPECT_TRUE(out.empty()) << "packet " << i;
      }
      for (size_t r = 0; r < kDropReasonCount; ++r) {
        const uint64_t expected = before[r] + (r == act.drop_reason ? 1 : 0);
        EXPECT_EQ(node_.counters().drops[r].read(), expected) << "packet " << i << " reason " << kDropReasonNames[r];
      }
      ++dropped;
    }
  }
  // Both kinds of decision were exercised.
  EXPECT_GT(forwarded, 0u);
  EXPECT_GT(dropped, 0u);
}

TEST_F(PacketTraceTest, WouldHappenScreensAsThePmdDoes) {
  const uint16_t a = node_.addPod("trc-a", 10);
  absl::StatusOr<PacketSpec> spec = parsePacketSpec("in_port=" + std::to_string(a) + ",hex=0011223344550011");
  EXPECT_FALSE(spec.ok());  // 8 bytes: shorter than Ethernet
  spec = parsePacketSpec("in_port=" + std::to_string(a) + ",hex=0200000000010200000000020800450000");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const WouldHappen w = wouldHappen(node_.control(), a, spec->frame);
  EXPECT_TRUE(w.screened);
  EXPECT_EQ(w.parse, flow::ParseResult::kIpv4Truncated);
  EXPECT_EQ(w.reason, DropReason::kTruncated);
}

// A capture on its own thread; `hold` keeps its consumer from draining the
// ring until released (to fill it).
class CaptureRun {
 public:
  CaptureRun(PacketTaps& taps, PmdTap& tap, const CaptureSpec& spec, bool hold = false) : held_(hold) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    thread_ = std::thread([&taps, spec, deadline, this] {
      status_ = taps.capture(
          spec,
          [this](unsigned, const CaptureSlot& s, uint64_t time_ns, uint64_t dropped) {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [this] { return !held_; });
            packets_.emplace_back(Frame(s.data, s.data + s.cap_len), s.orig_len);
            times_.push_back(time_ns);
            tx_.push_back(s.tx != 0);
            dropped_ = dropped;
            return true;
          },
          [deadline] { return std::chrono::steady_clock::now() > deadline; });
    });
    EXPECT_TRUE(waitUntil([&tap] { return (tap.armed.load() & (kTapCaptureRx | kTapCaptureTx)) != 0; }));
  }
  void release() {
    std::lock_guard lock(mu_);
    held_ = false;
    cv_.notify_all();
  }
  void finish() {
    thread_.join();
    EXPECT_TRUE(status_.ok()) << status_;
  }
  std::vector<std::pair<Frame, uint32_t>> packets_;
  std::vector<uint64_t> times_;
  std::vector<bool> tx_;
  uint64_t dropped_ = 0;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_;
  std::thread thread_;
  absl::Status status_;
};

TEST_F(PacketTraceTest, CaptureKeepsTheExactBytesAndPcapReadsBack) {
  const uint16_t a = node_.addPod("trc-a", 10);
  const uint16_t b = node_.addPod("trc-b", 11);
  std::vector<Frame> sent;
  for (uint32_t i = 0; i < 10; ++i) {
    UdpFrameSpec s;
    s.src_mac = podMac(10);
    s.dst_mac = MacAddress::fromIpv4(kGateway);
    s.src_ip = podIp(10);
    s.dst_ip = podIp(11);
    s.sequence = i;
    s.frame_len = 60 + 97 * i;  // up to 933 bytes
    sent.push_back(udpFrame(s));
  }
  // What a receives.
  {
    CaptureRun run(taps_, tap(), CaptureSpec{a, true, false, 10, kCaptureSnapMax});
    for (const Frame& f : sent) node_.inject(a, f);
    run.finish();
    ASSERT_EQ(run.packets_.size(), 10u);
    for (size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ(run.packets_[i].first, sent[i]) << i;
      EXPECT_EQ(run.packets_[i].second, sent[i].size());
      EXPECT_FALSE(run.tx_[i]);
    }
    EXPECT_EQ(run.dropped_, 0u);
    EXPECT_EQ(node_.collectAll().size(), 10u);
  }
  // What b is sent, cut at a snaplen of 100, written as pcap and read back by libpcap.
  CaptureRun run(taps_, tap(), CaptureSpec{b, false, true, 10, 100});
  for (const Frame& f : sent) node_.inject(a, f);
  run.finish();
  const auto out = node_.collectAll();
  ASSERT_EQ(out.size(), 10u);
  ASSERT_EQ(run.packets_.size(), 10u);
  const std::string path = "/tmp/sluice_trace_test_" + std::to_string(::getpid()) + ".pcap";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  {
    PcapWriter pcap(file, 100);
    for (size_t i = 0; i < run.packets_.size(); ++i) {
      const Frame& p = run.packets_[i].first;
      ASSERT_TRUE(pcap.write(run.times_[i], run.packets_[i].second,
                             std::string_view(reinterpret_cast<const char*>(p.data()), p.size())));
    }
  }
  std::fclose(file);
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* reader = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(reader, nullptr) << err;
  EXPECT_EQ(pcap_datalink(reader), DLT_EN10MB);
  size_t n = 0;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(reader, &h, &data) == 1) {
    ASSERT_LT(n, out.size());
    const Frame& real = out[n].second;  // the bytes the PMD handed to b's tx queue
    EXPECT_EQ(out[n].first, b);
    EXPECT_EQ(h->len, real.size()) << n;
    EXPECT_EQ(h->caplen, std::min<size_t>(100, real.size())) << n;
    EXPECT_EQ(Frame(data, data + h->caplen), Frame(real.begin(), real.begin() + h->caplen)) << n;
    EXPECT_EQ(static_cast<uint64_t>(h->ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(h->ts.tv_usec),
              run.times_[n]);
    ++n;
  }
  pcap_close(reader);
  std::remove(path.c_str());
  EXPECT_EQ(n, 10u);
}

TEST_F(PacketTraceTest, FullCaptureRingDropsAndCountsWhileEveryPacketIsForwarded) {
  const uint16_t a = node_.addPod("trc-a", 10);
  node_.addPod("trc-b", 11);
  constexpr uint32_t kPackets = 600;  // more than the ring's slots
  static_assert(kPackets > PmdTap::kCaptureSlots);
  const uint64_t dropped_before = tap().capture_dropped.read();
  CaptureRun run(taps_, tap(), CaptureSpec{a, true, false, kPackets, 64}, /*hold=*/true);
  size_t forwarded = 0;
  for (uint32_t burst = 0; burst < kPackets / 30; ++burst) {
    std::vector<Frame> frames;
    for (uint32_t i = 0; i < 30; ++i) frames.push_back(udpTo(10, podIp(11), 64, 1000, burst * 30 + i));
    node_.injectBurst(a, frames);
    forwarded += node_.collectAll().size();
  }
  EXPECT_EQ(forwarded, kPackets);
  EXPECT_EQ(tap().capture_dropped.read() - dropped_before, kPackets - PmdTap::kCaptureSlots);
  run.release();
  run.finish();
  EXPECT_EQ(run.packets_.size(), PmdTap::kCaptureSlots);
  EXPECT_EQ(run.dropped_, kPackets - PmdTap::kCaptureSlots);
  EXPECT_EQ(run.packets_.front().first.size(), 60u);  // snaplen 64 > 60: whole frames
}

}  // namespace
}  // namespace sluice::test

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "packet_trace_test"); }
