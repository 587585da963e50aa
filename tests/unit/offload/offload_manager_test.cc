// The offload thread's logic on a recording fake provider: what is offered
// (in-port), refused (by reason) or installed, mark entries written before a
// rule exists and cleared before it is destroyed, retries, the cap, removal on
// revalidation/expiry through FlowControl, FIFO mark reuse only after a
// provider sync and a grace period over the PMDs that began after it, and a
// port that cannot mark. processPending() runs the
// thread's work in the test's thread (no sleeps).
#include "dataplane/modules/offload/offload_manager.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "dataplane/core/flow_control.h"
#include "tests/unit/offload/offload_test_util.h"

namespace sluice::offload {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace offload_manager_test {

using testing::l3Key;
using testing::l3Mask;

constexpr uint16_t kOffloadPort = 2;
constexpr uint16_t kDpdkPort = 11;

struct FakeLog {
  bool capable = true;
  int fail_creates = 0;     // the next N creates fail
  bool refuse_validate = false;
  bool sync_ok = true;
  int syncs_ok = 0;                      // sync() calls that returned true
  std::map<RuleHandle, uint32_t> rules;  // live rule -> mark
  std::vector<std::string> calls;
  RuleHandle next = 1;
  const MarkTable* marks = nullptr;      // to check the entry exists at create time
  bool entry_at_create = true;
};

class FakeProvider final : public OffloadProvider {
 public:
  explicit FakeProvider(FakeLog& log) : log_(log) {}
  const char* name() const override { return "fake"; }
  ProviderCaps caps() const override { return {true, true, false}; }
  Capability probe(uint16_t, uint16_t) override {
    log_.calls.push_back("probe");
    return {log_.capable, log_.capable ? "fake can" : "fake says no"};
  }
  void detach(uint16_t) override {
    log_.calls.push_back("detach");
    log_.rules.clear();
  }
  absl::Status validate(uint16_t, const FlowPattern&, uint32_t) override {
    return log_.refuse_validate ? absl::UnimplementedError("no") : absl::OkStatus();
  }
  absl::StatusOr<RuleHandle> create(uint16_t port, const FlowPattern&, uint32_t mark) override {
    EXPECT_EQ(port, kDpdkPort);
    MarkTarget t;
    if (log_.marks != nullptr && !log_.marks->lookup(mark, &t)) log_.entry_at_create = false;
    if (log_.fail_creates > 0) {
      --log_.fail_creates;
      return absl::ResourceExhaustedError("busy");
    }
    log_.rules[log_.next] = mark;
    return log_.next++;
  }
  absl::Status destroy(uint16_t, RuleHandle rule) override {
    log_.calls.push_back("destroy");
    return log_.rules.erase(rule) == 1 ? absl::OkStatus() : absl::NotFoundError("no rule");
  }
  absl::Status flush(uint16_t) override {
    log_.rules.clear();
    return absl::OkStatus();
  }
  bool sync() override {
    if (log_.sync_ok) ++log_.syncs_ok;
    return log_.sync_ok;
  }

 private:
  FakeLog& log_;
};

// Grace periods that pass when the test says (every token up to `completed`);
// `on_request` sees the state at the moment one begins.
class FakeGrace final : public GracePeriodSource {
 public:
  uint64_t request() override {
    if (on_request) on_request();
    return ++requested;
  }
  bool passed(uint64_t token) const override { return token <= completed; }
  uint64_t requested = 0, completed = 0;
  std::function<void()> on_request;
};

class OffloadManagerTest : public ::testing::Test {
 protected:
  explicit OffloadManagerTest(uint32_t max_flows = 4)
      : manager_(std::make_unique<FakeProvider>(log_), max_flows, &grace_) {
    log_.marks = &manager_.marks();
  }
  void add(uint32_t index, uint32_t dst, uint16_t in_port = kOffloadPort, uint32_t gen = 0) {
    flow::FlowKey k = l3Key(dst);
    k.in_port = in_port;
    k.ipv4_src = 0x01020304;  // not in the mask: must not reach the rule
    manager_.flowInstalled(0, index, gen, k, l3Mask(), output_);
  }
  FakeLog log_;
  FakeGrace grace_;
  OffloadManager manager_;
  const flow::MegaflowActions output_ = [] {
    flow::MegaflowActions a;
    a.kind = flow::MegaflowActions::Kind::kOutput;
    a.out_port = 4;
    return a;
  }();
};

TEST_F(OffloadManagerTest, InstallsMarkRulesAndShowsThem) {
  EXPECT_FALSE(manager_.wantsInPort(kOffloadPort));
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  EXPECT_TRUE(manager_.wantsInPort(kOffloadPort));
  EXPECT_FALSE(manager_.wantsInPort(kOffloadPort + 1));
  EXPECT_EQ(manager_.marks().port(), kOffloadPort);
  add(5, 0x0a000002);
  EXPECT_EQ(manager_.flowState(0, 5, 0), "");  // queued, not looked at yet
  manager_.processPending();
  EXPECT_TRUE(log_.entry_at_create);
  ASSERT_EQ(log_.rules.size(), 1u);
  const uint32_t mark = log_.rules.begin()->second;
  EXPECT_EQ(mark, 0u);  // dense: the first free mark
  MarkTarget t;
  ASSERT_TRUE(manager_.marks().lookup(mark, &t));
  EXPECT_EQ(t.pmd, 0u);
  EXPECT_EQ(t.megaflow, 5u);
  EXPECT_EQ(t.generation, 0u);
  EXPECT_EQ(manager_.flowState(0, 5, 0), "yes (mark 0)");
  EXPECT_EQ(manager_.flowState(0, 5, 1), "");  // another generation: a different megaflow
  OffloadStatsView s = manager_.stats();
  EXPECT_EQ(s.provider, "fake");
  EXPECT_TRUE(s.capable);
  EXPECT_EQ(s.offloaded, 1u);
  EXPECT_EQ(s.installed, 1u);
  // Reported again (a duplicate upcall): nothing new.
  add(5, 0x0a000002);
  manager_.processPending();
  EXPECT_EQ(log_.rules.size(), 1u);
  EXPECT_EQ(manager_.stats().installed, 1u);
}

TEST_F(OffloadManagerTest, RemovalClearsTheEntryFirstAndReusesMarksFifoAfterSync) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  add(1, 0x0a000002);
  add(2, 0x0a000003);
  manager_.processPending();
  ASSERT_EQ(log_.rules.size(), 2u);
  log_.sync_ok = false;  // the provider cannot yet prove no packet carries the old mark
  manager_.flowRemoved(0, 1, 0);
  manager_.processPending();
  MarkTarget t;
  EXPECT_FALSE(manager_.marks().lookup(0, &t));  // cleared: a late packet falls back
  EXPECT_EQ(log_.rules.size(), 1u);
  EXPECT_EQ(manager_.flowState(0, 1, 0), "");
  OffloadStatsView s = manager_.stats();
  EXPECT_EQ(s.offloaded, 1u);
  EXPECT_EQ(s.removed, 1u);
  // Marks 0..7 exist (2 x max_flows 4); 0 is in quarantine, 1 in use: the
  // next flows get 2, 3.
  add(3, 0x0a000004);
  manager_.processPending();
  EXPECT_TRUE(manager_.marks().lookup(2, &t));
  EXPECT_EQ(t.megaflow, 3u);
  EXPECT_EQ(grace_.requested, 0u);  // no grace period before the sync
  log_.sync_ok = true;
  manager_.processPending();  // synced: the quarantine waits for the PMDs
  EXPECT_EQ(grace_.requested, 1u);
  grace_.completed = grace_.requested;
  manager_.processPending();  // the quarantine goes to the back of the FIFO
  // Free marks in FIFO order now: 3, 4, 5, 6, 7, then 0 (freed last).
  const uint32_t expected[] = {3, 4, 5, 6, 7, 0};
  for (uint32_t j = 0; j < 6; ++j) {
    add(100 + j, 0x0a000100 + j);
    manager_.processPending();
    EXPECT_EQ(manager_.flowState(0, 100 + j, 0), "yes (mark " + std::to_string(expected[j]) + ")");
    manager_.flowRemoved(0, 100 + j, 0);
    manager_.processPending();
    grace_.completed = grace_.requested;
  }
}

class OffloadManagerTwoMarksTest : public OffloadManagerTest {
 protected:
  OffloadManagerTwoMarksTest() : OffloadManagerTest(1) {}  // marks 0 and 1
};

TEST_F(OffloadManagerTwoMarksTest, FreedMarkWaitsForAGracePeriodThatBeganAfterClearDestroyAndSync) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  add(1, 0x0a000002);
  manager_.processPending();
  ASSERT_EQ(manager_.flowState(0, 1, 0), "yes (mark 0)");
  const int syncs_before = log_.syncs_ok;
  bool checked = false;
  grace_.on_request = [&] {
    // The PMDs' quiescent points must come after all three: a packet marked
    // before the sync may still sit in a PMD's burst until then.
    MarkTarget t;
    EXPECT_FALSE(manager_.marks().lookup(0, &t));  // entry cleared
    EXPECT_TRUE(log_.rules.empty());               // rule destroyed
    EXPECT_GT(log_.syncs_ok, syncs_before);        // provider synced
    checked = true;
  };
  manager_.flowRemoved(0, 1, 0);
  manager_.processPending();
  EXPECT_TRUE(checked);
  EXPECT_EQ(grace_.requested, 1u);
  grace_.on_request = nullptr;

  // Mark 0 is synced but its grace period has not passed: the next flow
  // gets mark 1, and the one after that no mark at all.
  add(2, 0x0a000003);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 2, 0), "yes (mark 1)");
  manager_.flowRemoved(0, 2, 0);
  manager_.processPending();
  EXPECT_EQ(grace_.requested, 2u);
  add(3, 0x0a000004);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 3, 0), "no (no_free_mark)");
  MarkTarget t;
  EXPECT_FALSE(manager_.marks().lookup(0, &t));
  EXPECT_FALSE(manager_.marks().lookup(1, &t));
  // Rounds without requests do not free it either.
  manager_.processPending();
  add(4, 0x0a000005);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 4, 0), "no (no_free_mark)");

  // The first grace period passes: mark 0 only.
  grace_.completed = 1;
  manager_.processPending();
  add(5, 0x0a000006);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 5, 0), "yes (mark 0)");
  ASSERT_TRUE(manager_.marks().lookup(0, &t));
  EXPECT_EQ(t.megaflow, 5u);
  EXPECT_FALSE(manager_.marks().lookup(1, &t));
  // The second: mark 1, still ahead of mark 0 freed again after it (FIFO).
  grace_.completed = 2;
  manager_.flowRemoved(0, 5, 0);
  manager_.processPending();
  grace_.completed = grace_.requested;
  manager_.processPending();
  add(6, 0x0a000007);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 6, 0), "yes (mark 1)");
}

TEST_F(OffloadManagerTwoMarksTest, MarksFreedByADetachAlsoWaitForAGracePeriod) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  add(1, 0x0a000002);
  manager_.processPending();
  ASSERT_EQ(manager_.flowState(0, 1, 0), "yes (mark 0)");
  manager_.detachPort(kOffloadPort);
  EXPECT_EQ(grace_.requested, 1u);  // mark 0
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  add(2, 0x0a000003);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 2, 0), "yes (mark 1)");
  manager_.flowRemoved(0, 2, 0);
  manager_.processPending();
  add(3, 0x0a000004);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 3, 0), "no (no_free_mark)");
  grace_.completed = 1;
  manager_.processPending();
  add(4, 0x0a000005);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 4, 0), "yes (mark 0)");
}

// On the overlay's uplink only decapsulated megaflows are offered: a plain
// packet from the external network must never reach the marked-decap branch.
TEST_F(OffloadManagerTest, TheUplinkOffersTunnelledMegaflowsOnly) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1, /*tunnelled_only=*/true);
  flow::FlowKey from_outside = l3Key(7);
  from_outside.in_port = kOffloadPort;
  manager_.flowInstalled(0, 1, 0, from_outside, l3Mask(), output_);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 1, 0), "no (untunnelled)");
  EXPECT_EQ(manager_.stats().refused["untunnelled"], 1u);
  EXPECT_EQ(manager_.stats().offloaded, 0u);
}

TEST_F(OffloadManagerTest, RefusalsAreCountedByReason) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  flow::FlowKey vlan = l3Key(7);
  vlan.in_port = kOffloadPort;
  flow::FlowMask vm = l3Mask();
  vm.vlan_tci = 0xffff;
  manager_.flowInstalled(0, 1, 0, vlan, vm, output_);
  flow::FlowKey tunneled = l3Key(8);
  tunneled.in_port = kOffloadPort;
  tunneled.tun_vni = 100;  // decapsulated, even though the mask leaves the VNI out
  manager_.flowInstalled(0, 2, 0, tunneled, l3Mask(), output_);
  flow::MegaflowActions encap = output_;
  encap.kind = flow::MegaflowActions::Kind::kEncap;
  flow::FlowKey to_remote = l3Key(9);
  to_remote.in_port = kOffloadPort;
  manager_.flowInstalled(0, 4, 0, to_remote, l3Mask(), encap);
  log_.refuse_validate = true;
  add(3, 9);
  manager_.processPending();
  OffloadStatsView s = manager_.stats();
  EXPECT_EQ(s.refused["vlan"], 1u);
  EXPECT_EQ(s.refused["tunnel"], 1u);
  EXPECT_EQ(s.refused["action"], 1u);
  EXPECT_EQ(s.failures["validate_unimplemented"], 1u);
  EXPECT_EQ(s.offloaded, 0u);
  EXPECT_EQ(manager_.flowState(0, 1, 0), "no (vlan)");
  EXPECT_EQ(manager_.flowState(0, 3, 0), "failed (validate_unimplemented)");
  MarkTarget t;
  for (uint32_t m = 0; m < manager_.marks().capacity(); ++m) EXPECT_FALSE(manager_.marks().lookup(m, &t));
}

TEST_F(OffloadManagerTest, CreateIsRetriedThenCountedAsFailed) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  log_.fail_creates = 1;
  add(1, 0x0a000002);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 1, 0), "pending");
  manager_.processPending();  // the retry round
  EXPECT_EQ(manager_.flowState(0, 1, 0), "yes (mark 0)");
  EXPECT_EQ(manager_.stats().retries, 1u);
  log_.fail_creates = OffloadManager::kMaxAttempts;
  add(2, 0x0a000003);
  for (uint32_t i = 0; i < OffloadManager::kMaxAttempts; ++i) manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 2, 0), "failed (create_resource_exhausted)");
  OffloadStatsView s = manager_.stats();
  EXPECT_EQ(s.failures["create_resource_exhausted"], 1u);
  EXPECT_EQ(s.retries, 1u + OffloadManager::kMaxAttempts - 1);
  EXPECT_EQ(s.offloaded, 1u);
  MarkTarget t;
  EXPECT_FALSE(manager_.marks().lookup(1, &t));  // the failed flow's mark is cleared
}

TEST_F(OffloadManagerTest, CapsTheOffloadedCount) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  for (uint32_t i = 0; i < 6; ++i) add(i, 0x0a000002 + i);
  manager_.processPending();
  OffloadStatsView s = manager_.stats();
  EXPECT_EQ(s.offloaded, 4u);
  EXPECT_EQ(s.refused["cap"], 2u);
  EXPECT_EQ(manager_.flowState(0, 4, 0), "no (cap)");
  EXPECT_EQ(manager_.flowState(0, 5, 0), "no (cap)");
  // Room frees: the flows refused for the cap are offered again, oldest
  // first; one that went meanwhile is not.
  manager_.flowRemoved(0, 0, 0);
  manager_.processPending();
  EXPECT_EQ(manager_.flowState(0, 4, 0).rfind("yes (mark ", 0), 0u) << manager_.flowState(0, 4, 0);
  EXPECT_EQ(manager_.flowState(0, 5, 0), "no (cap)");
  manager_.flowRemoved(0, 5, 0);
  manager_.flowRemoved(0, 1, 0);
  manager_.processPending();
  s = manager_.stats();
  EXPECT_EQ(s.offloaded, 3u);  // 2, 3, 4
  EXPECT_EQ(s.cap_retries, 1u);
  EXPECT_EQ(s.refused["cap"], 2u);
  EXPECT_EQ(log_.rules.size(), 3u);
}

TEST_F(OffloadManagerTest, PortThatCannotMarkGetsNoRulesAndSaysWhy) {
  log_.capable = false;
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  add(1, 0x0a000002);
  manager_.processPending();
  EXPECT_TRUE(log_.rules.empty());
  OffloadStatsView s = manager_.stats();
  EXPECT_FALSE(s.capable);
  EXPECT_EQ(s.capability_reason, "fake says no");
  EXPECT_EQ(s.refused["port_not_capable"], 1u);
  EXPECT_EQ(manager_.flowState(0, 1, 0), "no (port_not_capable)");
}

TEST_F(OffloadManagerTest, DetachRemovesEverything) {
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  add(1, 0x0a000002);
  manager_.processPending();
  manager_.detachPort(kOffloadPort);
  EXPECT_FALSE(manager_.wantsInPort(kOffloadPort));
  EXPECT_EQ(manager_.marks().port(), MarkTable::kNoPort);
  MarkTarget t;
  EXPECT_FALSE(manager_.marks().lookup(0, &t));
  EXPECT_EQ(manager_.stats().offloaded, 0u);
  EXPECT_EQ(log_.calls.back(), "detach");
}

// Through FlowControl: only upcalls from the offload port are offered, and a
// megaflow revalidated away or expired takes its rule with it.
uint64_t g_tsc = 1;
uint64_t fakeTsc() { return g_tsc; }

TEST_F(OffloadManagerTest, FlowControlOffersUpcallsFromTheOffloadPortAndRemovesOnKill) {
  PmdContext pmd;
  pmd.megaflows = std::make_unique<flow::MegaflowTable>(16);
  UpcallQueue& queue = pmd.upcalls;
  FlowControl fc({&pmd}, 1'000'000, /*idle_ms=*/5, &fakeTsc);
  fc.setOffload(&manager_);
  manager_.attachPort(kOffloadPort, kDpdkPort, 1);
  const Ipv4Address pod = *Ipv4Address::parse("10.9.0.5");
  ForwardingTable fib({{pod, 4, *MacAddress::parse("02:00:00:00:00:05")}});
  RouteTables tables{&fib, Ipv4Address::parse("10.9.0.1")->networkOrder()};
  auto upcall = [&](uint16_t in_port) {
    flow::FlowKey k = l3Key(pod.networkOrder());
    k.in_port = in_port;
    k.parse_result = 0;
    ASSERT_TRUE(queue.push(k));
  };
  upcall(kOffloadPort + 1);  // another port: installed, not offered
  fc.handleUpcalls(tables);
  fc.commit();
  manager_.processPending();
  EXPECT_EQ(manager_.stats().installed, 0u);
  ASSERT_EQ(fc.list().size(), 1u);
  EXPECT_EQ(fc.list()[0].offload, "");
  upcall(kOffloadPort);  // the same megaflow, now needed by the offload port
  fc.handleUpcalls(tables);
  fc.commit();
  manager_.processPending();
  EXPECT_EQ(manager_.stats().installed, 1u);
  EXPECT_EQ(fc.list()[0].offload, "yes (mark 0)");
  // The pod goes: revalidation kills the megaflow and its rule goes.
  ForwardingTable empty;
  fc.revalidate({&empty, tables.gateway_ip_be});
  fc.commit();
  manager_.processPending();
  EXPECT_TRUE(log_.rules.empty());
  EXPECT_EQ(manager_.stats().removed, 1u);
  // Expiry too.
  upcall(kOffloadPort);
  fc.handleUpcalls(tables);
  fc.commit();
  manager_.processPending();
  EXPECT_EQ(log_.rules.size(), 1u);
  g_tsc += 1'000'000;  // 1 s at 1 MHz, well past 5 ms
  fc.expireIdle();
  fc.commit();
  manager_.processPending();
  EXPECT_TRUE(log_.rules.empty());
  EXPECT_EQ(manager_.stats().removed, 2u);
}

}  // namespace offload_manager_test
}  // namespace sluice::offload
