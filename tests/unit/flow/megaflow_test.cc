// Megaflow records: the compact match used to verify SMC candidates agrees
// with the full masked compare for masks over any number of words; the
// table's install/kill/recycle protocol.
#include "dataplane/datapath/flow/megaflow.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/flow/flow_test_util.h"

namespace sluice::flow {
namespace {

TEST(MegaflowTest, CompactMatchEqualsFullMaskedCompare) {
  std::mt19937_64 rng(17);
  MegaflowTable table(4096);
  uint32_t matched = 0;
  for (int r = 0; r < 2000; ++r) {
    uint32_t words = 0;
    const uint32_t n = rng() % 9;  // 0..8 words: compact (<= 4) and full paths
    while (static_cast<uint32_t>(__builtin_popcount(words)) < n) words |= 1U << (rng() % kMatchWords);
    const FlowMask mask = testing::randomMask(rng, words);
    const FlowKey rule = testing::randomKey(rng);
    const MegaflowIndex i = *table.install(rule, mask, {});
    const Megaflow& m = table.at(i);
    for (int k = 0; k < 8; ++k) {
      FlowKey probe = testing::randomKey(rng);
      if (k % 2 == 0) {  // same masked bits as the rule, random elsewhere
        for (uint32_t w = 0; w < kMatchWords; ++w) {
          probe.words()[w] = (rule.words()[w] & mask.words()[w]) | (probe.words()[w] & ~mask.words()[w]);
        }
      }
      const bool full = maskedEqual(probe, m.mask, m.key);
      ASSERT_EQ(m.matches(probe), full) << "round " << r << " words " << n;
      matched += full;
    }
    table.kill(i);
    ASSERT_TRUE(table.recycle(i).ok());
  }
  EXPECT_GE(matched, 2000U * 4);
}

TEST(MegaflowTest, InstallKillRecycle) {
  MegaflowTable table(2);
  FlowMask m = zeroKey();
  m.ipv4_dst = 0xffffffffU;
  const FlowKey k = testing::udpKey(1, 2, 3, 4);
  const MegaflowIndex a = *table.install(k, m, {});
  const MegaflowIndex b = *table.install(k, m, {});
  EXPECT_NE(a, b);
  EXPECT_EQ(table.size(), 2U);
  EXPECT_EQ(table.install(k, m, {}).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(table.recycle(a).code(), absl::StatusCode::kFailedPrecondition);  // still alive
  const uint32_t gen = table.at(a).generation;
  table.kill(a);
  EXPECT_FALSE(table.isAlive(a));
  EXPECT_EQ(table.at(a).generation, gen + 1);
  EXPECT_EQ(table.size(), 1U);
  ASSERT_TRUE(table.recycle(a).ok());
  EXPECT_EQ(*table.install(k, m, {}), a);
  EXPECT_TRUE(table.isAlive(a));
  // The stored key is masked: fields outside the mask are zero.
  EXPECT_EQ(table.at(a).key.ipv4_src, 0U);
  EXPECT_EQ(table.at(a).key.ipv4_dst, k.ipv4_dst);
  uint32_t live = 0;
  table.forEachLive([&](MegaflowIndex, const Megaflow&) { ++live; });
  EXPECT_EQ(live, 2U);
}

}  // namespace
}  // namespace sluice::flow
