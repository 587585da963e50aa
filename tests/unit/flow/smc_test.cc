// SMC: verified hits, colliding signatures rejected by verification, dead
// megaflows, bucket eviction, switching off.
#include "dataplane/datapath/flow/smc.h"

#include <gtest/gtest.h>

#include "tests/unit/flow/flow_test_util.h"

namespace sluice::flow {
namespace {

using testing::udpKey;

FlowMask dstMask() {
  FlowMask m = zeroKey();
  m.ipv4_dst = 0xffffffffU;
  return m;
}

class SmcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto smc = Smc::create({1024, true});
    ASSERT_TRUE(smc.ok());
    smc_ = std::move(*smc);
  }
  MegaflowIndex lookup(const FlowKey& k) {
    uint16_t idx[1] = {0};
    MegaflowIndex out[1] = {kNoMegaflow};
    smc_->lookupBurst(&k, idx, 1, out, table_);
    return out[0];
  }
  MegaflowTable table_{64};
  std::unique_ptr<Smc> smc_;
};

TEST_F(SmcTest, RejectsBadSizes) {
  EXPECT_FALSE(Smc::create({4, true}).ok());
  EXPECT_FALSE(Smc::create({1000, true}).ok());
}

TEST_F(SmcTest, VerifiedHit) {
  const FlowKey a = udpKey(1, 2, 3, 4);
  const MegaflowIndex m = *table_.install(a, dstMask(), {});
  EXPECT_EQ(lookup(a), kNoMegaflow);
  smc_->insert(a, m);
  EXPECT_EQ(lookup(a), m);
  EXPECT_EQ(smc_->stats().hits, 1U);
}

TEST_F(SmcTest, CollidingSignatureIsRejectedByVerification) {
  const FlowKey a = udpKey(1, 2, 3, 4);
  FlowKey b = udpKey(1, 99, 3, 4);  // another destination: not in a's megaflow
  b.hash = a.hash;                  // same bucket, same signature
  const MegaflowIndex m = *table_.install(a, dstMask(), {});
  smc_->insert(a, m);
  EXPECT_EQ(lookup(b), kNoMegaflow);
  EXPECT_EQ(smc_->stats().false_matches, 1U);
  EXPECT_EQ(smc_->stats().hits, 0U);
}

TEST_F(SmcTest, CollidingSignatureInsideTheMegaflowIsACorrectHit) {
  const FlowKey a = udpKey(1, 2, 3, 4);
  FlowKey b = udpKey(7, 2, 9, 9);  // same destination: a's megaflow covers it
  b.hash = a.hash;
  const MegaflowIndex m = *table_.install(a, dstMask(), {});
  smc_->insert(a, m);
  EXPECT_EQ(lookup(b), m);
}

TEST_F(SmcTest, DeadMegaflowMisses) {
  const FlowKey a = udpKey(1, 2, 3, 4);
  const MegaflowIndex m = *table_.install(a, dstMask(), {});
  smc_->insert(a, m);
  table_.kill(m);
  EXPECT_EQ(lookup(a), kNoMegaflow);
  EXPECT_EQ(smc_->stats().dead, 1U);
}

TEST_F(SmcTest, FullBucketEvictsAndNewestWins) {
  const MegaflowIndex m = *table_.install(udpKey(0, 0, 0, 0), zeroKey(), {});
  FlowKey keys[kSmcWays + 1];
  for (uint32_t w = 0; w <= kSmcWays; ++w) {
    keys[w] = udpKey(w, w, w, w);
    keys[w].hash = (w + 1) << 16 | 5;  // one bucket, nine signatures
    smc_->insert(keys[w], m);
  }
  EXPECT_EQ(smc_->stats().evictions, 1U);
  EXPECT_EQ(lookup(keys[kSmcWays]), m);
  uint32_t found = 0;
  for (uint32_t w = 0; w < kSmcWays; ++w) found += lookup(keys[w]) == m;
  EXPECT_EQ(found, kSmcWays - 1);
}

TEST_F(SmcTest, SameSignatureOverwritesNotDuplicates) {
  const FlowKey a = udpKey(1, 2, 3, 4);
  const MegaflowIndex m1 = *table_.install(a, dstMask(), {});
  const MegaflowIndex m2 = *table_.install(udpKey(1, 3, 3, 4), dstMask(), {});
  FlowKey b = udpKey(1, 3, 3, 4);
  b.hash = a.hash;
  smc_->insert(a, m1);
  smc_->insert(b, m2);
  EXPECT_EQ(smc_->stats().evictions, 0U);
  EXPECT_EQ(lookup(b), m2);
  EXPECT_EQ(lookup(a), kNoMegaflow);  // a's way now names m2, which a fails
}

TEST_F(SmcTest, DisabledPassesEverythingThrough) {
  const FlowKey a = udpKey(1, 2, 3, 4);
  const MegaflowIndex m = *table_.install(a, dstMask(), {});
  smc_->insert(a, m);
  smc_->setEnabled(false);
  EXPECT_EQ(lookup(a), kNoMegaflow);
  EXPECT_EQ(smc_->stats().misses, 0U);  // not even counted: the tier was skipped
}

}  // namespace
}  // namespace sluice::flow
