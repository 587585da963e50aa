// Megaflow classifier: differential test against a naive linear reference
// over random masks, rules and keys (including removals and re-ranking), the
// non-overlap invariant, subtable ranking and lookups-per-hit, versioning.
#include "dataplane/datapath/flow/classifier.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "tests/unit/flow/flow_test_util.h"

namespace sluice::flow {
namespace {

using testing::be32;
using testing::randomKey;
using testing::randomMask;
using testing::udpKey;

struct Rule {
  FlowMask mask;
  FlowKey key;  // masked
  MegaflowIndex megaflow;
};

// Two megaflows overlap when some key matches both: on every word, the bits
// both masks care about agree.
bool overlaps(const Rule& a, const Rule& b) {
  for (uint32_t i = 0; i < kMatchWords; ++i) {
    const uint64_t common = a.mask.words()[i] & b.mask.words()[i];
    if (((a.key.words()[i] ^ b.key.words()[i]) & common) != 0) return false;
  }
  return true;
}

// The reference: scan every rule; also counts how many match, which the
// invariant says is at most one.
MegaflowIndex referenceLookup(const std::vector<Rule>& rules, const FlowKey& k, int* matches) {
  MegaflowIndex found = kNoMegaflow;
  *matches = 0;
  for (const Rule& r : rules) {
    if (maskedEqual(k, r.mask, r.key)) {
      found = r.megaflow;
      ++*matches;
    }
  }
  return found;
}

// Runs keys through the classifier in bursts of random size and compares
// each result with the reference.
void expectSameAsReference(const Classifier& cls, const MegaflowTable& table,
                           const std::vector<Rule>& rules, const std::vector<FlowKey>& keys,
                           std::mt19937_64& rng, uint32_t* hits_out) {
  uint32_t hits = 0;
  for (size_t base = 0; base < keys.size();) {
    const uint32_t n = std::min<uint32_t>(1 + rng() % kMaxBurst, keys.size() - base);
    uint16_t idx[kMaxBurst];
    std::iota(idx, idx + n, uint16_t{0});
    MegaflowIndex out[kMaxBurst];
    std::fill(out, out + n, kNoMegaflow);
    const uint32_t misses = cls.lookupBurst(&keys[base], idx, n, out, table);
    uint32_t expected_misses = 0;
    for (uint32_t i = 0; i < n; ++i) {
      int matches = 0;
      const MegaflowIndex want = referenceLookup(rules, keys[base + i], &matches);
      ASSERT_LE(matches, 1) << "rules overlap: the generator broke the invariant";
      ASSERT_EQ(out[i], want) << "key " << base + i;
      if (want == kNoMegaflow) {
        ASSERT_LT(expected_misses, misses);
        EXPECT_EQ(idx[expected_misses], i) << "misses compacted in packet order";
        ++expected_misses;
      } else {
        ++hits;
      }
    }
    EXPECT_EQ(misses, expected_misses);
    base += n;
  }
  *hits_out = hits;
}

// Probe keys: most are a rule's key with random bits outside its mask (they
// must hit that rule), the rest random (almost surely misses).
std::vector<FlowKey> probeKeys(const std::vector<Rule>& rules, std::mt19937_64& rng, size_t n) {
  std::vector<FlowKey> keys;
  for (size_t i = 0; i < n; ++i) {
    FlowKey k = randomKey(rng);
    if (!rules.empty() && rng() % 4 != 0) {
      const Rule& r = rules[rng() % rules.size()];
      for (uint32_t w = 0; w < kMatchWords; ++w) {
        k.words()[w] = r.key.words()[w] | (k.words()[w] & ~r.mask.words()[w]);
      }
    }
    keys.push_back(k);
  }
  return keys;
}

TEST(ClassifierTest, DifferentialAgainstLinearReference) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    MegaflowTable table(4096);
    auto cls = std::make_unique<Classifier>(ClassifierConfig{16});
    // A pool of masks, each over 1-4 random match words.
    std::vector<FlowMask> masks;
    for (int i = 0; i < 10; ++i) {
      uint32_t words = 0;
      for (int w = 0, n = 1 + static_cast<int>(rng() % 4); w < n; ++w) words |= 1U << (rng() % kMatchWords);
      masks.push_back(randomMask(rng, words));
    }
    std::vector<Rule> rules;
    for (int attempt = 0; attempt < 3000 && rules.size() < 1500; ++attempt) {
      const FlowMask& m = masks[rng() % masks.size()];
      Rule r{m, applyMask(randomKey(rng), m), kNoMegaflow};
      bool clash = false;
      for (const Rule& o : rules) {
        if (overlaps(r, o)) {
          clash = true;
          break;
        }
      }
      if (clash) continue;  // the slow path never produces overlapping megaflows
      auto idx = table.install(r.key, r.mask, {});
      ASSERT_TRUE(idx.ok());
      r.megaflow = *idx;
      ASSERT_TRUE(cls->insert(r.mask, r.key, r.megaflow).ok());
      rules.push_back(r);
    }
    ASSERT_GT(rules.size(), 500U);
    EXPECT_EQ(cls->size(), rules.size());
    EXPECT_LE(cls->subtableCount(), masks.size());

    uint32_t hits = 0;
    auto keys = probeKeys(rules, rng, 4000);
    expectSameAsReference(*cls, table, rules, keys, rng, &hits);
    EXPECT_GT(hits, 2000U);

    // Re-rank (order changes, results must not).
    cls->rankSubtables();
    expectSameAsReference(*cls, table, rules, keys, rng, &hits);

    // Next version: remove a third of the rules, add a few, compare again.
    auto next = cls->clone();
    for (size_t i = 0; i < rules.size();) {
      if (rng() % 3 == 0) {
        ASSERT_TRUE(next->remove(rules[i].mask, rules[i].key).ok());
        rules[i] = rules.back();
        rules.pop_back();
      } else {
        ++i;
      }
    }
    EXPECT_EQ(next->size(), rules.size());
    keys = probeKeys(rules, rng, 4000);
    expectSameAsReference(*next, table, rules, keys, rng, &hits);
    EXPECT_GT(hits, 1000U);
  }
}

TEST(ClassifierTest, ResultDoesNotDependOnSubtableOrder) {
  // Three non-overlapping megaflows under three masks; whatever the ranking,
  // each key finds its own.
  MegaflowTable table(16);
  Classifier cls;
  FlowMask by_dst = zeroKey();
  by_dst.ipv4_dst = 0xffffffffU;
  FlowMask by_port = zeroKey();
  by_port.tp_dst = 0xffff;
  by_port.ipv4_dst = 0xffffffffU;
  FlowMask by_net = zeroKey();
  by_net.ipv4_dst = be32(0xffffff00);
  const FlowKey a = udpKey(1, 0x0a000001, 1, 80);
  const FlowKey b = udpKey(1, 0x0a000002, 1, 53);
  const FlowKey c = udpKey(1, 0x0a000105, 1, 1);
  const MegaflowIndex ma = *table.install(a, by_dst, {});
  const MegaflowIndex mb = *table.install(b, by_port, {});
  const MegaflowIndex mc = *table.install(c, by_net, {});
  ASSERT_TRUE(cls.insert(by_dst, a, ma).ok());
  ASSERT_TRUE(cls.insert(by_port, b, mb).ok());
  ASSERT_TRUE(cls.insert(by_net, c, mc).ok());
  const FlowKey keys[3] = {a, b, c};
  for (int round = 0; round < 3; ++round) {
    // Skew hits towards subtable `round`, then re-rank.
    for (int i = 0; i < 5; ++i) {
      uint16_t idx[1] = {0};
      MegaflowIndex out[1];
      cls.lookupBurst(&keys[round], idx, 1, out, table);
    }
    cls.rankSubtables();
    uint16_t idx[3] = {0, 1, 2};
    MegaflowIndex out[3];
    ASSERT_EQ(cls.lookupBurst(keys, idx, 3, out, table), 0U);
    EXPECT_EQ(out[0], ma);
    EXPECT_EQ(out[1], mb);
    EXPECT_EQ(out[2], mc);
  }
}

TEST(ClassifierTest, RankingPutsTheBusiestSubtableFirst) {
  MegaflowTable table(16);
  Classifier cls;
  FlowMask masks[3] = {zeroKey(), zeroKey(), zeroKey()};
  masks[0].ipv4_src = 0xffffffffU;
  masks[1].tp_src = 0xffff;
  masks[2].ipv4_dst = 0xffffffffU;
  const FlowKey k0 = udpKey(1, 1, 1, 1);
  const FlowKey k1 = udpKey(2, 2, 2, 2);
  const FlowKey k2 = udpKey(3, 3, 3, 3);
  ASSERT_TRUE(cls.insert(masks[0], k0, *table.install(k0, masks[0], {})).ok());
  ASSERT_TRUE(cls.insert(masks[1], k1, *table.install(k1, masks[1], {})).ok());
  ASSERT_TRUE(cls.insert(masks[2], k2, *table.install(k2, masks[2], {})).ok());
  ASSERT_EQ(cls.searchOrder().size(), 3U);
  EXPECT_TRUE(keysEqual(cls.searchOrder()[0], masks[0]));  // insertion order at first

  auto hit = [&](const FlowKey& k, int times) {
    for (int i = 0; i < times; ++i) {
      uint16_t idx[1] = {0};
      MegaflowIndex out[1];
      ASSERT_EQ(cls.lookupBurst(&k, idx, 1, out, table), 0U);
    }
  };
  // Before ranking, each hit on the last subtable costs three lookups.
  hit(k2, 10);
  EXPECT_EQ(cls.stats().hits, 10U);
  EXPECT_EQ(cls.stats().lookups_on_hits, 30U);
  hit(k1, 4);
  cls.rankSubtables();
  const auto order = cls.searchOrder();
  EXPECT_TRUE(keysEqual(order[0], masks[2]));
  EXPECT_TRUE(keysEqual(order[1], masks[1]));
  EXPECT_TRUE(keysEqual(order[2], masks[0]));
  // After ranking, the busiest subtable is searched first: one lookup per hit.
  hit(k2, 10);
  EXPECT_EQ(cls.stats().lookups_on_hits, 30U + 4 * 2 + 10);
  // A clone (next version) starts from the current interval's hit counts.
  auto next = cls.clone();
  EXPECT_TRUE(keysEqual(next->searchOrder()[0], masks[2]));
}

TEST(ClassifierTest, InsertRemoveErrorsAndEmptySubtables) {
  MegaflowTable table(8);
  Classifier cls(ClassifierConfig{2});
  FlowMask m1 = zeroKey();
  m1.ipv4_dst = 0xffffffffU;
  FlowMask m2 = zeroKey();
  m2.tp_dst = 0xffff;
  FlowMask m3 = zeroKey();
  m3.eth_type = 0xffff;
  const FlowKey k = udpKey(1, 2, 3, 4);
  ASSERT_TRUE(cls.insert(m1, k, 0).ok());
  EXPECT_EQ(cls.insert(m1, k, 1).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(cls.insert(m2, k, 2).ok());
  EXPECT_EQ(cls.insert(m3, k, 3).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(cls.subtableCount(), 2U);
  EXPECT_EQ(cls.remove(m3, k).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cls.remove(m1, udpKey(1, 9, 3, 4)).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(cls.remove(m1, k).ok());
  EXPECT_EQ(cls.subtableCount(), 1U);  // emptied subtable is gone
  EXPECT_EQ(cls.size(), 1U);
  ASSERT_TRUE(cls.insert(m3, k, 3).ok());  // and its room is reusable
}

TEST(ClassifierTest, DeadMegaflowIsAMiss) {
  MegaflowTable table(8);
  Classifier cls;
  FlowMask m = zeroKey();
  m.ipv4_dst = 0xffffffffU;
  const FlowKey k = udpKey(1, 2, 3, 4);
  const MegaflowIndex mf = *table.install(k, m, {});
  ASSERT_TRUE(cls.insert(m, k, mf).ok());
  table.kill(mf);
  uint16_t idx[1] = {0};
  MegaflowIndex out[1] = {kNoMegaflow};
  EXPECT_EQ(cls.lookupBurst(&k, idx, 1, out, table), 1U);
  EXPECT_EQ(out[0], kNoMegaflow);
}

TEST(ClassifierTest, CloneIsIndependentOfThePublishedVersion) {
  MegaflowTable table(8);
  Classifier cls;
  FlowMask m = zeroKey();
  m.ipv4_dst = 0xffffffffU;
  const FlowKey a = udpKey(1, 2, 3, 4);
  const FlowKey b = udpKey(1, 3, 3, 4);
  ASSERT_TRUE(cls.insert(m, a, *table.install(a, m, {})).ok());
  auto next = cls.clone();
  ASSERT_TRUE(next->insert(m, b, *table.install(b, m, {})).ok());
  ASSERT_TRUE(next->remove(m, a).ok());
  EXPECT_EQ(cls.size(), 1U);
  uint16_t idx[2] = {0, 1};
  MegaflowIndex out[2] = {kNoMegaflow, kNoMegaflow};
  const FlowKey keys[2] = {a, b};
  EXPECT_EQ(cls.lookupBurst(keys, idx, 2, out, table), 1U);
  EXPECT_NE(out[0], kNoMegaflow);
  EXPECT_EQ(out[1], kNoMegaflow);
}

TEST(ClassifierTest, CatchAllMaskMatchesEverything) {
  MegaflowTable table(8);
  Classifier cls;
  const FlowKey any = udpKey(1, 2, 3, 4);
  const MegaflowIndex m = *table.install(any, zeroKey(), {});
  ASSERT_TRUE(cls.insert(zeroKey(), any, m).ok());
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i) {
    const FlowKey k = randomKey(rng);
    uint16_t idx[1] = {0};
    MegaflowIndex out[1] = {kNoMegaflow};
    EXPECT_EQ(cls.lookupBurst(&k, idx, 1, out, table), 0U);
    EXPECT_EQ(out[0], m);
  }
}

}  // namespace
}  // namespace sluice::flow
