// Differential test of the whole cached lookup under churn: random
// megaflows are installed and killed between bursts (with classifier
// versions rebuilt and published, and megaflow slots recycled after a grace
// period so indices get reused), random repeated traffic flows through
// EMC -> SMC -> classifier with the tier policy switching modes, and every
// packet's result must equal a linear scan over the megaflows live at that
// moment.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "dataplane/datapath/flow/classifier.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "tests/unit/flow/flow_test_util.h"

namespace sluice::flow {
namespace {

using testing::be16;
using testing::be32;
using testing::udpKey;

struct LiveRule {
  FlowMask mask;
  FlowKey key;  // masked
  MegaflowIndex index;
};

bool overlaps(const FlowMask& ma, const FlowKey& ka, const FlowMask& mb, const FlowKey& kb) {
  for (uint32_t i = 0; i < kMatchWords; ++i) {
    if (((ka.words()[i] ^ kb.words()[i]) & ma.words()[i] & mb.words()[i]) != 0) return false;
  }
  return true;
}

// A pseudo-random cycle source so the tier policy keeps changing modes.
uint64_t g_fake_now = 0;
std::mt19937_64 g_fake_rng(3);
uint64_t randomCycles() {
  g_fake_now += g_fake_rng() % 1000;
  return g_fake_now;
}

// Packet keys from a small space, so flows repeat and the caches hit.
FlowKey packetKey(std::mt19937_64& rng) {
  return udpKey(0x0a000001 + rng() % 4, 0x0a000100 + rng() % 64, static_cast<uint16_t>(1000 + rng() % 8),
                static_cast<uint16_t>(rng() % 2 == 0 ? 53 : 80), static_cast<uint16_t>(1 + rng() % 2));
}

// Masks of the kinds an L3 decision produces.
std::vector<FlowMask> masks() {
  std::vector<FlowMask> m(5, zeroKey());
  for (FlowMask& x : m) x.eth_type = 0xffff;
  m[0].ipv4_dst = 0xffffffffU;                        // host route
  m[1].ipv4_dst = be32(0xfffffffc);                   // /30
  m[1].tp_dst = 0xffff;                               // ... per service port
  m[2].ipv4_dst = be32(0xfffffff0);                   // /28
  m[3].ipv4_src = 0xffffffffU;                        // per source and destination
  m[3].ipv4_dst = 0xffffffffU;
  m[4].ipv4_dst = be32(0xffffffe0);                   // /27 per in-port
  m[4].in_port = 0xffff;
  return m;
}

TEST(FlowDifferentialTest, CachedLookupEqualsLiveMegaflowsUnderChurn) {
  std::mt19937_64 rng(11);
  MegaflowTable table(512);
  FlowLookupConfig cfg;
  cfg.emc = {256, 2, 5};  // small and half-inserting: evictions and misses
  cfg.smc = {512, true};
  cfg.policy = {true, 3, 7};
  cfg.cycles = &randomCycles;
  auto fl = std::move(*FlowLookup::create(cfg, table));
  const std::vector<FlowMask> mask_pool = masks();

  std::vector<LiveRule> live;
  auto published = std::make_unique<Classifier>();
  fl->setClassifier(published.get());
  std::deque<std::vector<MegaflowIndex>> dying;  // killed, waiting for the grace period
  std::unique_ptr<Classifier> retired;            // previous version, freed a round later

  uint64_t hits = 0;
  uint64_t packets = 0;
  for (int round = 0; round < 300; ++round) {
    // --- control: build the next version -------------------------------
    auto next = published->clone();
    std::vector<MegaflowIndex> killed;
    for (size_t i = 0; i < live.size();) {
      if (rng() % 6 == 0) {
        ASSERT_TRUE(next->remove(live[i].mask, live[i].key).ok());
        table.kill(live[i].index);
        killed.push_back(live[i].index);
        live[i] = live.back();
        live.pop_back();
      } else {
        ++i;
      }
    }
    for (int a = 0; a < 12; ++a) {
      const FlowMask& m = mask_pool[rng() % mask_pool.size()];
      const FlowKey k = applyMask(packetKey(rng), m);
      bool clash = false;
      for (const LiveRule& r : live) clash = clash || overlaps(m, k, r.mask, r.key);
      if (clash) continue;
      auto idx = table.install(k, m, {});
      if (!idx.ok()) break;  // flow limit: fine, the packets will miss
      ASSERT_TRUE(next->insert(m, k, *idx).ok());
      live.push_back({m, k, *idx});
    }
    // Publish (the PMD picks it up at its quiescent point, between bursts);
    // the version before the current one has no reader any more.
    retired = std::move(published);
    published = std::move(next);
    fl->setClassifier(published.get());
    // Megaflows killed two rounds ago have passed a grace period: reuse.
    dying.push_back(killed);
    if (dying.size() > 2) {
      for (MegaflowIndex i : dying.front()) ASSERT_TRUE(table.recycle(i).ok());
      dying.pop_front();
    }

    // --- PMD: traffic ------------------------------------------------------
    for (int b = 0; b < 4; ++b) {
      const uint32_t n = 1 + rng() % kMaxBurst;
      FlowKey keys[kMaxBurst];
      for (uint32_t i = 0; i < n; ++i) keys[i] = packetKey(rng);
      MegaflowIndex out[kMaxBurst];
      uint16_t misses[kMaxBurst];
      const uint32_t m = fl->lookupBurst(keys, n, out, misses);
      uint32_t expected_misses = 0;
      for (uint32_t i = 0; i < n; ++i) {
        MegaflowIndex want = kNoMegaflow;
        int matches = 0;
        for (const LiveRule& r : live) {
          if (maskedEqual(keys[i], r.mask, r.key)) {
            want = r.index;
            ++matches;
          }
        }
        ASSERT_LE(matches, 1);
        ASSERT_EQ(out[i], want) << "round " << round << " packet " << i;
        if (want == kNoMegaflow) ++expected_misses;
        hits += want != kNoMegaflow;
      }
      ASSERT_EQ(m, expected_misses);
      packets += n;
    }
  }
  const TierCounters& c = fl->counters();
  EXPECT_EQ(c.total(), packets);
  EXPECT_EQ(c.emc_hits + c.smc_hits + c.megaflow_hits, hits);
  // The run exercised every tier and the lazy invalidation paths.
  EXPECT_GT(c.emc_hits, 0U);
  EXPECT_GT(c.smc_hits, 0U);
  EXPECT_GT(c.megaflow_hits, 0U);
  EXPECT_GT(fl->emc().stats().dead, 0U);
  EXPECT_GT(fl->policy().probeRounds(), 10U);
}

}  // namespace
}  // namespace sluice::flow
