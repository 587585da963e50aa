// The mark branch's decision (mark_branch.h) on synthetic bursts: which
// marked packets resolve to their megaflow, and which fall back (counted as
// stale) - unknown or cleared mark, out-of-range mark, another PMD's mark,
// a dead megaflow, a megaflow of another generation (slot reused), an action
// the branch does not execute, a frame the L3 rewrite cannot take; unmarked
// packets stay in order.
#include "dataplane/datapath/mark_branch.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/flow/frame_builder.h"
#include "tests/unit/offload/offload_test_util.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice::offload {
namespace {

using testing::FakeMbuf;

constexpr uint32_t kPmd = 1;

flow::MegaflowActions output(uint8_t rewrite) {
  flow::MegaflowActions a;
  a.kind = flow::MegaflowActions::Kind::kOutput;
  a.rewrite_flags = rewrite;
  a.out_port = 2;
  return a;
}

class MarkBranchTest : public ::testing::Test {
 protected:
  MarkBranchTest() : table_(8), marks_(16) {}
  flow::MegaflowIndex install(const flow::MegaflowActions& a, uint32_t dst) {
    return *table_.install(testing::l3Key(dst), testing::l3Mask(), a);
  }
  // A mark made for megaflow i as it is now (its current life's generation).
  MarkTarget target(flow::MegaflowIndex i, uint32_t pmd = kPmd) {
    return {pmd, i, table_.at(i).generation.load()};
  }
  rte_mbuf* packet(uint32_t mark, bool marked = true, bool ipv4 = true) {
    flow::testing::Frame f = ipv4 ? flow::testing::udp4(1, 2, 3, 4) : flow::testing::arpRequest(1, 2);
    mbufs_.push_back(std::make_unique<FakeMbuf>(f.bytes()));
    rte_mbuf* m = mbufs_.back()->mbuf();
    if (marked) {
      m->ol_flags = RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
      m->hash.fdir.hi = mark;
    }
    return m;
  }
  flow::MegaflowTable table_;
  MarkTable marks_;
  std::vector<std::unique_ptr<FakeMbuf>> mbufs_;
};

TEST_F(MarkBranchTest, ResolvesOnlyLiveMegaflowsOfThisPmdAndGeneration) {
  const auto live = install(output(kRewriteL3), 1);
  const auto drop = install(dropAction(DropReason::kNoRoute), 2);
  const auto dead = install(output(0), 3);
  const auto reused = install(output(0), 4);
  const auto encap = install([] {
    flow::MegaflowActions a = output(0);
    a.kind = flow::MegaflowActions::Kind::kEncap;
    return a;
  }(), 5);
  marks_.set(0, target(live));
  marks_.set(1, target(drop));
  marks_.set(2, target(dead));
  marks_.set(3, target(reused));
  marks_.set(4, target(live, kPmd + 1));  // another PMD's megaflow
  marks_.set(5, target(encap));
  marks_.set(6, target(live));
  table_.kill(dead);
  table_.kill(reused);
  ASSERT_TRUE(table_.recycle(reused).ok());
  ASSERT_EQ(install(output(0), 9), reused);  // same slot, a later generation now

  rte_mbuf* pkts[] = {
      packet(0),                                  // 0 hit
      packet(0, /*marked=*/false),                // 1 unmarked
      packet(1),                                  // 2 hit (drop)
      packet(2),                                  // 3 dead
      packet(3),                                  // 4 slot reused: old generation
      packet(4),                                  // 5 another PMD
      packet(7),                                  // 6 never set
      packet(99),                                 // 7 out of range
      packet(5),                                  // 8 encap: not executed here
      packet(6, true, /*ipv4=*/false),            // 9 rewrite needs IPv4
      packet(0),                                  // 10 hit
  };
  rte_mbuf* original[11];
  std::copy(std::begin(pkts), std::end(pkts), original);
  rte_mbuf* hit_pkts[11];
  flow::Megaflow* hit_flows[11];
  const MarkSplit s = splitMarked(marks_, table_, kPmd, pkts, 11, hit_pkts, hit_flows);
  EXPECT_EQ(s.hits, 3);
  EXPECT_EQ(s.stale, 7);
  EXPECT_EQ(s.rest, 8);
  EXPECT_EQ(hit_pkts[0], original[0]);
  EXPECT_EQ(hit_flows[0], &table_.at(live));
  EXPECT_EQ(hit_pkts[1], original[2]);
  EXPECT_EQ(hit_flows[1], &table_.at(drop));
  EXPECT_EQ(hit_pkts[2], original[10]);
  // The rest, in their original order.
  const int rest[] = {1, 3, 4, 5, 6, 7, 8, 9};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(pkts[i], original[rest[i]]) << i;
}

TEST_F(MarkBranchTest, ClearedMarkFallsBack) {
  const auto live = install(output(kRewriteL3), 1);
  marks_.set(3, target(live));
  marks_.clear(3);
  rte_mbuf* pkts[] = {packet(3)};
  rte_mbuf* hit_pkts[1];
  flow::Megaflow* hit_flows[1];
  const MarkSplit s = splitMarked(marks_, table_, kPmd, pkts, 1, hit_pkts, hit_flows);
  EXPECT_EQ(s.hits, 0);
  EXPECT_EQ(s.stale, 1);
  EXPECT_EQ(s.rest, 1);
}

// The decap branch against the uplink stage's own classification
// (classifyUplinkFrame), over random frames whose rule-guaranteed fields
// (EtherType, our VTEP, UDP 4789, VXLAN flags, VNI) hold and whose other
// outer fields and lengths are hostile: IPv4 options, fragments, IPv4 and
// UDP lengths too long or too short, truncation, Ethernet padding, inner
// frames too short or not IPv4. A marked frame is decapsulated by the branch
// exactly when the uplink stage would decapsulate it (to an inner frame with
// an IPv4 header) and its outer header is the fixed 50 bytes, and then to the
// same inner bytes; every other frame falls back untouched, counted stale.
TEST_F(MarkBranchTest, DecapPopsExactlyWhatTheUplinkStageWouldAndNothingHostile) {
  const auto live = install(output(kRewriteL3), 1);
  marks_.set(0, target(live));
  vxlan::DecapConfig cfg;
  cfg.vtep_ip_be = flow::testing::be32(0xc0a84d01);
  cfg.vni = 42;
  std::mt19937 rng(0xdeca9);
  int popped = 0, fell_back = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const uint32_t inner_ip = 0x0a000000 | (rng() & 0xff);
    std::vector<uint8_t> inner =
        rng() % 8 == 0 ? flow::testing::arpRequest(1, 2).bytes() : flow::testing::udp4(0x0a000001, inner_ip, 7, 9).bytes();
    if (rng() % 8 == 0) inner.resize(rng() % inner.size());  // inner too short
    test::OuterSpec o;
    o.vni = 42;
    switch (rng() % 8) {
      case 0: o.version_ihl = 0x46; break;
      case 1: o.frag = static_cast<uint16_t>(rng() % 2 ? 0x2000 : 0x0001 + rng() % 0x1fff); break;
      default: break;
    }
    std::vector<uint8_t> f = test::vxlanFrame(inner, o);
    const size_t ip = 14, ihl = (o.version_ihl & 0x0f) * 4u, udp = ip + ihl;
    auto put16 = [&](size_t at, uint32_t v) {
      f[at] = static_cast<uint8_t>(v >> 8);
      f[at + 1] = static_cast<uint8_t>(v);
    };
    if (rng() % 6 == 0) put16(ip + 2, (f[ip + 2] << 8 | f[ip + 3]) + rng() % 40 - 20);  // IPv4 total length
    if (rng() % 6 == 0) put16(udp + 4, (f[udp + 4] << 8 | f[udp + 5]) + rng() % 40 - 20);  // UDP length
    if (rng() % 6 == 0) f.resize(f.size() + rng() % 30, 0xee);  // Ethernet padding
    if (rng() % 8 == 0) f.resize(rng() % f.size());             // truncated
    const std::vector<uint8_t> original = f;
    const vxlan::DecapInfo d = vxlan::classifyUplinkFrame(f.data(), static_cast<uint32_t>(f.size()), cfg);
    const bool stage_decaps = d.cls == vxlan::UplinkClass::kVxlan && d.inner_ofs == kDecapPop &&
                              d.inner_len >= 34 && (f[kDecapPop + 14] >> 4) == 4;

    mbufs_.push_back(std::make_unique<FakeMbuf>(f));
    rte_mbuf* m = mbufs_.back()->mbuf();
    m->ol_flags = RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
    m->hash.fdir.hi = 0;
    rte_mbuf* pkts[1] = {m};
    rte_mbuf* hit_pkts[1];
    flow::Megaflow* hit_flows[1];
    DecapHit hits[1];
    const MarkSplit s = splitMarkedDecap(marks_, table_, kPmd, pkts, 1, hit_pkts, hit_flows, hits);
    ASSERT_EQ(s.hits, stage_decaps ? 1 : 0) << "iteration " << iter;
    const auto* data = rte_pktmbuf_mtod(m, const uint8_t*);
    if (stage_decaps) {
      ++popped;
      EXPECT_EQ(hits[0].inner_len, d.inner_len);
      EXPECT_EQ(hits[0].outer_src_be, d.outer_src_be);
      ASSERT_EQ(rte_pktmbuf_pkt_len(m), d.inner_len);
      ASSERT_EQ(rte_pktmbuf_data_len(m), d.inner_len);
      EXPECT_TRUE(std::equal(data, data + d.inner_len, original.begin() + d.inner_ofs)) << "iteration " << iter;
    } else {
      ++fell_back;
      EXPECT_EQ(s.stale, 1);
      EXPECT_EQ(s.rest, 1);
      ASSERT_EQ(rte_pktmbuf_data_len(m), original.size());
      EXPECT_TRUE(std::equal(data, data + original.size(), original.begin()));
    }
    mbufs_.clear();
  }
  // Both sides were exercised in earnest.
  EXPECT_GT(popped, 5000);
  EXPECT_GT(fell_back, 5000);
}

TEST(MarkTableTest, EntriesRoundTripAllFields) {
  MarkTable t(4);
  EXPECT_EQ(t.port(), MarkTable::kNoPort);
  t.set(3, {MarkTable::kMaxPmd, MarkTable::kMaxMegaflowIndex, 0xfffffffeU});
  MarkTarget got;
  ASSERT_TRUE(t.lookup(3, &got));
  EXPECT_EQ(got.pmd, MarkTable::kMaxPmd);
  EXPECT_EQ(got.megaflow, MarkTable::kMaxMegaflowIndex);
  EXPECT_EQ(got.generation, 0xfffffffeU);
  t.set(0, {0, 0, 0});
  ASSERT_TRUE(t.lookup(0, &got));  // all-zero target is still a valid entry
  EXPECT_FALSE(t.lookup(1, &got));
  EXPECT_FALSE(t.lookup(4, &got));
}

}  // namespace
}  // namespace sluice::offload
