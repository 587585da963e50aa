// The software flow engine: rules compiled from rte_flow patterns, applied to
// received packets exactly as a NIC's MARK (hash.fdir.hi + RTE_MBUF_F_RX_FDIR
// + RTE_MBUF_F_RX_FDIR_ID), only to untagged frames that parse completely;
// destroyed rules stop marking; patterns it cannot match are refused. No EAL:
// a probe with zero rx queues installs no callback, and the burst function is
// called directly with the published rule set.
#include "dataplane/stand_ins/software_offload/software_provider.h"

#include <gtest/gtest.h>

#include "dataplane/modules/offload/match_translate.h"
#include "tests/unit/flow/frame_builder.h"
#include "tests/unit/offload/offload_test_util.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice::offload {
namespace {

using flow::testing::be32;
using testing::FakeMbuf;
using testing::l3Key;
using testing::l3Mask;

constexpr uint16_t kPort = 9;
constexpr uint64_t kMarkFlags = RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;

FlowPattern l3Pattern(uint32_t dst_host_order) {
  MatchTranslation t = translateMatch(l3Key(be32(dst_host_order)), l3Mask(), 0, {true, true, true, true});
  EXPECT_TRUE(t.ok);
  return t.pattern;
}

class SoftwareEngineTest : public ::testing::Test {
 protected:
  SoftwareEngineTest() : provider_(64) {
    Capability c = provider_.probe(kPort, 0);
    EXPECT_TRUE(c.supported);
    EXPECT_EQ(c.reason, "software flow engine (rx callback), not hardware");
  }
  // Runs one burst of frames through the engine; returns their mbufs.
  std::vector<std::unique_ptr<FakeMbuf>> receive(const std::vector<flow::testing::Frame>& frames,
                                                 uint16_t* marked) {
    std::vector<std::vector<uint8_t>> bytes;
    for (const auto& f : frames) bytes.push_back(f.bytes());
    return receive(bytes, marked);
  }
  std::vector<std::unique_ptr<FakeMbuf>> receive(const std::vector<std::vector<uint8_t>>& frames,
                                                 uint16_t* marked) {
    std::vector<std::unique_ptr<FakeMbuf>> out;
    std::vector<rte_mbuf*> pkts;
    for (const auto& f : frames) {
      out.push_back(std::make_unique<FakeMbuf>(f));
      out.back()->mbuf()->hash.rss = 0x1234;
      pkts.push_back(out.back()->mbuf());
    }
    const SwRuleSet* set = provider_.shared().current.load();
    *marked = set == nullptr ? 0 : swEngineMarkBurst(*set, pkts.data(), static_cast<uint16_t>(pkts.size()));
    return out;
  }
  SoftwareProvider provider_;
};

TEST_F(SoftwareEngineTest, MarksMatchingPacketsAsANicWould) {
  auto r1 = provider_.create(kPort, l3Pattern(0x0a000002), 7);
  auto r2 = provider_.create(kPort, l3Pattern(0x0a000003), 8);
  ASSERT_TRUE(r1.ok() && r2.ok());
  ASSERT_TRUE(provider_.sync());
  EXPECT_EQ(provider_.rules(), 2u);

  using flow::testing::udp4;
  flow::testing::Frame tagged;
  tagged.eth(flow::testing::kMacA, flow::testing::kMacB, 0x8100).u16(5).u16(0x0800).ipv4(0x0a000001, 0x0a000002, 17, 8, 64).udp(1, 2);
  flow::testing::Frame truncated = udp4(0x0a000001, 0x0a000002, 1000, 2000);
  truncated.bytes().resize(30);
  uint16_t marked = 0;
  auto pkts = receive({udp4(0x0a000001, 0x0a000002, 1000, 2000),  // rule 1
                       udp4(0x0a000001, 0x0a000003, 1000, 2000),  // rule 2
                       udp4(0x0a000001, 0x0a000004, 1000, 2000),  // no rule
                       udp4(0x0a000001, 0x0a000002, 1000, 2000, /*ttl=*/1),  // TTL class 1: not 2..255
                       tagged, truncated},
                      &marked);
  EXPECT_EQ(marked, 2);
  EXPECT_EQ(pkts[0]->mbuf()->ol_flags & kMarkFlags, kMarkFlags);
  EXPECT_EQ(pkts[0]->mbuf()->hash.fdir.hi, 7u);
  EXPECT_EQ(pkts[0]->mbuf()->hash.rss, 0x1234u);  // the RSS hash is kept
  EXPECT_EQ(pkts[1]->mbuf()->hash.fdir.hi, 8u);
  for (size_t i = 2; i < pkts.size(); ++i) {
    EXPECT_EQ(pkts[i]->mbuf()->ol_flags & kMarkFlags, 0u) << i;
    EXPECT_EQ(pkts[i]->mbuf()->hash.fdir.hi, 0u) << i;
  }
}

TEST_F(SoftwareEngineTest, DestroyedRulesStopMarkingAndRecordsAreReused) {
  auto r1 = provider_.create(kPort, l3Pattern(0x0a000002), 7);
  ASSERT_TRUE(r1.ok());
  ASSERT_TRUE(provider_.sync());
  const SwRuleSet* before = provider_.shared().current.load();
  ASSERT_TRUE(provider_.destroy(kPort, *r1).ok());
  // Dead at once, even in the version the callback still reads.
  uint16_t marked = 0;
  std::vector<std::unique_ptr<FakeMbuf>> m;
  m.push_back(std::make_unique<FakeMbuf>(flow::testing::udp4(0x0a000001, 0x0a000002, 1, 2).bytes()));
  rte_mbuf* p = m.back()->mbuf();
  EXPECT_EQ(swEngineMarkBurst(*before, &p, 1), 0);
  ASSERT_TRUE(provider_.sync());
  receive({flow::testing::udp4(0x0a000001, 0x0a000002, 1, 2)}, &marked);
  EXPECT_EQ(marked, 0);
  EXPECT_EQ(provider_.rules(), 0u);
  EXPECT_EQ(provider_.destroy(kPort, *r1).code(), absl::StatusCode::kNotFound);
  // The same match again gets a rule and a new mark.
  ASSERT_TRUE(provider_.create(kPort, l3Pattern(0x0a000002), 9).ok());
  ASSERT_TRUE(provider_.sync());
  auto pkts = receive({flow::testing::udp4(0x0a000001, 0x0a000002, 1, 2)}, &marked);
  EXPECT_EQ(marked, 1);
  EXPECT_EQ(pkts[0]->mbuf()->hash.fdir.hi, 9u);
}

// A decap megaflow's rule (as the offload manager builds it: remote VTEP
// 192.168.77.2 -> ours 192.168.77.1, VNI 42, inner 10.0.0.11 with TTL >= 2)
// marks exactly the VXLAN frames the uplink stage would decapsulate into that
// megaflow, matching outer and inner headers on the raw frame; plain rules
// see only plain headers.
TEST_F(SoftwareEngineTest, MatchesVxlanTunnelPatternsOnOuterAndInnerHeaders) {
  flow::FlowKey k = l3Key(be32(0x0a00000b));
  flow::FlowMask m = l3Mask();
  k.tun_src = be32(0xc0a84d02);
  m.tun_src = 0xffffffffU;
  k.tun_vni = 42;
  m.tun_vni = 0xffffffffU;
  k.tun_dst = be32(0xc0a84d01);
  MatchTranslation t = translateMatch(k, m, 0, {true, true, true, true});
  ASSERT_TRUE(t.ok) << t.refusal;
  ASSERT_TRUE(provider_.create(kPort, t.pattern, 5).ok());
  ASSERT_TRUE(provider_.sync());
  EXPECT_EQ(provider_.shared().current.load()->tunnel_rules, 1u);

  auto inner = [](uint32_t dst, uint8_t ttl = 64) { return flow::testing::udp4(0x0a000001, dst, 7, 9, ttl).bytes(); };
  auto vx = [](const std::vector<uint8_t>& in, auto edit) {
    test::OuterSpec o;
    o.vni = 42;
    edit(o);
    return test::vxlanFrame(in, o);
  };
  auto same = [](test::OuterSpec&) {};
  const std::vector<std::pair<const char*, std::vector<uint8_t>>> cases = {
      {"match", vx(inner(0x0a00000b), same)},
      {"another remote VTEP", vx(inner(0x0a00000b), [](auto& o) { o.src = *Ipv4Address::parse("192.168.77.3"); })},
      {"not our VTEP", vx(inner(0x0a00000b), [](auto& o) { o.dst = *Ipv4Address::parse("192.168.77.9"); })},
      {"another VNI", vx(inner(0x0a00000b), [](auto& o) { o.vni = 43; })},
      {"VXLAN flags", vx(inner(0x0a00000b), [](auto& o) { o.flags = 0x0c; })},
      {"outer IPv4 options", vx(inner(0x0a00000b), [](auto& o) { o.version_ihl = 0x46; })},
      {"outer fragment", vx(inner(0x0a00000b), [](auto& o) { o.frag = 0x2000; })},
      {"UDP port 4790", vx(inner(0x0a00000b), [](auto& o) { o.udp_dst = 4790; })},
      {"inner destination", vx(inner(0x0a00000c), same)},
      {"inner TTL 1", vx(inner(0x0a00000b, 1), same)},
      {"the inner frame, plain", inner(0x0a00000b)},
  };
  std::vector<std::vector<uint8_t>> frames;
  for (const auto& c : cases) frames.push_back(c.second);
  uint16_t marked = 0;
  auto pkts = receive(frames, &marked);
  EXPECT_EQ(marked, 1);
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(pkts[i]->mbuf()->ol_flags, i == 0 ? kMarkFlags : 0u) << cases[i].first;
    if (i == 0) {
      EXPECT_EQ(pkts[i]->mbuf()->hash.fdir.hi, 5u);
    }
  }

  // A plain rule for 10.0.0.11 does not match the VXLAN frame's inner
  // headers; a plain rule for the outer destination matches its outer ones
  // when no tunnel rule takes it.
  ASSERT_TRUE(provider_.create(kPort, l3Pattern(0x0a00000b), 6).ok());
  ASSERT_TRUE(provider_.create(kPort, l3Pattern(0xc0a84d01), 7).ok());
  ASSERT_TRUE(provider_.sync());
  pkts = receive({vx(inner(0x0a00000b), same), vx(inner(0x0a00000c), same), inner(0x0a00000b)}, &marked);
  EXPECT_EQ(marked, 3);
  EXPECT_EQ(pkts[0]->mbuf()->hash.fdir.hi, 5u);  // the tunnel rule
  EXPECT_EQ(pkts[1]->mbuf()->hash.fdir.hi, 7u);  // outer headers, plain rule
  EXPECT_EQ(pkts[2]->mbuf()->hash.fdir.hi, 6u);  // plain frame, plain rule
}

TEST_F(SoftwareEngineTest, RefusesTunnelPatternsItCannotMatchExactly) {
  flow::FlowKey k = l3Key(be32(0x0a00000b));
  flow::FlowMask m = l3Mask();
  k.tun_vni = 42;
  m.tun_vni = 0xffffffffU;
  k.tun_dst = be32(0xc0a84d01);
  const FlowPattern good = translateMatch(k, m, 0, {true, true, true, true}).pattern;
  ASSERT_TRUE(provider_.validate(kPort, good, 1).ok()) << good.describe();
  auto refused = [&](auto edit) {
    FlowPattern p = good;
    edit(p);
    return provider_.validate(kPort, p, 1).code() == absl::StatusCode::kUnimplemented;
  };
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(0).mask.eth.hdr.dst_addr.addr_bytes[0] = 0xff; }));  // outer MAC
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(1).spec.ipv4.hdr.version_ihl = 0x46; }));
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(1).mask.ipv4.hdr.time_to_live = 0xff; }));  // outer TTL
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(1).mask.ipv4.hdr.fragment_offset = RTE_BE16(0x2000); }));
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(2).spec.udp.hdr.dst_port = RTE_BE16(4790); }));
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(2).mask.udp.hdr.src_port = 0xffff; }));
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(3).mask.vxlan.rsvd1 = 0xff; }));
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(3).spec.vxlan.flags = 0x0c; }));
  EXPECT_TRUE(refused([](FlowPattern& p) { p.at(4).type = RTE_FLOW_ITEM_TYPE_IPV4; }));  // no inner ETH
}

TEST_F(SoftwareEngineTest, RefusesPatternsItCannotMatchExactly) {
  FlowPattern vxlan;
  vxlan.add(RTE_FLOW_ITEM_TYPE_ETH);
  vxlan.add(RTE_FLOW_ITEM_TYPE_IPV4);
  vxlan.add(RTE_FLOW_ITEM_TYPE_UDP);
  vxlan.add(RTE_FLOW_ITEM_TYPE_VXLAN);
  EXPECT_EQ(provider_.validate(kPort, vxlan, 1).code(), absl::StatusCode::kUnimplemented);

  FlowPattern ttl_range = l3Pattern(0x0a000002);
  ttl_range.at(1).last.ipv4.hdr.time_to_live = 100;  // 2..100 is no TTL class
  EXPECT_EQ(provider_.validate(kPort, ttl_range, 1).code(), absl::StatusCode::kUnimplemented);

  FlowPattern frag = l3Pattern(0x0a000002);
  frag.at(1).mask.ipv4.hdr.fragment_offset = 0xffff;
  EXPECT_EQ(provider_.validate(kPort, frag, 1).code(), absl::StatusCode::kUnimplemented);

  EXPECT_EQ(provider_.validate(kPort, l3Pattern(1), 64).code(), absl::StatusCode::kInvalidArgument);  // mark range
  EXPECT_EQ(provider_.validate(kPort + 1, l3Pattern(1), 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(provider_.validate(kPort, l3Pattern(1), 63).ok());
}

}  // namespace
}  // namespace sluice::offload
