// The combined EMC -> SMC -> classifier lookup: each packet is counted at
// exactly one tier; first packets hit the classifier, later ones the caches;
// killing a megaflow stops its traffic at every tier at once.
#include "dataplane/datapath/flow/flow_lookup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/unit/flow/flow_test_util.h"

namespace sluice::flow {
namespace {

using testing::udpKey;

class FlowLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dst_mask_ = zeroKey();
    dst_mask_.ipv4_dst = 0xffffffffU;
    dst_mask_.eth_type = 0xffff;
  }
  // Tier policy off unless a cycle source is given (then probing 2 bursts
  // per mode, holding 10).
  std::unique_ptr<FlowLookup> make(uint32_t emc_inv_prob, bool smc = true,
                                   CycleFn cycles = nullptr) {
    FlowLookupConfig cfg;
    cfg.emc = {1024, emc_inv_prob, 1};
    cfg.smc = {4096, smc};
    cfg.policy = {cycles != nullptr, 2, 10};
    cfg.rank_interval_bursts = rank_interval_;
    cfg.smc_shadow_inv_prob = smc_shadow_;
    if (cycles != nullptr) cfg.cycles = cycles;
    auto fl = FlowLookup::create(cfg, table_);
    EXPECT_TRUE(fl.ok());
    (*fl)->setClassifier(&cls_);
    return std::move(*fl);
  }
  // One megaflow per destination 10.0.0.d, d < n.
  void installDestinations(uint32_t n) {
    for (uint32_t d = 0; d < n; ++d) {
      const FlowKey k = udpKey(1, 0x0a000000 + d, 1, 1);
      const MegaflowIndex m = *table_.install(k, dst_mask_, {});
      ASSERT_TRUE(cls_.insert(dst_mask_, k, m).ok());
      by_dst_.push_back(m);
    }
  }
  // A burst of n packets, packet i to destination i % dsts, distinct ports.
  std::vector<FlowKey> burst(uint32_t n, uint32_t dsts, uint16_t sport_base = 1000) {
    std::vector<FlowKey> keys;
    for (uint32_t i = 0; i < n; ++i) {
      keys.push_back(udpKey(1, 0x0a000000 + i % dsts, static_cast<uint16_t>(sport_base + i), 80));
    }
    return keys;
  }
  uint32_t run(FlowLookup& fl, const std::vector<FlowKey>& keys, std::vector<MegaflowIndex>& out) {
    out.assign(keys.size(), 0);
    uint16_t misses[kMaxBurst];
    return fl.lookupBurst(keys.data(), static_cast<uint32_t>(keys.size()), out.data(), misses);
  }

  uint32_t rank_interval_ = 0;
  uint32_t smc_shadow_ = 0;
  FlowMask dst_mask_;
  MegaflowTable table_{256};
  Classifier cls_;
  std::vector<MegaflowIndex> by_dst_;
};

TEST_F(FlowLookupTest, FirstPacketsHitClassifierLaterOnesTheEmc) {
  auto fl = make(1);
  installDestinations(8);
  const auto keys = burst(32, 8);
  std::vector<MegaflowIndex> out;
  EXPECT_EQ(run(*fl, keys, out), 0U);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], by_dst_[i % 8]);
  EXPECT_EQ(fl->counters().megaflow_hits, 32U);
  EXPECT_EQ(fl->counters().emc_hits, 0U);

  EXPECT_EQ(run(*fl, keys, out), 0U);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], by_dst_[i % 8]);
  EXPECT_EQ(fl->counters().emc_hits, 32U);
  EXPECT_EQ(fl->counters().megaflow_hits, 32U);
  EXPECT_EQ(fl->counters().total(), 64U);
}

TEST_F(FlowLookupTest, WithoutEmcLaterPacketsHitTheSmc) {
  auto fl = make(0);
  installDestinations(4);
  const auto keys = burst(16, 4);
  std::vector<MegaflowIndex> out;
  run(*fl, keys, out);
  run(*fl, keys, out);
  EXPECT_EQ(fl->counters().megaflow_hits, 16U);
  EXPECT_EQ(fl->counters().smc_hits, 16U);
  EXPECT_EQ(fl->counters().emc_hits, 0U);
  // A new flow to a known destination: SMC misses (new hash), classifier hits.
  run(*fl, burst(1, 4, 5000), out);
  EXPECT_EQ(fl->counters().megaflow_hits, 17U);
}

// The tiers switched while running (emc-insert-inv-prob, smc-enable are
// live): off, the tier resolves nothing; on again, even one that was off
// when the lookup was made (the tier policy starts over with it).
TEST_F(FlowLookupTest, CacheTiersSwitchWhileRunning) {
  auto fl = make(1);
  installDestinations(4);
  const auto keys = burst(16, 4);
  std::vector<MegaflowIndex> out;
  run(*fl, keys, out);
  run(*fl, keys, out);
  EXPECT_EQ(fl->counters().emc_hits, 16U);

  fl->setCacheTiers(0, false);  // EMC and SMC off: the classifier answers all
  run(*fl, keys, out);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(out[i], by_dst_[i % 4]);
  EXPECT_EQ(fl->counters().emc_hits, 16U);
  EXPECT_EQ(fl->counters().smc_hits, 0U);
  EXPECT_EQ(fl->counters().megaflow_hits, 32U);

  // The SMC on again: its entries from before were kept (each hit is
  // verified against its megaflow), so it answers at once.
  fl->setCacheTiers(0, true);
  run(*fl, keys, out);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(out[i], by_dst_[i % 4]);
  EXPECT_EQ(fl->counters().smc_hits, 16U);
  EXPECT_EQ(fl->counters().megaflow_hits, 32U);
  EXPECT_EQ(fl->counters().emc_hits, 16U);
}

TEST_F(FlowLookupTest, EmcSwitchedOnThatStartedOff) {
  auto fl = make(0, false);
  installDestinations(4);
  const auto keys = burst(16, 4);
  std::vector<MegaflowIndex> out;
  run(*fl, keys, out);
  fl->setCacheTiers(1, false);
  run(*fl, keys, out);  // classifier hits, now cached in the EMC
  run(*fl, keys, out);
  EXPECT_EQ(fl->counters().emc_hits, 16U);
  EXPECT_EQ(fl->counters().megaflow_hits, 32U);
}

TEST_F(FlowLookupTest, EveryPacketIsCountedAtExactlyOneTier) {
  auto fl = make(2);  // EMC inserts half the time: a mix of tiers
  installDestinations(16);
  std::vector<MegaflowIndex> out;
  uint64_t packets = 0;
  for (int round = 0; round < 20; ++round) {
    // 24 packets to 20 destinations (4 unknown -> misses) + 2 malformed.
    auto keys = burst(24, 20, static_cast<uint16_t>(100 + round % 3));
    keys[5].parse_result = static_cast<uint8_t>(ParseResult::kIpv4BadIhl);
    keys[17].parse_result = static_cast<uint8_t>(ParseResult::kUdpTruncated);
    uint16_t misses[kMaxBurst];
    out.assign(keys.size(), 0);
    const uint32_t m = fl->lookupBurst(keys.data(), 24, out.data(), misses);
    packets += 24;
    for (uint32_t j = 0; j < m; ++j) {
      EXPECT_GE(keys[misses[j]].ipv4_dst, testing::be32(0x0a000010)) << "only unknown destinations miss";
      if (j > 0) {
        EXPECT_LT(misses[j - 1], misses[j]);
      }
    }
    EXPECT_EQ(out[5], kNoMegaflow);
    EXPECT_EQ(out[17], kNoMegaflow);
    const TierCounters& c = fl->counters();
    EXPECT_EQ(c.total(), packets);
  }
  const TierCounters& c = fl->counters();
  EXPECT_EQ(c.malformed, 40U);
  EXPECT_GT(c.emc_hits, 0U);
  EXPECT_GT(c.smc_hits, 0U);
  EXPECT_GT(c.megaflow_hits, 0U);
  EXPECT_GT(c.misses, 0U);
  // Each tier's own counter agrees with the per-packet breakdown.
  EXPECT_EQ(fl->emc().stats().hits, c.emc_hits);
  EXPECT_EQ(fl->smc().stats().hits, c.smc_hits);
  EXPECT_EQ(cls_.stats().hits, c.megaflow_hits);
}

TEST_F(FlowLookupTest, KilledMegaflowStopsAtEveryTier) {
  auto fl = make(1);
  installDestinations(2);
  const auto keys = burst(8, 2);
  std::vector<MegaflowIndex> out;
  run(*fl, keys, out);  // classifier -> SMC + EMC filled
  run(*fl, keys, out);  // EMC hits
  ASSERT_EQ(fl->counters().emc_hits, 8U);
  table_.kill(by_dst_[0]);
  // Even before the classifier version without it is published, no packet
  // of destination 0 resolves to the dead megaflow, at any tier.
  EXPECT_EQ(run(*fl, keys, out), 4U);
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i], i % 2 == 0 ? kNoMegaflow : by_dst_[1]);
  }
  EXPECT_EQ(fl->emc().stats().dead, 4U);
}

// The interleaving of a PMD and control around one megaflow slot, step by
// step: the PMD finds megaflow A alive (a classifier or SMC hit), control
// kills A, the PMD then reads A's generation to cache the hit in the EMC
// (learn() reads it exactly as the tiers' refill does), control commits
// (the PMD passes its quiescent point), recycles the slot and installs an
// unrelated megaflow B into it. A's key must not resolve to B: the EMC does
// not compare the key with the megaflow's match, only the generation.
TEST_F(FlowLookupTest, EmcEntryCachedAcrossAKillNeverResolvesToTheSlotsNextMegaflow) {
  auto fl = make(1);
  FlowKey a = udpKey(1, 0x0a000001, 1000, 80);
  const MegaflowIndex slot = *table_.install(a, dst_mask_, {});
  table_.kill(slot);    // control, after the PMD's alive check
  fl->learn(a, slot);   // the PMD caches with the generation it reads now
  ASSERT_TRUE(table_.recycle(slot).ok());  // after the PMD's quiescent point
  MegaflowActions to_b;
  to_b.kind = MegaflowActions::Kind::kOutput;
  to_b.out_port = 7;
  const FlowKey b = udpKey(1, 0x0a000002, 1000, 80);
  ASSERT_EQ(*table_.install(b, dst_mask_, to_b), slot);  // the free list hands the slot out again
  ASSERT_FALSE(table_.at(slot).matches(a));

  std::vector<MegaflowIndex> out;
  EXPECT_EQ(run(*fl, {a}, out), 1U);  // a miss (upcall), not B's output
  EXPECT_EQ(out[0], kNoMegaflow);
  EXPECT_EQ(fl->counters().emc_hits, 0U);
  EXPECT_EQ(fl->counters().smc_hits, 0U);
}

TEST(MegaflowGenerationTest, EveryLifeOfASlotHasItsOwnGenerations) {
  MegaflowTable table(1);
  FlowMask mask = zeroKey();
  mask.ipv4_dst = 0xffffffffU;
  const FlowKey k = udpKey(1, 2, 3, 4);
  std::vector<uint32_t> seen;  // every value a PMD can read in each life
  for (int life = 0; life < 3; ++life) {
    const MegaflowIndex i = *table.install(k, mask, {});
    seen.push_back(table.at(i).generation.load());  // alive
    table.kill(i);
    seen.push_back(table.at(i).generation.load());  // dead, index still cached
    ASSERT_TRUE(table.recycle(i).ok());
  }
  std::vector<uint32_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a generation repeated";
}

TEST_F(FlowLookupTest, LearnAfterUpcallMakesTheNextPacketHitACache) {
  auto fl = make(1);
  const auto keys = burst(1, 1);
  std::vector<MegaflowIndex> out;
  EXPECT_EQ(run(*fl, keys, out), 1U);  // nothing installed: miss -> upcall
  const MegaflowIndex m = *table_.install(keys[0], dst_mask_, {});
  fl->learn(keys[0], m);
  EXPECT_EQ(run(*fl, keys, out), 0U);
  EXPECT_EQ(out[0], m);
  EXPECT_EQ(fl->counters().emc_hits, 1U);
  EXPECT_EQ(fl->counters().misses, 1U);
}

TEST_F(FlowLookupTest, SubtablesAreRerankedEveryInterval) {
  rank_interval_ = 4;
  auto fl = make(0, false);  // no caches: every packet searches the classifier
  installDestinations(2);    // subtable 0: dst_mask_
  FlowMask by_src = zeroKey();
  by_src.eth_type = 0xffff;
  by_src.ipv4_src = 0xffffffffU;
  const FlowKey from_src = udpKey(0x0b000001, 0x0c000001, 1, 1);
  ASSERT_TRUE(cls_.insert(by_src, from_src, *table_.install(from_src, by_src, {})).ok());
  ASSERT_TRUE(keysEqual(cls_.searchOrder()[0], dst_mask_));
  const std::vector<FlowKey> keys(32, from_src);
  std::vector<MegaflowIndex> out;
  for (int i = 0; i < 3; ++i) run(*fl, keys, out);
  EXPECT_TRUE(keysEqual(cls_.searchOrder()[0], dst_mask_));  // not yet
  EXPECT_EQ(cls_.stats().lookups_on_hits, 3U * 32 * 2);
  run(*fl, keys, out);  // 4th burst: re-ranked after it
  EXPECT_TRUE(keysEqual(cls_.searchOrder()[0], by_src));
  run(*fl, keys, out);
  EXPECT_EQ(cls_.stats().lookups_on_hits, 4U * 32 * 2 + 32);
  EXPECT_EQ(fl->counters().subtable_lookups, 4U * 32 * 2 + 32);
  EXPECT_EQ(fl->counters().megaflow_hits, 5U * 32);
}

// A cycle source whose burst cost depends on the mode the burst ran in:
// the second read of each burst adds kModeCost[mode].
FlowLookup* g_lookup = nullptr;
uint64_t g_now = 0;
uint64_t g_reads = 0;
uint64_t g_mode_cost[4] = {};
uint64_t fakeCycles() {
  if (g_reads++ % 2 == 1) g_now += g_mode_cost[g_lookup->policy().mode()];
  return g_now;
}

TEST_F(FlowLookupTest, PolicyRunsTheCheapestTiersAndCountsStayExact) {
  // Classifier alone cheapest, as with many flows over few megaflows.
  g_mode_cost[0] = 100;
  g_mode_cost[kTierEmc] = 300;
  g_mode_cost[kTierSmc] = 200;
  g_mode_cost[kTierEmc | kTierSmc] = 400;
  smc_shadow_ = 8;
  auto fl = make(1, true, &fakeCycles);
  g_lookup = fl.get();
  installDestinations(8);
  const auto keys = burst(32, 8);
  std::vector<MegaflowIndex> out;
  // Probe: 2 bursts in each of the 4 modes, richest first.
  const uint8_t expected_modes[8] = {3, 3, 2, 2, 1, 1, 0, 0};
  for (uint8_t m : expected_modes) {
    EXPECT_EQ(fl->policy().mode(), m);
    run(*fl, keys, out);
  }
  EXPECT_EQ(fl->policy().probeRounds(), 1U);
  EXPECT_EQ(fl->policy().mode(), 0);
  const TierCounters before = fl->counters();
  const uint64_t smc_inserts_before = fl->smc().stats().inserts;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(run(*fl, keys, out), 0U);
    for (uint32_t p = 0; p < 32; ++p) EXPECT_EQ(out[p], by_dst_[p % 8]);
  }
  // Held mode 0: every packet resolved by the classifier, caches untouched.
  EXPECT_EQ(fl->counters().megaflow_hits - before.megaflow_hits, 320U);
  EXPECT_EQ(fl->counters().emc_hits, before.emc_hits);
  EXPECT_EQ(fl->counters().smc_hits, before.smc_hits);
  EXPECT_EQ(fl->counters().total(), 18U * 32);
  // The SMC, off, is still refilled by about 1 in 8 classifier hits.
  const uint64_t shadow = fl->smc().stats().inserts - smc_inserts_before;
  EXPECT_GT(shadow, 10U);
  EXPECT_LT(shadow, 100U);
  // Next probe: now the EMC is cheapest (as with few flows) and wins; it was
  // kept warm while off, so it hits at once.
  g_mode_cost[kTierEmc] = 50;
  for (int i = 0; i < 8; ++i) run(*fl, keys, out);
  EXPECT_EQ(fl->policy().mode(), kTierEmc);
  const uint64_t emc_before = fl->counters().emc_hits;
  run(*fl, keys, out);
  EXPECT_EQ(fl->counters().emc_hits - emc_before, 32U);
  g_lookup = nullptr;
}

}  // namespace
}  // namespace sluice::flow
