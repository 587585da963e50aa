// The slow path of the flow caches without EAL or PMD threads: translation
// masks (exactly the fields a decision read), upcall handling (one megaflow
// for many source ports, duplicates coalesced, the flow limit), revalidation
// on table changes, idle expiry on an injected clock, and the upcall gate.
#include "dataplane/core/flow_control.h"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <random>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/upcall_gate.h"
#include "tests/support/frames.h"

namespace sluice {
namespace {

using flow::FlowKey;
using flow::FlowMask;
using flow::MegaflowActions;

const Ipv4Address kA = *Ipv4Address::parse("10.9.0.10");
const Ipv4Address kB = *Ipv4Address::parse("10.9.0.11");
const Ipv4Address kC = *Ipv4Address::parse("10.9.0.12");
const Ipv4Address kGw = *Ipv4Address::parse("10.9.0.1");

FlowKey keyOf(Ipv4Address dst, uint16_t src_port = 1000, uint8_t ttl = 64, Ipv4Address src = kA) {
  test::UdpFrameSpec s{MacAddress::fromIpv4(src), MacAddress::fromIpv4(kGw), src, dst};
  s.src_port = src_port;
  s.ttl = ttl;
  test::Frame f = test::udpFrame(s);
  FlowKey k;
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), 0, std::nullopt, k),
            flow::ParseResult::kOk);
  return k;
}

ForwardingTable tableWith(std::vector<std::pair<Ipv4Address, uint16_t>> pods) {
  std::vector<ForwardingTable::Entry> e;
  for (auto& [ip, port] : pods) e.push_back({ip, port, MacAddress::fromIpv4(ip)});
  return ForwardingTable(e);
}

FlowMask maskOf(bool ttl) {
  FlowMask m = flow::zeroKey();
  m.eth_type = 0xffff;
  m.ipv4_dst = 0xffffffffU;
  if (ttl) m.ttl_class = 0xff;
  return m;
}

TEST(TranslateFlowTest, LocalPodMaskHoldsExactlyEthTypeDestinationAndTtlClass) {
  ForwardingTable fib = tableWith({{kB, 3}});
  RouteTables t{&fib, kGw.networkOrder()};
  FlowTranslation tr;
  translateFlow(t, keyOf(kB), tr);
  EXPECT_TRUE(flow::keysEqual(tr.mask, maskOf(true)));
  EXPECT_EQ(tr.actions.kind, MegaflowActions::Kind::kOutput);
  EXPECT_EQ(tr.actions.out_port, 3);
  EXPECT_EQ(tr.actions.rewrite_flags, kRewriteL3);
  // Any source port, source address or TTL above 1 falls in the same megaflow.
  const FlowKey one = flow::applyMask(keyOf(kB), tr.mask);
  for (uint16_t port : {1, 999, 65535}) {
    FlowTranslation other;
    FlowKey k = keyOf(kB, port, 200, kC);
    translateFlow(t, k, other);
    EXPECT_TRUE(flow::keysEqual(flow::applyMask(k, other.mask), one)) << port;
  }
}

TEST(TranslateFlowTest, DropsReadOnlyWhatTheyNeed) {
  ForwardingTable fib = tableWith({{kB, 3}});
  RouteTables t{&fib, kGw.networkOrder()};
  FlowTranslation tr;
  translateFlow(t, keyOf(kC), tr);  // no such pod: the TTL is never read
  EXPECT_TRUE(flow::keysEqual(tr.mask, maskOf(false)));
  EXPECT_EQ(tr.actions.kind, MegaflowActions::Kind::kDrop);
  EXPECT_EQ(tr.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  translateFlow(t, keyOf(kGw), tr);
  FlowMask to_gateway = maskOf(false);
  to_gateway.ip_proto = 0xff;  // an echo request would be answered
  EXPECT_TRUE(flow::keysEqual(tr.mask, to_gateway));
  EXPECT_EQ(tr.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway));
  EXPECT_EQ(tr.actions.rewrite_flags, 0);
  translateFlow(t, keyOf(kB, 1000, 1), tr);  // a pod, but TTL 1
  EXPECT_TRUE(flow::keysEqual(tr.mask, maskOf(true)));
  EXPECT_EQ(tr.actions.drop_reason, static_cast<uint16_t>(DropReason::kTtlExceeded));
}

// An ICMP echo request to the gateway is answered (whatever its TTL); any
// other ICMP, a fragment, or an echo request through the tunnel is not. Only
// the gateway's decision reads protocol, fragment state, type and code.
TEST(TranslateFlowTest, TheGatewayAnswersWholeUntunnelledEchoRequests) {
  ForwardingTable fib = tableWith({{kB, 3}});
  RouteTables t{&fib, kGw.networkOrder()};
  auto icmp = [](Ipv4Address dst, uint8_t type, uint8_t code = 0, uint8_t ttl = 64) {
    FlowKey k = keyOf(dst, 1000, ttl);
    k.ip_proto = 1;
    k.tp_src = k.tp_dst = 0;
    k.icmp_type = type;
    k.icmp_code = code;
    return k;
  };
  FlowMask echo_mask = maskOf(false);
  echo_mask.ip_proto = 0xff;
  echo_mask.ip_frag = 0xff;
  echo_mask.icmp_type = 0xff;
  echo_mask.icmp_code = 0xff;
  FlowTranslation tr;
  for (uint8_t ttl : {64, 1}) {
    translateFlow(t, icmp(kGw, 8, 0, ttl), tr);
    EXPECT_TRUE(flow::keysEqual(tr.mask, echo_mask));
    EXPECT_EQ(tr.actions.kind, MegaflowActions::Kind::kDrop);
    EXPECT_EQ(tr.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway));
    EXPECT_EQ(tr.actions.rewrite_flags, kAnswerEcho);
    EXPECT_EQ(describeActions(tr.actions), "drop:to_gateway(icmp_echo_reply)");
  }
  for (auto [type, code] : {std::pair{0, 0}, {13, 0}, {8, 1}}) {
    translateFlow(t, icmp(kGw, static_cast<uint8_t>(type), static_cast<uint8_t>(code)), tr);
    EXPECT_TRUE(flow::keysEqual(tr.mask, echo_mask)) << type;
    EXPECT_EQ(tr.actions.rewrite_flags, 0) << type;
  }
  FlowKey fragment = icmp(kGw, 8);
  fragment.ip_frag = static_cast<uint8_t>(flow::IpFrag::kFirst);
  translateFlow(t, fragment, tr);
  FlowMask frag_mask = maskOf(false);
  frag_mask.ip_proto = frag_mask.ip_frag = 0xff;
  EXPECT_TRUE(flow::keysEqual(tr.mask, frag_mask));
  EXPECT_EQ(tr.actions.rewrite_flags, 0);
  // An echo request to a pod is forwarded as any packet (mask unchanged).
  translateFlow(t, icmp(kB, 8), tr);
  EXPECT_TRUE(flow::keysEqual(tr.mask, maskOf(true)));
  EXPECT_EQ(tr.actions.kind, MegaflowActions::Kind::kOutput);
}

// An unrouted destination is matched as the widest whole-octet prefix that
// holds no pod and not the gateway; inside the pods' /24 that is the address.
TEST(TranslateFlowTest, UnroutedDestinationsAreMatchedAsTheirWidestSafePrefix) {
  ForwardingTable fib = tableWith({{kB, 3}});
  RouteTables t{&fib, kGw.networkOrder()};
  FlowTranslation tr;
  auto prefix = [&](const char* dst) {
    translateFlow(t, keyOf(*Ipv4Address::parse(dst)), tr);
    EXPECT_EQ(tr.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute)) << dst;
    EXPECT_EQ(tr.mask.ttl_class, 0) << "no TTL read for a drop";
    return std::popcount(tr.mask.ipv4_dst);
  };
  EXPECT_EQ(prefix("8.8.8.8"), 8);
  EXPECT_EQ(prefix("10.200.1.1"), 16);
  EXPECT_EQ(prefix("10.9.7.1"), 24);
  EXPECT_EQ(prefix("10.9.0.99"), 32);
  // The prefix holds no address decided otherwise: every address in
  // 8.0.0.0/8 translates to the same megaflow.
  translateFlow(t, keyOf(*Ipv4Address::parse("8.8.8.8")), tr);
  const FlowKey one = flow::applyMask(keyOf(*Ipv4Address::parse("8.8.8.8")), tr.mask);
  FlowTranslation other;
  translateFlow(t, keyOf(*Ipv4Address::parse("8.255.0.1")), other);
  EXPECT_TRUE(flow::keysEqual(flow::applyMask(keyOf(*Ipv4Address::parse("8.255.0.1")), other.mask), one));
  EXPECT_EQ(describeMatch(one, tr.mask), "eth_type=0x0800,ipv4_dst=8.0.0.0/8");
  EXPECT_EQ(describeMask(tr.mask), "eth_type=0xffff,ipv4_dst=255.0.0.0");
  // Re-translating the masked key (revalidation) gives the same mask.
  translateFlow(t, one, other);
  EXPECT_TRUE(flow::keysEqual(other.mask, tr.mask));
}

TEST(DescribeTest, MatchAndActionsText) {
  ForwardingTable fib = tableWith({{kB, 3}});
  FlowTranslation tr;
  translateFlow({&fib, kGw.networkOrder()}, keyOf(kB), tr);
  EXPECT_EQ(describeMatch(flow::applyMask(keyOf(kB), tr.mask), tr.mask), "eth_type=0x0800,ttl=2+,ipv4_dst=10.9.0.11");
  EXPECT_EQ(describeMask(tr.mask), "eth_type=0xffff,ttl=0xff,ipv4_dst=255.255.255.255");
  EXPECT_EQ(describeActions(tr.actions), "output:3(l3_rewrite)");
  EXPECT_EQ(describeActions(dropAction(DropReason::kNoRoute)), "drop:no_route");
}

uint64_t g_now = 1;
uint64_t fakeTsc() { return g_now; }

// One PMD's flow state, owned by the test; the PMD is "not running", so
// commit() does not wait for an acknowledgement.
class FlowControlTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kHz = 1'000'000;  // 1 cycle = 1 us
  explicit FlowControlTest(uint32_t limit = 64)
      : table_(*(pmd_.megaflows = std::make_unique<flow::MegaflowTable>(limit))) {}
  void SetUp() override { g_now = 1; }

  FlowControl make(uint32_t idle_ms = 10) {
    return FlowControl({&pmd_}, kHz, idle_ms, &fakeTsc);
  }
  // What the PMD would find for `key` in the published classifier.
  flow::MegaflowIndex lookup(const FlowKey& key) {
    const flow::Classifier* c = mailbox_.classifier.load();
    if (c == nullptr) return flow::kNoMegaflow;
    uint16_t idx[1] = {0};
    flow::MegaflowIndex out[1] = {flow::kNoMegaflow};
    c->lookupBurst(&key, idx, 1, out, table_);
    return out[0];
  }

  PmdContext pmd_;
  PmdMailbox& mailbox_ = pmd_.mailbox;
  flow::MegaflowTable& table_;
  UpcallQueue& queue_ = pmd_.upcalls;
};

TEST_F(FlowControlTest, ManySourcePortsMakeOneMegaflowAndDuplicatesCoalesce) {
  FlowControl fc = make();
  ForwardingTable fib = tableWith({{kB, 1}});
  for (uint16_t p = 0; p < 100; ++p) ASSERT_TRUE(queue_.push(keyOf(kB, static_cast<uint16_t>(5000 + p))));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  std::vector<FlowView> flows = fc.list();
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].match, "eth_type=0x0800,ttl=2+,ipv4_dst=10.9.0.11");
  EXPECT_EQ(flows[0].actions, "output:1(l3_rewrite)");
  FlowControlCounters c = fc.counters()[0];
  EXPECT_EQ(c.installed, 1u);
  EXPECT_EQ(c.duplicate_upcalls, 99u);
  EXPECT_EQ(c.megaflows, 1u);
  // Published to the PMD: an unseen source port hits it.
  EXPECT_EQ(lookup(keyOf(kB, 7)), flows[0].index);
  EXPECT_EQ(lookup(keyOf(kC, 7)), flow::kNoMegaflow);
}

TEST_F(FlowControlTest, RevalidationKillsWhatTheNewTablesDoNotSupportBeforeCommit) {
  FlowControl fc = make();
  ForwardingTable with_b = tableWith({{kB, 1}});
  ASSERT_TRUE(queue_.push(keyOf(kB)));
  ASSERT_TRUE(queue_.push(keyOf(kC)));  // no pod C yet: a no_route megaflow
  fc.handleUpcalls({&with_b, kGw.networkOrder()});
  fc.commit();
  ASSERT_EQ(fc.list().size(), 2u);
  const flow::MegaflowIndex to_b = lookup(keyOf(kB));
  const flow::MegaflowIndex to_c = lookup(keyOf(kC));
  ASSERT_NE(to_b, flow::kNoMegaflow);
  ASSERT_NE(to_c, flow::kNoMegaflow);

  // A pod is added that does not concern B or C: nothing changes.
  ForwardingTable with_b_a = tableWith({{kB, 1}, {kA, 2}});
  fc.revalidate({&with_b_a, kGw.networkOrder()});
  fc.commit();
  EXPECT_EQ(fc.list().size(), 2u);
  EXPECT_TRUE(table_.isAlive(to_b));

  // B goes, C comes: both megaflows are stale. They die at revalidate(),
  // i.e. before the PMDs are given the new tables.
  ForwardingTable with_c = tableWith({{kC, 1}, {kA, 2}});
  fc.revalidate({&with_c, kGw.networkOrder()});
  EXPECT_FALSE(table_.isAlive(to_b));
  EXPECT_FALSE(table_.isAlive(to_c));
  EXPECT_EQ(lookup(keyOf(kB)), flow::kNoMegaflow) << "a dead megaflow is a miss even in the old classifier";
  fc.commit();
  EXPECT_TRUE(fc.list().empty());
  EXPECT_EQ(fc.counters()[0].revalidated, 2u);
  // New upcalls translate with the new tables.
  ASSERT_TRUE(queue_.push(keyOf(kC)));
  fc.handleUpcalls({&with_c, kGw.networkOrder()});
  fc.commit();
  ASSERT_EQ(fc.list().size(), 1u);
  EXPECT_EQ(fc.list()[0].actions, "output:1(l3_rewrite)");
}

TEST_F(FlowControlTest, IdleMegaflowsExpireAndUsedOnesStay) {
  FlowControl fc = make(/*idle_ms=*/10);  // 10'000 cycles
  ForwardingTable fib = tableWith({{kB, 1}, {kC, 2}});
  ASSERT_TRUE(queue_.push(keyOf(kB)));
  ASSERT_TRUE(queue_.push(keyOf(kC)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  const flow::MegaflowIndex to_b = lookup(keyOf(kB));
  g_now += 6'000;
  table_.at(to_b).recordHits(1, 60, g_now);  // B's flow is used, C's is not
  fc.expireIdle();
  fc.commit();
  EXPECT_EQ(fc.list().size(), 2u);
  g_now += 6'000;  // C idle 12 ms, B 6 ms
  fc.expireIdle();
  fc.commit();
  std::vector<FlowView> flows = fc.list();
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].index, to_b);
  EXPECT_EQ(flows[0].packets, 1u);
  EXPECT_EQ(fc.counters()[0].expired, 1u);
}

class FlowLimitTest : public FlowControlTest {
 protected:
  FlowLimitTest() : FlowControlTest(2) {}
};

TEST_F(FlowLimitTest, UpcallsBeyondTheLimitAreRefusedAndSlotsComeBackAfterCommit) {
  FlowControl fc = make(10);
  ForwardingTable fib = tableWith({{kA, 0}, {kB, 1}, {kC, 2}});
  for (Ipv4Address d : {kA, kB, kC}) ASSERT_TRUE(queue_.push(keyOf(d, 1000, 64, kGw)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  EXPECT_EQ(fc.list().size(), 2u);
  EXPECT_EQ(fc.counters()[0].flow_limit_hits, 1u);
  // Both expire; after commit their slots are free for new megaflows.
  g_now += 20'000;
  fc.expireIdle();
  fc.commit();
  ASSERT_TRUE(queue_.push(keyOf(kC, 1000, 64, kGw)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  EXPECT_EQ(fc.list().size(), 1u);
}

// A full table makes room: the least recently used megaflow goes (its slot
// recycled at once) and the new flow is cached in this same drain.
TEST_F(FlowLimitTest, AFullTableEvictsTheLeastRecentlyUsedForANewFlow) {
  FlowControl fc = make(/*idle_ms=*/1'000'000);  // nothing expires by itself here
  ForwardingTable fib = tableWith({{kA, 0}, {kB, 1}, {kC, 2}});
  ASSERT_TRUE(queue_.push(keyOf(kA, 1000, 64, kGw)));
  ASSERT_TRUE(queue_.push(keyOf(kB, 1000, 64, kGw)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  ASSERT_EQ(fc.list().size(), 2u);
  const flow::MegaflowIndex to_a = lookup(keyOf(kA));
  const flow::MegaflowIndex to_b = lookup(keyOf(kB));
  g_now += 100;
  table_.at(to_a).recordHits(1, 60, g_now);  // A is in use, B is not
  ASSERT_TRUE(queue_.push(keyOf(kC, 1000, 64, kGw)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  EXPECT_EQ(fc.counters()[0].evicted, 1u);
  EXPECT_EQ(fc.counters()[0].flow_limit_hits, 0u);
  EXPECT_TRUE(table_.isAlive(to_a));
  EXPECT_EQ(lookup(keyOf(kA)), to_a);
  EXPECT_EQ(lookup(keyOf(kB)), flow::kNoMegaflow) << "B was the least recently used";
  ASSERT_NE(lookup(keyOf(kC)), flow::kNoMegaflow);
  EXPECT_EQ(lookup(keyOf(kC)), to_b) << "C took B's recycled slot";
  EXPECT_EQ(fc.list().size(), 2u);
}

// Random destinations that no route covers make a handful of prefix
// megaflows, not one each: they cannot fill the table.
class WideFlowTableTest : public FlowControlTest {
 protected:
  WideFlowTableTest() : FlowControlTest(4096) {}
};

TEST_F(WideFlowTableTest, RandomUnroutedDestinationsShareAFewPrefixMegaflows) {
  FlowControl fc = make();
  ForwardingTable fib = tableWith({{kB, 1}, {kC, 2}});
  uint32_t x = 12345;
  for (int i = 0; i < 1000; ++i) {
    x = x * 1103515245u + 12345u;
    Ipv4Address dst{x};
    if (dst.networkOrder() == kB.networkOrder() || dst.networkOrder() == kC.networkOrder()) continue;
    ASSERT_TRUE(queue_.push(keyOf(dst)));
    if (i % 500 == 499) {
      fc.handleUpcalls({&fib, kGw.networkOrder()});
      fc.commit();
    }
  }
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  std::vector<FlowView> flows = fc.list();
  // One per /8 (a /16 in 10/8, beside the pods): a few hundred at most.
  EXPECT_LE(flows.size(), 2 * 256u);
  for (const FlowView& f : flows) EXPECT_EQ(f.actions, "drop:no_route") << f.match;
  EXPECT_EQ(fc.counters()[0].flow_limit_hits, 0u);
  EXPECT_EQ(fc.counters()[0].evicted, 0u);
  // The pods are still reached through their own /32 megaflows.
  ASSERT_TRUE(queue_.push(keyOf(kB)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  const flow::MegaflowIndex to_b = lookup(keyOf(kB));
  ASSERT_NE(to_b, flow::kNoMegaflow);
  EXPECT_EQ(table_.at(to_b).actions.kind, MegaflowActions::Kind::kOutput);
}

// Versions are double-buffered (the previous one brought level by replaying
// the last commit's changes): over many rounds of installs, expiries and
// slot reuse, the published classifier finds exactly the live megaflows.
TEST_F(WideFlowTableTest, EveryPublishedVersionHoldsExactlyTheLiveMegaflows) {
  FlowControl fc = make(/*idle_ms=*/10);
  std::vector<std::pair<Ipv4Address, uint16_t>> pods;
  for (uint32_t i = 0; i < 300; ++i) pods.push_back({Ipv4Address{0x0a090100u + i}, static_cast<uint16_t>(i % 8)});
  ForwardingTable fib = tableWith(pods);
  std::mt19937 rng(7);
  auto verify = [&](int round) {
    std::map<uint32_t, flow::MegaflowIndex> live;  // destination -> megaflow
    table_.forEachLive([&](flow::MegaflowIndex i, const flow::Megaflow& m) { live[m.key.ipv4_dst] = i; });
    for (const auto& [ip, port] : pods) {
      auto it = live.find(ip.networkOrder());
      ASSERT_EQ(lookup(keyOf(ip)), it == live.end() ? flow::kNoMegaflow : it->second)
          << "round " << round << " " << ip.toString();
    }
  };
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 25; ++k) ASSERT_TRUE(queue_.push(keyOf(pods[rng() % pods.size()].first)));
    fc.handleUpcalls({&fib, kGw.networkOrder()});
    fc.commit();
    verify(round);
    // Half of the live ones are used; the rest expire.
    g_now += 6'000;
    table_.forEachLive([&](flow::MegaflowIndex i, const flow::Megaflow&) {
      if (rng() % 2 == 0) table_.at(i).recordHits(1, 60, g_now);
    });
    g_now += 6'000;
    fc.expireIdle();
    fc.commit();
    verify(round);
  }
  EXPECT_GT(fc.counters()[0].expired, 100u);
}

TEST(UpcallGateTest, CoalescesInFlightFlowsAndLimitsTheRate) {
  UpcallGateConfig c;
  c.tsc_hz = 1'000'000;  // 1 cycle = 1 us
  c.rate_per_sec = 1000;  // one token per 1000 cycles
  c.burst = 2;
  c.retry_ms = 5;
  UpcallGate g(c);
  uint64_t now = 10;
  EXPECT_EQ(g.admit(1, 0, now), UpcallGate::Verdict::kSend);
  EXPECT_EQ(g.admit(1, 0, now), UpcallGate::Verdict::kCoalesced);
  EXPECT_EQ(g.admit(2, 0, now), UpcallGate::Verdict::kSend);
  EXPECT_EQ(g.admit(3, 0, now), UpcallGate::Verdict::kLost) << "burst of 2 spent";
  EXPECT_EQ(g.admit(1, 0, now + 100), UpcallGate::Verdict::kCoalesced) << "duplicates cost no token";
  now += 1000;  // one token back
  EXPECT_EQ(g.admit(3, 0, now), UpcallGate::Verdict::kSend);
  EXPECT_EQ(g.admit(4, 0, now), UpcallGate::Verdict::kLost);
  now += 10'000;  // past the retry time: flow 1 is asked for again
  EXPECT_EQ(g.admit(1, 0, now), UpcallGate::Verdict::kSend);
  g.unsend(1);
  EXPECT_EQ(g.admit(1, 0, now), UpcallGate::Verdict::kSend) << "a refused upcall is retried at once";
}

// One port sends nothing but new flows, as fast as it can; another port's
// new flows keep being sent: at least its share of the rate, from the half
// of the burst the flooding port cannot take.
TEST(UpcallGateTest, OnePortsFloodLeavesTheOtherPortsTheirShare) {
  UpcallGateConfig c;
  c.tsc_hz = 1'000'000;
  c.rate_per_sec = 1000;  // PMD: one token per 1000 cycles
  c.burst = 64;
  c.retry_ms = 1;
  UpcallGate g(c);
  g.setPortCount(2);  // each port: one token per 2000 cycles, burst 32
  constexpr uint16_t kFlood = 3, kInnocent = 5;
  uint64_t now = 1;
  uint32_t flood_hash = 0x10000;
  // The flood alone: each send spends a token of the PMD and one of its own
  // share; once the PMD is down to half its burst, the share is all it has.
  uint32_t flood_sent = 0;
  while (g.admit(flood_hash++, kFlood, now) == UpcallGate::Verdict::kSend) ++flood_sent;
  EXPECT_EQ(flood_sent, 32u);
  // The half kept back serves the innocent port, with its own share.
  uint32_t innocent_sent = 0;
  for (uint32_t f = 0; f < 32; ++f)
    innocent_sent += g.admit(0x20000 + f, kInnocent, now) == UpcallGate::Verdict::kSend;
  EXPECT_EQ(innocent_sent, 32u) << "the reserve is the innocent port's";
  // Steady state over 100 ms: the flooder offers a new flow every cycle
  // step, the innocent port one every 10 ms; every innocent one is sent.
  uint32_t innocent_offered = 0;
  innocent_sent = 0;
  flood_sent = 0;
  for (uint64_t t = 0; t < 100'000; t += 50) {
    now += 50;
    flood_sent += g.admit(flood_hash++, kFlood, now) == UpcallGate::Verdict::kSend;
    if (t % 10'000 == 9'950) {  // once the buckets have refilled a little
      ++innocent_offered;
      innocent_sent += g.admit(0x30000 + static_cast<uint32_t>(t), kInnocent, now) == UpcallGate::Verdict::kSend;
    }
  }
  EXPECT_EQ(innocent_sent, innocent_offered);
  EXPECT_LE(flood_sent, 100'000u / 1000u) << "never more than the PMD's rate";
}

TEST(UpcallGateTest, ZeroRateMeansNoLimit) {
  UpcallGateConfig c;
  c.tsc_hz = 1'000'000;
  c.rate_per_sec = 0;
  UpcallGate g(c);
  for (uint32_t f = 0; f < 10'000; ++f) ASSERT_EQ(g.admit(f, 1, 5), UpcallGate::Verdict::kSend) << f;
}

// upcall-rate and upcall-burst are live: a new rate and burst apply from
// the next admission; tokens earned are kept up to the new burst.
TEST(UpcallGateTest, RateAndBurstChangeWhileRunning) {
  UpcallGateConfig c;
  c.tsc_hz = 1'000'000;
  c.rate_per_sec = 1000;
  c.burst = 4;
  c.retry_ms = 1;
  UpcallGate g(c);
  uint64_t now = 10;
  uint32_t sent = 0;
  for (uint32_t f = 0; f < 10; ++f) sent += g.admit(f, 0, now) == UpcallGate::Verdict::kSend;
  EXPECT_EQ(sent, 4u);
  g.setRate(1000, 1);  // a burst of one
  now += 10'000;       // ten tokens' time: capped at the new burst
  sent = 0;
  for (uint32_t f = 100; f < 110; ++f) sent += g.admit(f, 0, now) == UpcallGate::Verdict::kSend;
  EXPECT_EQ(sent, 1u);
  g.setRate(100'000, 8);  // one token per 10 cycles
  now += 80;
  sent = 0;
  for (uint32_t f = 200; f < 220; ++f) sent += g.admit(f, 0, now) == UpcallGate::Verdict::kSend;
  EXPECT_EQ(sent, 8u);
}

// flow-idle-timeout-ms is live: the next expiry uses the new timeout.
TEST_F(FlowControlTest, IdleTimeoutChangesWhileRunning) {
  FlowControl fc = make(/*idle_ms=*/1000);  // 1'000'000 cycles
  ForwardingTable fib = tableWith({{kB, 1}});
  ASSERT_TRUE(queue_.push(keyOf(kB)));
  fc.handleUpcalls({&fib, kGw.networkOrder()});
  fc.commit();
  g_now += 6'000;  // 6 ms idle: within 1 s
  fc.expireIdle();
  fc.commit();
  EXPECT_EQ(fc.list().size(), 1u);
  fc.setIdleTimeout(5);  // 5 ms
  fc.expireIdle();
  fc.commit();
  EXPECT_TRUE(fc.list().empty());
}

TEST(UpcallQueueTest, FifoUpToCapacity) {
  UpcallQueue q;
  FlowKey k = flow::zeroKey();
  for (uint32_t i = 0; i < UpcallQueue::kCapacity; ++i) {
    k.ipv4_dst = i;
    ASSERT_TRUE(q.push(k));
  }
  EXPECT_FALSE(q.push(k));
  uint32_t expect = 0;
  bool ordered = true;
  EXPECT_EQ(q.drain([&](const FlowKey& got) { ordered &= got.ipv4_dst == expect++; }), UpcallQueue::kCapacity);
  EXPECT_TRUE(ordered);
  EXPECT_TRUE(q.push(k));
}

}  // namespace
}  // namespace sluice
