// Stage test of the forwarding stage on synthetic bursts. The mbufs are built
// by hand around heap buffers of exactly the frame's length (no EAL), so under
// AddressSanitizer any read past a frame's end fails the test.
#include "dataplane/datapath/l3_forward.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include "tests/support/frames.h"

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace l3_forward_test {

using test::Frame;

const Ipv4Address kGateway = *Ipv4Address::parse("10.244.1.1");
const MacAddress kGatewayMac = *MacAddress::parse("02:00:00:00:00:01");
const Ipv4Address kPodA = *Ipv4Address::parse("10.244.1.10");
const Ipv4Address kPodB = *Ipv4Address::parse("10.244.1.11");
const MacAddress kMacA = *MacAddress::parse("02:aa:00:00:00:0a");
const MacAddress kMacB = *MacAddress::parse("02:bb:00:00:00:0b");
constexpr uint16_t kPortA = 3, kPortB = 7;

// An rte_mbuf whose data is a heap copy of exactly `frame.size()` bytes.
struct FakeMbuf {
  explicit FakeMbuf(const Frame& frame)
      : mbuf_storage(std::make_unique<rte_mbuf>()), mbuf(*mbuf_storage),
        data(new uint8_t[std::max<size_t>(frame.size(), 1)]) {
    std::memset(&mbuf, 0, sizeof mbuf);
    if (!frame.empty()) std::memcpy(data.get(), frame.data(), frame.size());
    mbuf.buf_addr = data.get();
    mbuf.data_off = 0;
    mbuf.data_len = static_cast<uint16_t>(frame.size());
    mbuf.pkt_len = static_cast<uint32_t>(frame.size());
    mbuf.nb_segs = 1;
  }
  Frame bytes() const { return Frame(data.get(), data.get() + mbuf.data_len); }
  // Held by pointer: rte_mbuf ends in zero-length marker arrays, which ISO C++
  // does not allow as a by-value member.
  std::unique_ptr<rte_mbuf> mbuf_storage;
  rte_mbuf& mbuf;
  std::unique_ptr<uint8_t[]> data;
};

class L3ForwardTest : public ::testing::Test {
 protected:
  L3ForwardTest() {
    snap_.fib = std::make_shared<ForwardingTable>(
        std::vector<ForwardingTable::Entry>{{kPodA, kPortA, kMacA}, {kPodB, kPortB, kMacB}});
    snap_.gateway_ip_be = kGateway.networkOrder();
    std::memcpy(snap_.gateway_mac.addr_bytes, kGatewayMac.bytes.data(), 6);
    auto cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    snap_.pod_net_be = cidr.network.networkOrder();
    snap_.pod_mask_be = Ipv4Address{cidr.mask()}.networkOrder();
  }

  struct Result {
    uint16_t next;
    DropReason reason;
    Frame out;
  };
  Result run(const Frame& in, uint16_t in_port = kPortA) {
    FakeMbuf m(in);
    rte_mbuf* pkts[1] = {&m.mbuf};
    uint16_t next[1];
    DropReason reason[1];
    uint16_t forwarded = l3ForwardBurst(snap_, in_port, pkts, 1, next, reason);
    EXPECT_EQ(forwarded, next[0] == kNextDrop ? 0 : 1);
    return {next[0], reason[0], m.bytes()};
  }

  test::UdpFrameSpec aToB() { return {kMacA, kGatewayMac, kPodA, kPodB}; }

  PmdSnapshot snap_;
};

TEST_F(L3ForwardTest, RoutesToTheLocalPodRewritingMacsAndTtl) {
  Frame in = test::udpFrame(aToB());
  Result r = run(in);
  ASSERT_EQ(r.next, kPortB);
  EXPECT_EQ(test::ethDst(r.out), kMacB);
  EXPECT_EQ(test::ethSrc(r.out), kGatewayMac);
  EXPECT_EQ(test::ipv4Ttl(r.out), 63);
  EXPECT_TRUE(test::ipv4ChecksumValid(r.out));
  // Nothing but MACs, TTL and checksum changed.
  for (size_t i = 34; i < in.size(); ++i) ASSERT_EQ(r.out[i], in[i]) << i;
}

TEST_F(L3ForwardTest, ChecksumStaysValidForEveryTtlAndRandomHeaders) {
  std::mt19937 rng(7);
  for (int ttl = 2; ttl <= 255; ++ttl) {
    test::UdpFrameSpec s = aToB();
    s.ttl = static_cast<uint8_t>(ttl);
    s.sequence = static_cast<uint32_t>(rng());
    s.src_port = static_cast<uint16_t>(rng());
    s.frame_len = 60 + rng() % 1400;
    Result r = run(test::udpFrame(s));
    ASSERT_EQ(r.next, kPortB);
    ASSERT_EQ(test::ipv4Ttl(r.out), ttl - 1);
    ASSERT_TRUE(test::ipv4ChecksumValid(r.out)) << ttl;
  }
}

TEST_F(L3ForwardTest, DropsWithNamedReasons) {
  test::UdpFrameSpec ttl1 = aToB();
  ttl1.ttl = 1;
  EXPECT_EQ(run(test::udpFrame(ttl1)).reason, DropReason::kTtlExceeded);
  test::UdpFrameSpec ttl0 = aToB();
  ttl0.ttl = 0;
  EXPECT_EQ(run(test::udpFrame(ttl0)).reason, DropReason::kTtlExceeded);

  test::UdpFrameSpec elsewhere = aToB();
  elsewhere.dst_ip = *Ipv4Address::parse("10.244.1.99");
  EXPECT_EQ(run(test::udpFrame(elsewhere)).reason, DropReason::kNoRoute);
  elsewhere.dst_ip = *Ipv4Address::parse("0.0.0.0");
  EXPECT_EQ(run(test::udpFrame(elsewhere)).reason, DropReason::kNoRoute);
  elsewhere.dst_ip = *Ipv4Address::parse("8.8.8.8");
  EXPECT_EQ(run(test::udpFrame(elsewhere)).reason, DropReason::kNoRoute);

  test::UdpFrameSpec to_gw = aToB();
  to_gw.dst_ip = kGateway;
  EXPECT_EQ(run(test::udpFrame(to_gw)).reason, DropReason::kToGateway);

  // An IPv4 packet under the IPv6 EtherType: IPv6 is forwarded, this header is no IPv6 one.
  Frame ipv6 = test::udpFrame(aToB());
  ipv6[12] = 0x86;
  ipv6[13] = 0xdd;
  EXPECT_EQ(run(ipv6).reason, DropReason::kBadIpv6Header);
  Frame lldp = test::udpFrame(aToB());
  lldp[12] = 0x88;
  lldp[13] = 0xcc;
  EXPECT_EQ(run(lldp).reason, DropReason::kUnsupportedEthertype);
}

TEST_F(L3ForwardTest, MalformedIpv4HeadersAreDropped) {
  Frame version6 = test::udpFrame(aToB());
  version6[14] = 0x65;
  EXPECT_EQ(run(version6).reason, DropReason::kBadIpv4Header);
  Frame short_ihl = test::udpFrame(aToB());
  short_ihl[14] = 0x44;
  EXPECT_EQ(run(short_ihl).reason, DropReason::kBadIpv4Header);
  Frame huge_ihl = test::udpFrame(aToB());  // 60-byte header in a 46-byte L3 payload
  huge_ihl[14] = 0x4f;
  EXPECT_EQ(run(huge_ihl).reason, DropReason::kTruncated);
  Frame long_total = test::udpFrame(aToB());
  long_total[16] = 0x05;  // total length 1280+ > frame
  EXPECT_EQ(run(long_total).reason, DropReason::kTruncated);
  Frame short_total = test::udpFrame(aToB());
  short_total[16] = 0;
  short_total[17] = 10;  // shorter than its own header
  EXPECT_EQ(run(short_total).reason, DropReason::kBadIpv4Header);
}

TEST_F(L3ForwardTest, EveryTruncationIsDroppedWithoutReadingPastTheEnd) {
  for (const Frame& full : {test::udpFrame(aToB()), test::arpRequest(kMacA, kPodA, kGateway)}) {
    // The UDP frame's IPv4 total length covers the whole frame, and ARP needs
    // its 28 bytes, so every strict prefix must be refused.
    size_t needed = full == test::arpRequest(kMacA, kPodA, kGateway) ? 42 : full.size();
    for (size_t len = 0; len < needed; ++len) {
      Result r = run(Frame(full.begin(), full.begin() + static_cast<long>(len)));
      EXPECT_EQ(r.next, kNextDrop) << len;
      EXPECT_EQ(r.reason, DropReason::kTruncated) << len;
    }
  }
}

TEST_F(L3ForwardTest, AnswersArpForTheGatewayOnTheIngressPort) {
  Result r = run(test::arpRequest(kMacA, kPodA, kGateway), kPortA);
  ASSERT_EQ(r.next, kPortA);
  EXPECT_EQ(test::ethDst(r.out), kMacA);
  EXPECT_EQ(test::ethSrc(r.out), kGatewayMac);
  EXPECT_EQ(test::etherType(r.out), 0x0806);
  EXPECT_EQ(r.out[21], 2);  // reply
  EXPECT_EQ(std::memcmp(&r.out[22], kGatewayMac.bytes.data(), 6), 0);                     // sha
  EXPECT_EQ(Frame(r.out.begin() + 28, r.out.begin() + 32), (Frame{10, 244, 1, 1}));        // spa
  EXPECT_EQ(std::memcmp(&r.out[32], kMacA.bytes.data(), 6), 0);                           // tha
  EXPECT_EQ(Frame(r.out.begin() + 38, r.out.begin() + 42), (Frame{10, 244, 1, 10}));       // tpa
}

TEST_F(L3ForwardTest, ProxyArpInsideThePodCidrOnly) {
  Result peer = run(test::arpRequest(kMacA, kPodA, *Ipv4Address::parse("10.244.1.77")));
  EXPECT_EQ(peer.next, kPortA);
  EXPECT_EQ(std::memcmp(&peer.out[22], kGatewayMac.bytes.data(), 6), 0);
  EXPECT_EQ(run(test::arpRequest(kMacA, kPodA, *Ipv4Address::parse("10.9.9.9"))).reason,
            DropReason::kArpNotAnswered);
  EXPECT_EQ(run(test::arpRequest(kMacA, kPodA, kPodA)).reason, DropReason::kArpNotAnswered);  // DAD
  // A probe (sender 0.0.0.0) for the asker's own address is its duplicate
  // address check: an answer would make it give the address up. The same
  // probe for another pod's address is answered (proxy ARP).
  EXPECT_EQ(run(test::arpRequest(kMacA, Ipv4Address{0}, kPodA)).reason, DropReason::kArpNotAnswered);
  EXPECT_EQ(run(test::arpRequest(kMacA, Ipv4Address{0}, kPodB)).next, kPortA);
  Frame reply = test::arpRequest(kMacA, kPodA, kGateway);
  reply[21] = 2;
  EXPECT_EQ(run(reply).reason, DropReason::kArpNotAnswered);
}

// Source validation on the reference stage and the ARP answer (which no
// cache serves): port A checked, port B (a router) not.
class L3ForwardSourcesTest : public L3ForwardTest {
 protected:
  L3ForwardSourcesTest() {
    auto sources = std::make_shared<SourceTable>();
    PortSources& a = sources->ports[kPortA];
    a.checked = true;
    std::memcpy(a.mac, kMacA.bytes.data(), 6);
    a.has_ipv4 = true;
    a.ipv4_be = kPodA.networkOrder();
    std::memcpy(a.link_local, linkLocalFromMac(kMacA).bytes.data(), 16);
    PortSources& b = sources->ports[kPortB];
    std::memcpy(b.mac, kMacB.bytes.data(), 6);
    b.has_ipv4 = true;
    b.ipv4_be = kPodB.networkOrder();
    snap_.sources = sources;
  }
  static Frame arp(const MacAddress& eth_src, const MacAddress& sha, Ipv4Address spa, Ipv4Address tpa) {
    Frame f = test::arpRequest(sha, spa, tpa);
    std::memcpy(&f[6], eth_src.bytes.data(), 6);
    return f;
  }
};

TEST_F(L3ForwardSourcesTest, SpoofedIpv4IsDroppedByReasonAndOwnSourcesForwarded) {
  EXPECT_EQ(run(test::udpFrame(aToB())).next, kPortB);
  test::UdpFrameSpec ip = aToB();
  ip.src_ip = *Ipv4Address::parse("10.244.1.99");
  Result r = run(test::udpFrame(ip));
  EXPECT_EQ(r.next, kNextDrop);
  EXPECT_EQ(r.reason, DropReason::kSpoofedSourceIp);
  test::UdpFrameSpec mac = aToB();
  mac.src_mac = kMacB;
  r = run(test::udpFrame(mac));
  EXPECT_EQ(r.next, kNextDrop);
  EXPECT_EQ(r.reason, DropReason::kSpoofedSourceMac);
  // The router on B forwards a foreign source.
  test::UdpFrameSpec routed{*MacAddress::parse("02:01:02:03:04:05"), kGatewayMac,
                            *Ipv4Address::parse("192.0.2.1"), kPodA};
  EXPECT_EQ(run(test::udpFrame(routed), kPortB).next, kPortA);
}

TEST_F(L3ForwardSourcesTest, ArpMustNameThePodsOwnAddressesOrProbe) {
  // Its own: answered.
  EXPECT_EQ(run(arp(kMacA, kMacA, kPodA, kGateway)).next, kPortA);
  // A probe (sender 0.0.0.0) is not spoofing: answered as before.
  Result probe = run(arp(kMacA, kMacA, Ipv4Address{0}, kGateway));
  EXPECT_EQ(probe.next, kPortA);
  // Another pod's IP or MAC as sender, or a foreign Ethernet source.
  Result r = run(arp(kMacA, kMacA, kPodB, kGateway));
  EXPECT_EQ(r.next, kNextDrop);
  EXPECT_EQ(r.reason, DropReason::kSpoofedArp);
  r = run(arp(kMacA, kMacB, kPodA, kGateway));
  EXPECT_EQ(r.reason, DropReason::kSpoofedArp);
  r = run(arp(kMacB, kMacA, kPodA, kGateway));
  EXPECT_EQ(r.reason, DropReason::kSpoofedSourceMac);
  // A spoofed reply (ARP poisoning) is named as such, not "not answered".
  Frame reply = arp(kMacA, kMacA, kPodB, kPodB);
  reply[21] = 2;
  EXPECT_EQ(run(reply).reason, DropReason::kSpoofedArp);
  // The same through the per-packet answer the cached pipeline calls.
  FakeMbuf m(arp(kMacA, kMacA, kPodB, kGateway));
  DropReason why{};
  EXPECT_EQ(l3AnswerArp(snap_, kPortA, &m.mbuf, &why), kNextDrop);
  EXPECT_EQ(why, DropReason::kSpoofedArp);
  // Unchecked port B may say anything.
  EXPECT_EQ(run(arp(kMacB, kMacB, kPodA, kGateway), kPortB).next, kPortB);
}

TEST_F(L3ForwardTest, BurstVerdictsArePerPacketAndCounted) {
  test::UdpFrameSpec dead = aToB();
  dead.ttl = 1;
  std::vector<Frame> frames = {test::udpFrame(aToB()), test::udpFrame(dead),
                               test::arpRequest(kMacA, kPodA, kGateway), test::udpFrame({kMacB, kGatewayMac, kPodB, kPodA})};
  std::vector<std::unique_ptr<FakeMbuf>> mbufs;
  rte_mbuf* pkts[4];
  for (size_t i = 0; i < frames.size(); ++i) {
    mbufs.push_back(std::make_unique<FakeMbuf>(frames[i]));
    pkts[i] = &mbufs.back()->mbuf;
  }
  uint16_t next[4];
  DropReason reason[4];
  EXPECT_EQ(l3ForwardBurst(snap_, kPortA, pkts, 4, next, reason), 3);
  EXPECT_EQ(next[0], kPortB);
  EXPECT_EQ(next[1], kNextDrop);
  EXPECT_EQ(reason[1], DropReason::kTtlExceeded);
  EXPECT_EQ(next[2], kPortA);
  EXPECT_EQ(next[3], kPortA);
}

TEST(ChecksumAdjustTest, MatchesFullRecomputation) {
  std::mt19937 rng(1);
  for (int i = 0; i < 10000; ++i) {
    uint8_t hdr[20];
    for (uint8_t& b : hdr) b = static_cast<uint8_t>(rng());
    hdr[10] = hdr[11] = 0;
    uint16_t sum = test::internetChecksum(hdr, 20);
    hdr[10] = static_cast<uint8_t>(sum >> 8);
    hdr[11] = static_cast<uint8_t>(sum);
    uint16_t old_word, new_word, cksum;
    std::memcpy(&old_word, &hdr[8], 2);
    hdr[8] = static_cast<uint8_t>(hdr[8] - 1);
    std::memcpy(&new_word, &hdr[8], 2);
    std::memcpy(&cksum, &hdr[10], 2);
    cksum = ipv4ChecksumAdjust(cksum, old_word, new_word);
    std::memcpy(&hdr[10], &cksum, 2);
    ASSERT_EQ(test::internetChecksum(hdr, 20), 0) << i;
  }
}

// decrementTtl's short form against the general RFC 1624 adjustment, for
// every checksum value and every TTL a router decrements.
TEST(ChecksumAdjustTest, DecrementTtlEqualsTheGeneralFormForEveryChecksum) {
  for (uint32_t checksum = 0; checksum <= 0xffff; ++checksum) {
    for (uint32_t ttl = 1; ttl <= 255; ttl += (ttl < 3 || ttl > 252) ? 1 : 7) {
      rte_ipv4_hdr ip{};
      ip.time_to_live = static_cast<uint8_t>(ttl);
      ip.next_proto_id = 17;
      ip.hdr_checksum = static_cast<uint16_t>(checksum);
      uint16_t old_word, new_word;
      std::memcpy(&old_word, &ip.time_to_live, 2);
      const uint8_t after[2] = {static_cast<uint8_t>(ttl - 1), 17};
      std::memcpy(&new_word, after, 2);
      const uint16_t want = ipv4ChecksumAdjust(ip.hdr_checksum, old_word, new_word);
      decrementTtl(&ip);
      ASSERT_EQ(ip.time_to_live, ttl - 1);
      ASSERT_EQ(ip.hdr_checksum, want) << "checksum " << checksum << " ttl " << ttl;
    }
  }
}

TEST(ForwardingTableTest, FindsEveryEntryAndNothingElse) {
  std::vector<ForwardingTable::Entry> entries;
  for (uint32_t i = 2; i < 1000; ++i)
    entries.push_back({Ipv4Address{0x0a000000u + i}, static_cast<uint16_t>(i % 32), MacAddress::fromIpv4({i})});
  ForwardingTable fib(entries);
  EXPECT_EQ(fib.size(), entries.size());
  for (const auto& e : entries) {
    const PodRoute* r = fib.lookup(e.ip.networkOrder());
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->port_no, e.port_no);
    EXPECT_EQ(std::memcmp(r->mac, e.mac.bytes.data(), 6), 0);
  }
  EXPECT_EQ(fib.lookup(Ipv4Address{0x0a000000u + 5000}.networkOrder()), nullptr);
  EXPECT_EQ(ForwardingTable().lookup(Ipv4Address{1}.networkOrder()), nullptr);
  // Found by fuzz_l3_forward: 0.0.0.0 once matched an empty slot.
  EXPECT_EQ(fib.lookup(0), nullptr);
}

}  // namespace l3_forward_test
}  // namespace sluice
