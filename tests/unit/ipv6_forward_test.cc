// IPv6 forwarding between the pods of one node: the /128 table, the
// megaflow decision (translateFlow), the uncached reference stage
// (l3ForwardBurst) and neighbor discovery answers, on synthetic frames
// without an EAL. Expected advertisements are written out byte by byte here
// and their checksums computed by the test's own RFC 1071 code and DPDK's.
#include <gtest/gtest.h>
#include <rte_ip.h>

#include <cstring>
#include <memory>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/forwarding_table_v6.h"
#include "dataplane/datapath/l3_forward.h"
#include "dataplane/datapath/nd/neighbor_discovery.h"
#include "tests/support/frames.h"

namespace sluice {
namespace {

using test::Frame;

const Ipv6Cidr kCidr = *Ipv6Cidr::parse("fd00:10:244:1::/64");
const Ipv6Address kGateway = *Ipv6Address::parse("fd00:10:244:1::1");
const MacAddress kGatewayMac = *MacAddress::parse("02:00:00:00:00:01");
const Ipv6Address kGatewayLinkLocal = *Ipv6Address::parse("fe80::ff:fe00:1");
const Ipv6Address kPodA = *Ipv6Address::parse("fd00:10:244:1::a");
const Ipv6Address kPodB = *Ipv6Address::parse("fd00:10:244:1::b");
const Ipv6Address kUnused = *Ipv6Address::parse("fd00:10:244:1::77");
const MacAddress kMacA = *MacAddress::parse("02:aa:00:00:00:0a");
const MacAddress kMacB = *MacAddress::parse("02:bb:00:00:00:0b");
constexpr uint16_t kPortA = 3, kPortB = 7;

Ipv6PodNet podNet() {
  Ipv6PodNet net;
  net.enabled = true;
  net.prefix_len = kCidr.prefix_len;
  std::memcpy(net.net, kCidr.network.bytes.data(), 16);
  std::memcpy(net.gateway, kGateway.bytes.data(), 16);
  std::memcpy(net.gateway_link_local, linkLocalFromMac(kGatewayMac).bytes.data(), 16);
  return net;
}

// An rte_mbuf around a heap buffer of the frame's length plus `tailroom`.
struct FakeMbuf {
  explicit FakeMbuf(const Frame& frame, size_t tailroom = 0)
      : storage(std::make_unique<rte_mbuf>()), mbuf(*storage), data(new uint8_t[frame.size() + tailroom]) {
    std::memset(&mbuf, 0, sizeof mbuf);
    std::memcpy(data.get(), frame.data(), frame.size());
    mbuf.buf_addr = data.get();
    mbuf.buf_len = static_cast<uint16_t>(frame.size() + tailroom);
    mbuf.data_len = static_cast<uint16_t>(frame.size());
    mbuf.pkt_len = static_cast<uint32_t>(frame.size());
    mbuf.nb_segs = 1;
  }
  Frame bytes() const { return Frame(data.get(), data.get() + mbuf.data_len); }
  std::unique_ptr<rte_mbuf> storage;
  rte_mbuf& mbuf;
  std::unique_ptr<uint8_t[]> data;
};

TEST(Ipv6AddressTest, LinkLocalFromMacIsTheModifiedEui64) {
  EXPECT_EQ(linkLocalFromMac(kGatewayMac), kGatewayLinkLocal);
  EXPECT_EQ(linkLocalFromMac(*MacAddress::parse("52:54:00:12:34:56")).toString(), "fe80::5054:ff:fe12:3456");
}

TEST(Ipv6ForwardingTableTest, FindsEveryPodAndNothingElse) {
  std::vector<Ipv6ForwardingTable::Entry> entries;
  for (uint64_t h = 2; h < 200; ++h) entries.push_back({kCidr.host(h), static_cast<uint16_t>(h % 32), kMacA});
  Ipv6ForwardingTable table(entries);
  EXPECT_EQ(table.size(), 198u);
  for (uint64_t h = 2; h < 200; ++h) {
    const PodRoute6* r = table.lookup(kCidr.host(h).bytes.data());
    ASSERT_NE(r, nullptr) << h;
    EXPECT_EQ(r->port_no, h % 32);
    EXPECT_EQ(std::memcmp(r->mac, kMacA.bytes.data(), 6), 0);
  }
  for (uint64_t h : {0u, 1u, 200u, 100000u})
    EXPECT_EQ(table.lookup(kCidr.host(h).bytes.data()), nullptr) << h;
  const Ipv6Address zero;
  EXPECT_EQ(table.lookup(zero.bytes.data()), nullptr) << ":: never matches an empty slot";
  EXPECT_EQ(Ipv6ForwardingTable().lookup(kPodA.bytes.data()), nullptr);
}

class Ipv6TranslateTest : public ::testing::Test {
 protected:
  Ipv6TranslateTest()
      : fib6_({{kPodA, kPortA, kMacA}, {kPodB, kPortB, kMacB}}), net_(podNet()) {}

  FlowTranslation translate(const Ipv6Address& dst, uint8_t hop_limit = 64) {
    test::Udp6FrameSpec s{kMacA, kGatewayMac, kPodA, dst};
    s.hop_limit = hop_limit;
    Frame f = test::udp6Frame(s);
    flow::FlowKey key;
    EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), kPortA, std::nullopt, key),
              flow::ParseResult::kOk);
    FlowTranslation t;
    translateFlow(RouteTables{&fib4_, 0, nullptr, 0, &fib6_, &net_}, key, t);
    return t;
  }
  static uint32_t prefixLen(const flow::FlowMask& m) {
    uint32_t n = 0;
    while (n < 128 && (m.ipv6_dst[n / 8] & (0x80 >> (n % 8))) != 0) ++n;
    return n;
  }
  // Only eth_type, ipv6_dst (a prefix) and perhaps ttl_class are masked.
  static void expectOnlyDecisionFields(const flow::FlowMask& m, bool ttl) {
    flow::FlowMask expected = flow::zeroKey();
    expected.eth_type = 0xffff;
    expected.ttl_class = ttl ? 0xff : 0;
    std::memcpy(expected.ipv6_dst, m.ipv6_dst, 16);
    EXPECT_TRUE(flow::keysEqual(m, expected));
  }

  ForwardingTable fib4_;
  Ipv6ForwardingTable fib6_;
  Ipv6PodNet net_;
};

TEST_F(Ipv6TranslateTest, ALocalPodIsOutputWithTheIpv6Rewrite) {
  FlowTranslation t = translate(kPodB);
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput);
  EXPECT_EQ(t.actions.out_port, kPortB);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3v6);
  EXPECT_EQ(prefixLen(t.mask), 128u);
  expectOnlyDecisionFields(t.mask, true);
}

TEST_F(Ipv6TranslateTest, HopLimitOneOrZeroIsTtlExceeded) {
  for (uint8_t hl : {0, 1}) {
    FlowTranslation t = translate(kPodB, hl);
    EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
    EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kTtlExceeded));
    expectOnlyDecisionFields(t.mask, true);
  }
  EXPECT_EQ(translate(kPodB, 2).actions.kind, flow::MegaflowActions::Kind::kOutput);
}

TEST_F(Ipv6TranslateTest, TheGatewayAddressesAreToGatewayWithoutReadingTheHopLimit) {
  for (const Ipv6Address& gw : {kGateway, kGatewayLinkLocal}) {
    FlowTranslation t = translate(gw, 1);
    EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway)) << gw.toString();
    EXPECT_EQ(t.actions.rewrite_flags, 0);
    EXPECT_EQ(prefixLen(t.mask), 128u);
    EXPECT_EQ(t.mask.ip_proto, 0xff) << "an ICMPv6 echo request would be answered";
    t.mask.ip_proto = 0;
    expectOnlyDecisionFields(t.mask, false);
  }
}

TEST_F(Ipv6TranslateTest, AnIcmpv6EchoRequestToEitherGatewayAddressIsAnswered) {
  for (const Ipv6Address& gw : {kGateway, kGatewayLinkLocal}) {
    for (auto [type, answered] : {std::pair{128, true}, {129, false}, {1, false}}) {
      test::Udp6FrameSpec s{kMacA, kGatewayMac, kPodA, gw};
      Frame f = test::udp6Frame(s);
      flow::FlowKey key;
      ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), kPortA, std::nullopt, key),
                flow::ParseResult::kOk);
      key.ip_proto = 58;
      key.tp_src = key.tp_dst = 0;
      key.icmp_type = static_cast<uint8_t>(type);
      FlowTranslation t;
      translateFlow(RouteTables{&fib4_, 0, nullptr, 0, &fib6_, &net_}, key, t);
      EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kToGateway));
      EXPECT_EQ(t.actions.rewrite_flags, answered ? kAnswerEcho : 0) << gw.toString() << " " << type;
      EXPECT_EQ(t.mask.icmp_type, 0xff);
      EXPECT_EQ(t.mask.ttl_class, 0) << "the hop limit is never read";
    }
  }
}

TEST_F(Ipv6TranslateTest, UnroutedDestinationsMatchTheWidestPodFreeWholeOctetPrefix) {
  // Far away: differs from every pod and gateway in the first octet.
  FlowTranslation far = translate(*Ipv6Address::parse("2001:db8::1"));
  EXPECT_EQ(far.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(prefixLen(far.mask), 8u);
  expectOnlyDecisionFields(far.mask, false);
  // An unused address of the pod CIDR: ::77 differs from ::a/::b/::1 in the
  // last octet's high bits, so all 128 bits.
  FlowTranslation near = translate(kUnused);
  EXPECT_EQ(near.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(prefixLen(near.mask), 128u);
  // Beside the CIDR: fd00:10:244:2:: differs from the pods at bit 63, so the
  // first 8 octets decide.
  FlowTranslation beside = translate(*Ipv6Address::parse("fd00:10:244:2::a"));
  EXPECT_EQ(prefixLen(beside.mask), 64u);
  // Every destination in the masked prefix is decided alike.
  FlowTranslation other = translate(*Ipv6Address::parse("2001:ffff::9"));
  EXPECT_TRUE(flow::keysEqual(other.mask, far.mask));
}

TEST_F(Ipv6TranslateTest, WithoutIpv6EverythingIsUnrouted) {
  Ipv6PodNet off;
  Ipv6ForwardingTable none;
  test::Udp6FrameSpec s{kMacA, kGatewayMac, kPodA, kGateway};
  Frame f = test::udp6Frame(s);
  flow::FlowKey key;
  ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), kPortA, std::nullopt, key),
            flow::ParseResult::kOk);
  FlowTranslation t;
  translateFlow(RouteTables{&fib4_, 0, nullptr, 0, &none, &off}, key, t);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  translateFlow(RouteTables{&fib4_, 0}, key, t);  // tables that know nothing of IPv6
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
}

TEST_F(Ipv6TranslateTest, IPv4DecisionsNeverReadTheIpv6Fields) {
  ForwardingTable fib4({{*Ipv4Address::parse("10.244.1.10"), kPortA, kMacA}});
  test::UdpFrameSpec s{kMacB, kGatewayMac, *Ipv4Address::parse("10.244.1.11"), *Ipv4Address::parse("10.244.1.10")};
  Frame f = test::udpFrame(s);
  flow::FlowKey key;
  ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), kPortB, std::nullopt, key),
            flow::ParseResult::kOk);
  FlowTranslation t;
  translateFlow(RouteTables{&fib4, Ipv4Address{0x0af40101}.networkOrder(), nullptr, 0, &fib6_, &net_}, key, t);
  EXPECT_EQ(t.actions.out_port, kPortA);
  EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3);
  const uint8_t zero[16] = {};
  EXPECT_EQ(std::memcmp(t.mask.ipv6_dst, zero, 16), 0);
}

// ---- The reference stage and neighbor discovery ----

class Ipv6StageTest : public ::testing::Test {
 protected:
  Ipv6StageTest() {
    snap_.fib = std::make_shared<ForwardingTable>();
    snap_.fib6 = std::make_shared<Ipv6ForwardingTable>(
        std::vector<Ipv6ForwardingTable::Entry>{{kPodA, kPortA, kMacA}, {kPodB, kPortB, kMacB}});
    snap_.v6 = podNet();
    std::memcpy(snap_.gateway_mac.addr_bytes, kGatewayMac.bytes.data(), 6);
  }
  struct Result {
    uint16_t next;
    DropReason reason;
    Frame out;
  };
  Result run(const Frame& in, uint16_t in_port = kPortA, size_t tailroom = 64) {
    FakeMbuf m(in, tailroom);
    rte_mbuf* pkts[1] = {&m.mbuf};
    uint16_t next[1];
    DropReason reason[1];
    l3ForwardBurst(snap_, in_port, pkts, 1, next, reason);
    EXPECT_EQ(m.mbuf.pkt_len, m.mbuf.data_len);
    return {next[0], reason[0], m.bytes()};
  }

  // The advertisement we expect, written out field by field.
  static Frame advertisement(const MacAddress& eth_dst, const Ipv6Address& target, const Ipv6Address& ip_dst,
                             uint8_t flags) {
    Frame f(86, 0);
    std::memcpy(&f[0], eth_dst.bytes.data(), 6);
    std::memcpy(&f[6], kGatewayMac.bytes.data(), 6);
    f[12] = 0x86;
    f[13] = 0xdd;
    f[14] = 0x60;
    f[19] = 32;   // payload length
    f[20] = 58;   // ICMPv6
    f[21] = 255;  // hop limit
    std::memcpy(&f[22], target.bytes.data(), 16);
    std::memcpy(&f[38], ip_dst.bytes.data(), 16);
    f[54] = 136;
    f[58] = flags;
    std::memcpy(&f[62], target.bytes.data(), 16);
    f[78] = 2;  // target link-layer address
    f[79] = 1;
    std::memcpy(&f[80], kGatewayMac.bytes.data(), 6);
    const uint16_t sum = test::icmpv6ChecksumOf(f, 32);
    f[56] = static_cast<uint8_t>(sum >> 8);
    f[57] = static_cast<uint8_t>(sum);
    return f;
  }
  // Why `f` (its ICMPv6 checksum first made right unless fix_checksum is
  // false) is dropped; a frame that is not dropped fails the test.
  DropReason droppedFor(Frame f, bool fix_checksum) {
    if (fix_checksum) {
      const size_t icmp_len = static_cast<size_t>(f[18] << 8 | f[19]);
      f[56] = f[57] = 0;
      const uint16_t sum = test::icmpv6ChecksumOf(f, icmp_len);
      f[56] = static_cast<uint8_t>(sum >> 8);
      f[57] = static_cast<uint8_t>(sum);
    }
    Result r = run(f);
    EXPECT_EQ(r.next, kNextDrop);
    return r.reason;
  }
  // The checks every neighbor discovery message gets (RFC 4861): `good`
  // (answered) made wrong one way at a time, its one option's length byte at
  // option_len_at.
  void expectMalformedWhereEveryNdMessageIs(const Frame& good, size_t option_len_at) {
    Frame f = good;
    f[21] = 254;  // routed once: not from the link
    EXPECT_EQ(droppedFor(f, true), DropReason::kNdMalformed);
    f = good;
    f[57] ^= 1;
    EXPECT_EQ(droppedFor(f, false), DropReason::kNdMalformed) << "bad checksum";
    f = good;
    f[55] = 1;  // code
    EXPECT_EQ(droppedFor(f, true), DropReason::kNdMalformed);
    f = good;
    f[option_len_at] = 0;  // option length 0
    EXPECT_EQ(droppedFor(f, true), DropReason::kNdMalformed);
    f = good;
    f[option_len_at] = 2;  // option runs past the message
    EXPECT_EQ(droppedFor(f, true), DropReason::kNdMalformed);
  }
  static void expectChecksumValid(const Frame& f) {
    ASSERT_GE(f.size(), 54u);
    const auto* ip = reinterpret_cast<const rte_ipv6_hdr*>(&f[14]);
    EXPECT_EQ(rte_ipv6_udptcp_cksum_verify(ip, &f[54]), 0) << "DPDK's own checksum agrees";
  }

  PmdSnapshot snap_;
};

TEST_F(Ipv6StageTest, ForwardsToTheLocalPodWithHopLimitDecrementedAndMacsRewritten) {
  test::Udp6FrameSpec s{kMacA, kGatewayMac, kPodA, kPodB};
  s.sequence = 99;
  const Frame in = test::udp6Frame(s);
  Result r = run(in);
  ASSERT_EQ(r.next, kPortB);
  Frame expected = in;
  std::memcpy(&expected[0], kMacB.bytes.data(), 6);
  std::memcpy(&expected[6], kGatewayMac.bytes.data(), 6);
  expected[21] = 63;
  EXPECT_EQ(r.out, expected);
  EXPECT_EQ(test::udp6Sequence(r.out), 99u);
  expectChecksumValid(r.out);  // the UDP checksum does not cover the hop limit
}

TEST_F(Ipv6StageTest, DropsByNamedReasons) {
  auto reasonFor = [&](const Ipv6Address& dst, uint8_t hl) {
    test::Udp6FrameSpec s{kMacA, kGatewayMac, kPodA, dst};
    s.hop_limit = hl;
    Result r = run(test::udp6Frame(s));
    EXPECT_EQ(r.next, kNextDrop);
    return r.reason;
  };
  EXPECT_EQ(reasonFor(kPodB, 1), DropReason::kTtlExceeded);
  EXPECT_EQ(reasonFor(kPodB, 0), DropReason::kTtlExceeded);
  EXPECT_EQ(reasonFor(kGateway, 64), DropReason::kToGateway);
  EXPECT_EQ(reasonFor(kUnused, 64), DropReason::kNoRoute);
  Frame shortFrame = test::udp6Frame({kMacA, kGatewayMac, kPodA, kPodB});
  shortFrame.resize(50);
  EXPECT_EQ(run(shortFrame).reason, DropReason::kTruncated);
}

TEST_F(Ipv6StageTest, ASolicitationForTheGatewayIsAnsweredWithExactBytes) {
  Result r = run(test::neighborSolicitation(kMacA, kPodA, kGateway));
  ASSERT_EQ(r.next, kPortA) << kDropReasonNames[static_cast<size_t>(r.reason)];
  // Router, Solicited, Override.
  EXPECT_EQ(r.out, advertisement(kMacA, kGateway, kPodA, 0xe0));
  expectChecksumValid(r.out);
}

TEST_F(Ipv6StageTest, TheGatewayLinkLocalAddressIsAnsweredToo) {
  const Ipv6Address pod_ll = linkLocalFromMac(kMacA);
  Result r = run(test::neighborSolicitation(kMacA, pod_ll, kGatewayLinkLocal));
  ASSERT_EQ(r.next, kPortA);
  EXPECT_EQ(r.out, advertisement(kMacA, kGatewayLinkLocal, pod_ll, 0xe0));
}

TEST_F(Ipv6StageTest, AnotherPodCidrAddressIsProxiedWithoutTheRouterFlag) {
  // Also one that no pod holds (as proxy ARP answers the whole CIDR), and a
  // unicast solicitation (neighbor unreachability detection, no option).
  for (const Ipv6Address& target : {kPodB, kUnused}) {
    Result r = run(test::neighborSolicitation(kMacA, kPodA, target));
    ASSERT_EQ(r.next, kPortA) << target.toString();
    EXPECT_EQ(r.out, advertisement(kMacA, target, kPodA, 0x60));  // Solicited, Override
  }
  Result unicast = run(test::neighborSolicitation(kMacA, kPodA, kPodB, false, &kPodB), kPortA, 8);
  ASSERT_EQ(unicast.next, kPortA) << "grown by 8 bytes into the tailroom";
  EXPECT_EQ(unicast.out, advertisement(kMacA, kPodB, kPodA, 0x60));
  Result no_room = run(test::neighborSolicitation(kMacA, kPodA, kPodB, false, &kPodB), kPortA, 0);
  EXPECT_EQ(no_room.next, kNextDrop);
}

TEST_F(Ipv6StageTest, DadProbesAreAnsweredOnlyForTheGateway) {
  const Ipv6Address unspecified;
  // A pod probing its own tentative address: answering would fail its DAD.
  for (const Ipv6Address& target : {kPodA, kPodB, kUnused}) {
    Result r = run(test::neighborSolicitation(kMacA, unspecified, target));
    EXPECT_EQ(r.next, kNextDrop) << target.toString();
    EXPECT_EQ(r.reason, DropReason::kNdNotAnswered);
  }
  // A pod that took the gateway's address is told it is taken: to all nodes,
  // Solicited clear (RFC 4861 7.2.4).
  Result r = run(test::neighborSolicitation(kMacA, unspecified, kGateway));
  ASSERT_EQ(r.next, kPortA);
  EXPECT_EQ(r.out, advertisement(*MacAddress::parse("33:33:00:00:00:01"), kGateway,
                                 *Ipv6Address::parse("ff02::1"), 0xa0));  // Router, Override
  expectChecksumValid(r.out);
}

TEST_F(Ipv6StageTest, ACheckedPodSolicitsAndSendsOnlyFromItsOwnAddresses) {
  auto sources = std::make_shared<SourceTable>();
  PortSources& a = sources->ports[kPortA];
  a.checked = true;
  std::memcpy(a.mac, kMacA.bytes.data(), 6);
  a.has_ipv6 = true;
  std::memcpy(a.ipv6, kPodA.bytes.data(), 16);
  std::memcpy(a.link_local, linkLocalFromMac(kMacA).bytes.data(), 16);
  snap_.sources = sources;
  // Own global, own link-local: answered; the DAD probe (from ::) is not
  // spoofing (and is not answered, as without the check).
  EXPECT_EQ(run(test::neighborSolicitation(kMacA, kPodA, kGateway)).next, kPortA);
  EXPECT_EQ(run(test::neighborSolicitation(kMacA, linkLocalFromMac(kMacA), kGatewayLinkLocal)).next, kPortA);
  EXPECT_EQ(run(test::neighborSolicitation(kMacA, Ipv6Address{}, kPodA)).reason, DropReason::kNdNotAnswered);
  // Another pod's address, another link-local address, another MAC.
  Result r = run(test::neighborSolicitation(kMacA, kPodB, kGateway));
  EXPECT_EQ(r.next, kNextDrop);
  EXPECT_EQ(r.reason, DropReason::kSpoofedSourceIp);
  EXPECT_EQ(run(test::neighborSolicitation(kMacA, linkLocalFromMac(kMacB), kGateway)).reason,
            DropReason::kSpoofedSourceIp);
  EXPECT_EQ(run(test::neighborSolicitation(kMacB, kPodA, kGateway)).reason, DropReason::kSpoofedSourceMac);
  // UDP: own sources forwarded, others dropped by reason.
  EXPECT_EQ(run(test::udp6Frame({kMacA, kGatewayMac, kPodA, kPodB})).next, kPortB);
  EXPECT_EQ(run(test::udp6Frame({kMacA, kGatewayMac, linkLocalFromMac(kMacA), kPodB})).next, kPortB);
  EXPECT_EQ(run(test::udp6Frame({kMacA, kGatewayMac, kUnused, kPodB})).reason, DropReason::kSpoofedSourceIp);
  EXPECT_EQ(run(test::udp6Frame({kMacA, kGatewayMac, Ipv6Address{}, kPodB})).reason, DropReason::kSpoofedSourceIp);
  EXPECT_EQ(run(test::udp6Frame({kMacB, kGatewayMac, kPodA, kPodB})).reason, DropReason::kSpoofedSourceMac);
  // Port B is not checked.
  EXPECT_EQ(run(test::udp6Frame({kMacA, kGatewayMac, kUnused, kPodA}), kPortB).next, kPortA);
}

TEST_F(Ipv6StageTest, SolicitationsNotOursAreNotAnswered) {
  auto reasonOf = [&](const Frame& f) {
    Result r = run(f);
    EXPECT_EQ(r.next, kNextDrop);
    return r.reason;
  };
  EXPECT_EQ(reasonOf(test::neighborSolicitation(kMacA, kPodA, kPodA)), DropReason::kNdNotAnswered) << "its own";
  EXPECT_EQ(reasonOf(test::neighborSolicitation(kMacA, kPodA, *Ipv6Address::parse("fd00:99::5"))),
            DropReason::kNdNotAnswered);
  snap_.v6 = Ipv6PodNet{};  // a node without IPv6
  EXPECT_EQ(reasonOf(test::neighborSolicitation(kMacA, kPodA, kGateway)), DropReason::kNdNotAnswered);
}

TEST_F(Ipv6StageTest, MalformedSolicitationsAreDroppedByReason) {
  const Frame good = test::neighborSolicitation(kMacA, kPodA, kGateway);
  auto reasonOf = [&](const Frame& f, bool fix_checksum = true) { return droppedFor(f, fix_checksum); };
  expectMalformedWhereEveryNdMessageIs(good, 79);
  Frame f = good;
  f[62] = 0xff;  // multicast target
  EXPECT_EQ(reasonOf(f), DropReason::kNdMalformed);
  f = good;
  f.resize(70);  // shorter than the payload length says
  EXPECT_EQ(run(f).reason, DropReason::kTruncated) << "the IPv6 header's own check";
  // Too short a message for a solicitation, payload length consistent.
  f = good;
  f.resize(54 + 20);
  f[19] = 20;
  EXPECT_EQ(reasonOf(f), DropReason::kNdMalformed);
  // A DAD probe must go to the solicited-node group and carry no option.
  Frame dad = test::neighborSolicitation(kMacA, Ipv6Address{}, kGateway);
  dad.resize(86);
  dad[19] = 32;
  dad[78] = 1;
  dad[79] = 1;
  EXPECT_EQ(reasonOf(dad), DropReason::kNdMalformed);
  // A unicast solicitation must be addressed to its target.
  EXPECT_EQ(reasonOf(test::neighborSolicitation(kMacA, kPodA, kPodB, true, &kUnused)), DropReason::kNdMalformed);
}

// The advertisement a solicitation from (mac, ip) gets with a 1800 s
// lifetime, written out field by field: to the asker (or all nodes from ::)
// from the gateway's link-local address; with an MTU option when mtu != 0.
Frame routerAdvertisement(const MacAddress& eth_dst, const Ipv6Address& ip_dst, uint16_t mtu) {
  Frame f(mtu != 0 ? 86 : 78, 0);
  std::memcpy(&f[0], eth_dst.bytes.data(), 6);
  std::memcpy(&f[6], kGatewayMac.bytes.data(), 6);
  f[12] = 0x86;
  f[13] = 0xdd;
  f[14] = 0x60;
  f[19] = static_cast<uint8_t>(f.size() - 54);  // payload length
  f[20] = 58;                                   // ICMPv6
  f[21] = 255;                                  // hop limit
  std::memcpy(&f[22], kGatewayLinkLocal.bytes.data(), 16);
  std::memcpy(&f[38], ip_dst.bytes.data(), 16);
  f[54] = 134;
  f[58] = 64;  // the pods' hop limit; flags M and O clear
  f[60] = 1800 >> 8;
  f[61] = 1800 & 0xff;
  // Reachable time, retransmit timer 0 (bytes 62..69); no prefix.
  f[70] = 1;  // source link-layer address
  f[71] = 1;
  std::memcpy(&f[72], kGatewayMac.bytes.data(), 6);
  if (mtu != 0) {
    f[78] = 5;  // MTU
    f[79] = 1;
    f[84] = static_cast<uint8_t>(mtu >> 8);
    f[85] = static_cast<uint8_t>(mtu);
  }
  const uint16_t sum = test::icmpv6ChecksumOf(f, f.size() - 54);
  f[56] = static_cast<uint8_t>(sum >> 8);
  f[57] = static_cast<uint8_t>(sum);
  return f;
}

TEST_F(Ipv6StageTest, ARouterSolicitationIsAnsweredWithExactBytesWhenALifetimeIsSet) {
  snap_.v6.router_lifetime_s = 1800;
  const Ipv6Address pod_ll = linkLocalFromMac(kMacA);
  Result r = run(test::routerSolicitation(kMacA, pod_ll));
  ASSERT_EQ(r.next, kPortA) << kDropReasonNames[static_cast<size_t>(r.reason)];
  EXPECT_EQ(r.out, routerAdvertisement(kMacA, pod_ll, 0));
  expectChecksumValid(r.out);
  // With the port's MTU (9000 here) in an MTU option.
  snap_.port_mtus[kPortA] = 9000;
  r = run(test::routerSolicitation(kMacA, kPodA, false));
  ASSERT_EQ(r.next, kPortA);
  EXPECT_EQ(r.out, routerAdvertisement(kMacA, kPodA, 9000));
  expectChecksumValid(r.out);
  // From :: (a host before its address is ready): to all nodes.
  r = run(test::routerSolicitation(kMacA, Ipv6Address{}, false));
  ASSERT_EQ(r.next, kPortA);
  EXPECT_EQ(r.out, routerAdvertisement(MacAddress{{0x33, 0x33, 0, 0, 0, 1}}, *Ipv6Address::parse("ff02::1"), 9000));
  // Unicast to the gateway's link-local address.
  r = run(test::routerSolicitation(kMacA, pod_ll, true, &kGatewayLinkLocal));
  EXPECT_EQ(r.next, kPortA);
  // No room for the advertisement in a chained or full buffer: dropped, not cut.
  EXPECT_EQ(run(test::routerSolicitation(kMacA, pod_ll, false), kPortA, 0).reason, DropReason::kNdMalformed);
}

TEST_F(Ipv6StageTest, RouterSolicitationsAreCheckedAndNeverAnsweredForOthers) {
  snap_.v6.router_lifetime_s = 1800;
  const Ipv6Address pod_ll = linkLocalFromMac(kMacA);
  auto reasonOf = [&](const Frame& f, bool fix_checksum = true) { return droppedFor(f, fix_checksum); };
  expectMalformedWhereEveryNdMessageIs(test::routerSolicitation(kMacA, pod_ll), 63);
  // From :: with a source link-layer option (RFC 4861 6.1.1).
  Frame unspecified = test::routerSolicitation(kMacA, Ipv6Address{}, true);
  EXPECT_EQ(reasonOf(unspecified), DropReason::kNdMalformed);
  // Unicast to another address.
  EXPECT_EQ(reasonOf(test::routerSolicitation(kMacA, pod_ll, true, &kPodB)), DropReason::kNdNotAnswered);
  // A checked port's solicitation from another pod's address or MAC.
  auto sources = std::make_shared<SourceTable>();
  PortSources& own = sources->ports[kPortA];
  own.checked = true;
  std::memcpy(own.mac, kMacA.bytes.data(), 6);
  own.has_ipv6 = true;
  std::memcpy(own.ipv6, kPodA.bytes.data(), 16);
  std::memcpy(own.link_local, pod_ll.bytes.data(), 16);
  snap_.sources = sources;
  EXPECT_EQ(reasonOf(test::routerSolicitation(kMacA, kPodB)), DropReason::kSpoofedSourceIp);
  EXPECT_EQ(reasonOf(test::routerSolicitation(kMacB, pod_ll)), DropReason::kSpoofedSourceMac);
  EXPECT_EQ(run(test::routerSolicitation(kMacA, pod_ll)).next, kPortA);
}

TEST_F(Ipv6StageTest, OtherNeighborDiscoveryIsNotServed) {
  // Without a router lifetime (the default), solicitations for routers too.
  EXPECT_EQ(run(test::routerSolicitation(kMacA, kPodA)).reason, DropReason::kNdNotServed);
  for (uint8_t type : {133, 134, 136, 137}) {
    Frame f = test::neighborSolicitation(kMacA, kPodA, kGateway);
    f[54] = type;
    Result r = run(f);
    EXPECT_EQ(r.next, kNextDrop);
    EXPECT_EQ(r.reason, DropReason::kNdNotServed) << int(type);
  }
}

}  // namespace
}  // namespace sluice
