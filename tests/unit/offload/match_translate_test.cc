// Megaflow match -> rte_flow pattern: what each field becomes, refusals by
// reason, and exactness: the software engine's compilation of every accepted
// pattern gives back exactly the megaflow's masked key and mask.
#include "dataplane/modules/offload/match_translate.h"

#include <gtest/gtest.h>

#include <random>

#include "dataplane/stand_ins/software_offload/software_provider.h"
#include "tests/unit/offload/offload_test_util.h"

namespace sluice::offload {
namespace {

using testing::l3Key;
using testing::l3Mask;

constexpr ProviderCaps kAll{true, true, true, true};
// Our VTEP 192.168.77.1 and a remote's 192.168.77.2, network order.
constexpr uint32_t kVtep = 0x014da8c0;
constexpr uint32_t kRemote = 0x024da8c0;
constexpr uint16_t kOffloadPort = 3;

TEST(MatchTranslateTest, RouterDecisionBecomesEthIpv4WithTtlRange) {
  MatchTranslation t = translateMatch(l3Key(0x0b00000a), l3Mask(), kOffloadPort, kAll);
  ASSERT_TRUE(t.ok) << t.refusal;
  EXPECT_EQ(t.pattern.describe(), "eth type=0x0800 untagged / ipv4 dst=10.0.0.11/255.255.255.255 ttl=2..255 / end");
  ASSERT_EQ(t.pattern.size(), 2u);
  const PatternItem& ip = t.pattern.at(1);
  EXPECT_TRUE(ip.has_last);
  EXPECT_EQ(ip.spec.ipv4.hdr.time_to_live, 2);
  EXPECT_EQ(ip.last.ipv4.hdr.time_to_live, 255);
  EXPECT_EQ(ip.mask.ipv4.hdr.time_to_live, 0xff);
  // The END-terminated view the provider passes to rte_flow.
  auto items = t.pattern.items();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].type, RTE_FLOW_ITEM_TYPE_ETH);
  EXPECT_EQ(items[1].last, &ip.last);
  EXPECT_EQ(items[2].type, RTE_FLOW_ITEM_TYPE_END);
}

TEST(MatchTranslateTest, TtlZeroAndOneAreExactValues) {
  MatchTranslation t = translateMatch(l3Key(0x0b00000a, flow::TtlClass::kOne), l3Mask(), kOffloadPort, kAll);
  ASSERT_TRUE(t.ok);
  EXPECT_FALSE(t.pattern.at(1).has_last);
  EXPECT_EQ(t.pattern.at(1).spec.ipv4.hdr.time_to_live, 1);
  // Without ranges, class 2+ cannot be expressed; 0 and 1 still can.
  EXPECT_EQ(translateMatch(l3Key(1), l3Mask(), kOffloadPort, {false, true, false}).refusal, kRefuseTtlRange);
  EXPECT_TRUE(translateMatch(l3Key(1, flow::TtlClass::kZero), l3Mask(), kOffloadPort, {false, true, false}).ok);
}

TEST(MatchTranslateTest, UdpPortsAndProtocol) {
  flow::FlowKey k = l3Key(0x0b00000a);
  flow::FlowMask m = l3Mask();
  k.ip_proto = 17;
  m.ip_proto = 0xff;
  k.tp_dst = 0x8913;  // 5001
  m.tp_dst = 0xffff;
  k.ipv4_src = 0x0000000a;
  m.ipv4_src = 0x0000ffff;  // 10.0.0.0/16
  MatchTranslation t = translateMatch(k, m, kOffloadPort, kAll);
  ASSERT_TRUE(t.ok) << t.refusal;
  EXPECT_EQ(t.pattern.describe(),
            "eth type=0x0800 untagged / ipv4 src=10.0.0.0/255.255.0.0 dst=10.0.0.11/255.255.255.255 proto=17 "
            "ttl=2..255 / udp dst=5001 / end");
}

TEST(MatchTranslateTest, RefusesWhatItCannotExpressExactly) {
  auto refusal = [](auto edit) {
    flow::FlowKey k = l3Key(0x0b00000a);
    flow::FlowMask m = l3Mask();
    edit(k, m);
    MatchTranslation t = translateMatch(k, m, kOffloadPort, kAll);
    EXPECT_FALSE(t.ok);
    return t.refusal;
  };
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.vlan_tci = 0x0a00; m.vlan_tci = 0xffff; }), kRefuseVlan);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.flags = flow::kFlagVlan; m.flags = flow::kFlagVlan; }), kRefuseVlan);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.in_port = 4; m.in_port = 0xffff; }), kRefuseInPort);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.in_port = kOffloadPort; m.in_port = 0x00ff; }), kRefuseInPort);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.tun_vni = 42; m.tun_vni = 0xffffff; }), kRefuseTunnel);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.ip_frag = 2; m.ip_frag = 0xff; }), kRefuseFrag);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.tp_dst = 80; m.tp_dst = 0xffff; }), kRefuseL4);  // no protocol
  EXPECT_EQ(refusal([](auto& k, auto& m) {
              k.ip_proto = 132;  // SCTP ports
              m.ip_proto = 0xff;
              k.tp_dst = 80;
              m.tp_dst = 0xffff;
            }),
            kRefuseL4);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.arp_op = 0x0100; m.arp_op = 0xffff; }), kRefuseArp);
  EXPECT_EQ(refusal([](auto& k, auto& m) { k.eth_type = 0x0608; (void)m; }), kRefuseNotIp);  // ARP
  EXPECT_EQ(refusal([](auto&, auto& m) { m.eth_type = 0; }), kRefuseNotIp);
  EXPECT_EQ(refusal([](auto&, auto& m) { m.ttl_class = 0x03; }), kRefuseTtl);
  EXPECT_EQ(refusal([](auto&, auto& m) { m.reserved = 1; }), kRefuseOther);
  EXPECT_EQ(refusal([](auto& k, auto& m) {
              k.ip_proto = 17;
              m.ip_proto = 0xff;
              k.icmp_type = 8;
              m.icmp_type = 0xff;
            }),
            kRefuseIcmp);
  // In-port of the offload port itself is implied by the rule's port.
  flow::FlowKey k = l3Key(1);
  flow::FlowMask m = l3Mask();
  k.in_port = kOffloadPort;
  m.in_port = 0xffff;
  EXPECT_TRUE(translateMatch(k, m, kOffloadPort, kAll).ok);
}

// A decap megaflow as flow_translate.cc makes it (in_port, tun_vni, tun_src,
// EtherType, TTL class, IPv4 destination; tun_dst left out of the mask but
// kept in the key by the offload manager).
void decapMatch(flow::FlowKey* k, flow::FlowMask* m) {
  *k = l3Key(0x0b00000a);
  *m = l3Mask();
  k->in_port = kOffloadPort;
  m->in_port = 0xffff;
  k->tun_src = kRemote;
  m->tun_src = 0xffffffffU;
  k->tun_vni = 42;
  m->tun_vni = 0xffffffffU;
  k->tun_dst = kVtep;
}

TEST(MatchTranslateTest, DecapMegaflowBecomesAVxlanPattern) {
  flow::FlowKey k;
  flow::FlowMask m;
  decapMatch(&k, &m);
  MatchTranslation t = translateMatch(k, m, kOffloadPort, kAll);
  ASSERT_TRUE(t.ok) << t.refusal;
  EXPECT_EQ(t.pattern.describe(),
            "eth type=0x0800 untagged / ipv4 src=192.168.77.2/255.255.255.255 dst=192.168.77.1/255.255.255.255 "
            "version_ihl=0x45 proto=17 frag=0/0x3fff / udp dst=4789 / vxlan flags=0x8 vni=42 / "
            "eth type=0x0800 untagged / ipv4 dst=10.0.0.11/255.255.255.255 ttl=2..255 / end");
  // Without the fragment bits the outer IPv4 item has none (the PMD guards).
  t = translateMatch(k, m, kOffloadPort, {true, true, true, false});
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(t.pattern.describe().find("frag="), std::string::npos) << t.pattern.describe();
  // A provider without tunnel patterns, or a key without our VTEP: refused.
  EXPECT_EQ(translateMatch(k, m, kOffloadPort, {true, true, false, true}).refusal, kRefuseTunnel);
  k.tun_dst = 0;
  EXPECT_EQ(translateMatch(k, m, kOffloadPort, kAll).refusal, kRefuseTunnel);
  // "Not tunnelled" (tun_vni masked, zero) is no tunnel: a plain pattern.
  k = l3Key(0x0b00000a);
  m = l3Mask();
  m.tun_vni = 0xffffffffU;
  t = translateMatch(k, m, kOffloadPort, {true, true, false, false});
  ASSERT_TRUE(t.ok) << t.refusal;
  EXPECT_EQ(t.pattern.describe(), "eth type=0x0800 untagged / ipv4 dst=10.0.0.11/255.255.255.255 ttl=2..255 / end");
  // Outer fields without a VNI cannot be expressed.
  m.tun_src = 0xffffffffU;
  k.tun_src = kRemote;
  EXPECT_EQ(translateMatch(k, m, kOffloadPort, kAll).refusal, kRefuseTunnel);
}

TEST(MatchTranslateTest, Ipv6NeedsTheProviderToSupportIt) {
  flow::FlowKey k = flow::zeroKey();
  flow::FlowMask m = flow::zeroKey();
  k.eth_type = 0xdd86;
  m.eth_type = 0xffff;
  k.ipv6_dst[0] = 0xfd;
  k.ipv6_dst[15] = 1;
  std::memset(m.ipv6_dst, 0xff, 16);
  EXPECT_EQ(translateMatch(k, m, kOffloadPort, {true, false, true, true}).refusal, kRefuseIpv6);
  MatchTranslation t = translateMatch(k, m, kOffloadPort, kAll);
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(t.pattern.describe(), "eth type=0x86dd untagged / ipv6 dst=fd00::1 / end");
}

// The PMD's decap branch pops and rewrites inner IPv4 only: a decapsulated
// IPv6 megaflow is not offered as a VXLAN rule, whatever the provider can do.
TEST(MatchTranslateTest, DecapsulatedIpv6IsNotOffloaded) {
  flow::FlowKey k;
  flow::FlowMask m;
  decapMatch(&k, &m);
  ASSERT_TRUE(translateMatch(k, m, kOffloadPort, kAll).ok) << "the same megaflow with inner IPv4";
  k.eth_type = 0xdd86;
  k.ipv4_dst = 0;
  m.ipv4_dst = 0;
  k.ipv6_dst[0] = 0xfd;
  k.ipv6_dst[15] = 5;
  std::memset(m.ipv6_dst, 0xff, 16);
  EXPECT_EQ(translateMatch(k, m, kOffloadPort, kAll).refusal, kRefuseTunnel);
}

// Exactness over random megaflow-shaped matches, plain and VXLAN decap:
// whatever is translated, compiled back by the software engine, is the same
// masked key and mask (plus "untagged" and the engine's layer word; for a
// tunnel, plus our VTEP and the outer facts the uplink stage requires), so a
// rule matches exactly the packets its megaflow does.
TEST(MatchTranslateTest, TranslationIsExactRoundTrip) {
  std::mt19937 rng(606);
  int accepted = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    flow::FlowKey k = flow::zeroKey();
    flow::FlowMask m = flow::zeroKey();
    const bool v6 = rng() % 4 == 0;
    k.eth_type = v6 ? 0xdd86 : 0x0008;
    m.eth_type = 0xffff;
    if (rng() % 2) {
      m.ttl_class = 0xff;
      k.ttl_class = static_cast<uint8_t>(1 + rng() % 3);
    }
    if (v6) {
      for (int b = 0; b < 16; ++b) {
        m.ipv6_dst[b] = rng() % 3 ? 0xff : 0;
        k.ipv6_dst[b] = static_cast<uint8_t>(rng()) & m.ipv6_dst[b];
      }
    } else {
      m.ipv4_dst = rng() % 2 ? 0xffffffffU : static_cast<uint32_t>(rng());
      k.ipv4_dst = static_cast<uint32_t>(rng()) & m.ipv4_dst;
      if (rng() % 2) {
        m.ipv4_src = static_cast<uint32_t>(rng());
        k.ipv4_src = static_cast<uint32_t>(rng()) & m.ipv4_src;
      }
      if (rng() % 4 == 0) {
        m.ip_tos = 0xfc;
        k.ip_tos = static_cast<uint8_t>(rng()) & 0xfc;
      }
    }
    switch (rng() % 4) {
      case 0:
        break;
      case 1:
        m.ip_proto = 0xff;
        k.ip_proto = rng() % 2 ? 6 : 17;
        m.tp_dst = static_cast<uint16_t>(rng());
        k.tp_dst = static_cast<uint16_t>(rng()) & m.tp_dst;
        m.tp_src = rng() % 2 ? 0xffff : 0;
        k.tp_src = static_cast<uint16_t>(rng()) & m.tp_src;
        break;
      case 2:
        if (!v6) {
          m.ip_proto = 0xff;
          k.ip_proto = 1;
          m.icmp_type = 0xff;
          k.icmp_type = static_cast<uint8_t>(rng());
        }
        break;
      default:
        m.ip_proto = static_cast<uint8_t>(rng());
        k.ip_proto = static_cast<uint8_t>(rng()) & m.ip_proto;
    }
    // Decapsulated IPv6 is refused (below), so tunnels carry IPv4 here.
    const bool tunnel = rng() % 3 == 0 && !v6;
    if (tunnel) {
      m.tun_vni = 0xffffffffU;
      k.tun_vni = 1 + rng() % 0xffffff;
      if (rng() % 4 != 0) {
        m.tun_src = 0xffffffffU;
        k.tun_src = static_cast<uint32_t>(rng());
      }
    }
    flow::FlowKey masked = flow::applyMask(k, m);
    if (tunnel) masked.tun_dst = kVtep;  // as the offload manager keeps it
    MatchTranslation t = translateMatch(masked, m, kOffloadPort, kAll);
    ASSERT_TRUE(t.ok) << "iteration " << iter << ": " << t.refusal;
    auto compiled = compileSoftwareRule(t.pattern);
    ASSERT_TRUE(compiled.ok()) << t.pattern.describe() << ": " << compiled.status();
    flow::FlowMask want_mask = m;
    flow::FlowKey want_key = flow::applyMask(k, m);
    want_mask.flags = flow::kFlagVlan;  // untagged only
    want_mask.pad2 = kSwLayerTunnel;
    if (tunnel) {
      want_mask.tun_vni = 0xffffff;  // 24 bits: the same match
      want_mask.tun_dst = 0xffffffffU;
      want_key.tun_dst = kVtep;
      want_mask.pad2 = want_key.pad2 = kSwLayerTunnel | kSwOuterIhl5 | kSwOuterNoFrag | kSwVxlanFlagI;
    }
    EXPECT_TRUE(flow::keysEqual(compiled->mask, want_mask)) << t.pattern.describe();
    EXPECT_TRUE(flow::keysEqual(compiled->key, want_key)) << t.pattern.describe();
    ++accepted;
  }
  EXPECT_EQ(accepted, 5000);
}

}  // namespace
}  // namespace sluice::offload
