// Tier policy: probes every allowed mode, holds the cheapest per packet,
// re-probes after the hold and follows changed costs.
#include "dataplane/datapath/flow/tier_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice::flow {
namespace {

// Runs `bursts` bursts of 32 packets, each costing cost[mode] per packet;
// returns the modes used, in order.
std::vector<uint8_t> drive(TierPolicy& p, const uint64_t (&cost)[4], int bursts) {
  std::vector<uint8_t> modes;
  for (int i = 0; i < bursts; ++i) {
    modes.push_back(p.mode());
    p.record(cost[p.mode()] * 32, 32);
  }
  return modes;
}

TEST(TierPolicyTest, ProbesAllModesThenHoldsTheCheapest) {
  TierPolicy p({true, 3, 5, 5}, kTierEmc | kTierSmc);
  const uint64_t cost[4] = {40, 20, 60, 80};  // EMC alone cheapest
  const auto modes = drive(p, cost, 12 + 5);
  const std::vector<uint8_t> want = {3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1};
  EXPECT_EQ(modes, want);
  EXPECT_EQ(p.probeRounds(), 1U);
  EXPECT_EQ(p.lastChoice(), kTierEmc);
}

TEST(TierPolicyTest, ReprobesAfterHoldAndFollowsTheTraffic) {
  TierPolicy p({true, 2, 4, 5}, kTierEmc | kTierSmc);
  uint64_t cost[4] = {40, 20, 60, 80};
  drive(p, cost, 8 + 4);
  EXPECT_EQ(p.probeRounds(), 1U);
  // Flows grew: the EMC now misses and costs more than the classifier alone.
  cost[kTierEmc] = 90;
  cost[kTierEmc | kTierSmc] = 120;
  const auto modes = drive(p, cost, 8 + 1);
  EXPECT_EQ(p.probeRounds(), 2U);
  EXPECT_EQ(modes.back(), 0);
  EXPECT_EQ(p.mode(), 0);
}

TEST(TierPolicyTest, ComparesPerPacketNotPerBurst) {
  TierPolicy p({true, 1, 100, 5}, kTierSmc);
  // SMC bursts are full (32 packets, 32*30 cycles); classifier-only bursts
  // are small (4 packets, 4*50 cycles): fewer cycles per burst, more per packet.
  p.record(32 * 30, 32);
  ASSERT_EQ(p.mode(), 0);
  p.record(4 * 50, 4);
  EXPECT_EQ(p.mode(), kTierSmc);
}

TEST(TierPolicyTest, OneInflatedBurstDoesNotDecide) {
  TierPolicy p({true, 8, 100, 5}, kTierEmc | kTierSmc);
  const uint64_t cost[4] = {50, 20, 60, 80};  // EMC alone cheapest
  for (int i = 0; i < 32; ++i) {
    // The EMC probe's first burst was preempted: 1000x its real cost.
    const bool preempted = p.mode() == kTierEmc && i == 8 * 2;
    p.record(cost[p.mode()] * 32 * (preempted ? 1000 : 1), 32);
  }
  EXPECT_EQ(p.probeRounds(), 1U);
  EXPECT_EQ(p.lastChoice(), kTierEmc);
}

TEST(TierPolicyTest, HysteresisKeepsANearlyEqualChoice) {
  TierPolicy p({true, 4, 4, 5}, kTierEmc | kTierSmc);
  uint64_t cost[4] = {50, 20, 60, 80};
  drive(p, cost, 16 + 4);
  ASSERT_EQ(p.lastChoice(), kTierEmc);
  cost[0] = 19;  // 5% cheaper than the EMC: not clearly cheaper
  drive(p, cost, 16 + 4);
  EXPECT_EQ(p.probeRounds(), 2U);
  EXPECT_EQ(p.lastChoice(), kTierEmc);
  cost[0] = 18;  // 10% cheaper: switch
  drive(p, cost, 16 + 4);
  EXPECT_EQ(p.lastChoice(), 0);
}

TEST(TierPolicyTest, OnlyAllowedTiersAreTried) {
  TierPolicy p({true, 1, 100, 5}, kTierSmc);  // EMC switched off by config
  const uint64_t cost[4] = {50, 1, 30, 1};
  const auto modes = drive(p, cost, 3);
  const std::vector<uint8_t> want = {kTierSmc, 0, kTierSmc};
  EXPECT_EQ(modes, want);
}

TEST(TierPolicyTest, DisabledKeepsEveryAllowedTier) {
  TierPolicy p({false, 1, 1, 5}, kTierEmc | kTierSmc);
  const uint64_t cost[4] = {1, 100, 100, 100};
  for (uint8_t m : drive(p, cost, 20)) EXPECT_EQ(m, kTierEmc | kTierSmc);
  EXPECT_EQ(p.probeRounds(), 0U);
}

TEST(TierPolicyTest, NothingToChooseWithoutCaches) {
  TierPolicy p({true, 1, 1, 5}, 0);
  const uint64_t cost[4] = {1, 1, 1, 1};
  for (uint8_t m : drive(p, cost, 5)) EXPECT_EQ(m, 0);
  EXPECT_EQ(p.probeRounds(), 0U);
}

}  // namespace
}  // namespace sluice::flow
