// Flow key extraction on crafted frames: every field, every truncation
// length, malformed IPv4/IPv6/TCP/ARP headers, fragments, VLAN, padding.
#include "dataplane/datapath/flow/flow_key.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/flow/frame_builder.h"

namespace sluice::flow {
namespace {

using testing::be16;
using testing::be32;
using testing::Frame;
using testing::Ip6;

constexpr uint32_t kSrc = 0x0a000001;  // 10.0.0.1
constexpr uint32_t kDst = 0x0a000102;  // 10.0.1.2

// Extracts from an exactly-sized heap copy, so that under ASan any read past
// len is reported as a heap-buffer-overflow.
ParseResult extract(const std::vector<uint8_t>& bytes, uint32_t len, FlowKey& key,
                    std::optional<uint32_t> rss = std::nullopt, uint16_t port = 3) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[len == 0 ? 1 : len]);
  if (len > 0) std::memcpy(copy.get(), bytes.data(), len);
  return extractFlowKey(copy.get(), len, port, rss, key);
}
ParseResult extract(const Frame& f, FlowKey& key) { return extract(f.bytes(), f.size(), key); }

TEST(FlowKeyTest, Ipv4UdpFields) {
  const Frame f = testing::udp4(kSrc, kDst, 1234, 53);
  FlowKey k;
  ASSERT_EQ(extract(f.bytes(), f.size(), k, std::nullopt, 7), ParseResult::kOk);
  EXPECT_EQ(k.in_port, 7);
  EXPECT_EQ(0, std::memcmp(k.eth_dst, testing::kMacA.data(), 6));
  EXPECT_EQ(0, std::memcmp(k.eth_src, testing::kMacB.data(), 6));
  EXPECT_EQ(k.eth_type, be16(0x0800));
  EXPECT_EQ(k.ipv4_src, be32(kSrc));
  EXPECT_EQ(k.ipv4_dst, be32(kDst));
  EXPECT_EQ(k.ip_proto, 17);
  EXPECT_EQ(k.ttl_class, static_cast<uint8_t>(TtlClass::kMany));
  EXPECT_EQ(k.tp_src, be16(1234));
  EXPECT_EQ(k.tp_dst, be16(53));
  EXPECT_EQ(k.ip_frag, static_cast<uint8_t>(IpFrag::kNone));
  EXPECT_EQ(k.l3_ofs, 14);
  EXPECT_EQ(k.l4_ofs, 34);
  EXPECT_EQ(k.flags, 0);
  EXPECT_EQ(k.result(), ParseResult::kOk);
  EXPECT_EQ(k.hash, hashKey(k));
}

TEST(FlowKeyTest, RssHashIsUsedWhenPresent) {
  const Frame f = testing::udp4(kSrc, kDst, 1, 2);
  FlowKey k;
  ASSERT_EQ(extract(f.bytes(), f.size(), k, 0xdeadbeef), ParseResult::kOk);
  EXPECT_EQ(k.hash, 0xdeadbeefU);
}

TEST(FlowKeyTest, HashDependsOnEveryMatchedField) {
  FlowKey a;
  FlowKey b;
  ASSERT_EQ(extract(testing::udp4(kSrc, kDst, 1, 2), a), ParseResult::kOk);
  ASSERT_EQ(extract(testing::udp4(kSrc, kDst, 1, 3), b), ParseResult::kOk);
  EXPECT_NE(a.hash, b.hash);
  EXPECT_FALSE(keysEqual(a, b));
}

TEST(FlowKeyTest, TcpWithOptions) {
  FlowKey k;
  ASSERT_EQ(extract(testing::tcp4(kSrc, kDst, 40000, 443, 8), k), ParseResult::kOk);
  EXPECT_EQ(k.ip_proto, 6);
  EXPECT_EQ(k.tp_src, be16(40000));
  EXPECT_EQ(k.tp_dst, be16(443));
}

TEST(FlowKeyTest, TcpDataOffsetBelowFiveIsMalformed) {
  for (uint8_t doff = 0; doff < 5; ++doff) {
    Frame f;
    f.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 6, 20).tcp(1, 2, doff);
    FlowKey k;
    EXPECT_EQ(extract(f, k), ParseResult::kTcpBadOffset) << "doff " << int{doff};
  }
}

TEST(FlowKeyTest, TcpOptionsPastIpLengthAreTruncated) {
  Frame f;  // data offset 15 (60 bytes) but only 20 bytes of TCP
  f.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 6, 20).tcp(1, 2, 5);
  f.bytes()[34 + 12] = 0xf0;
  FlowKey k;
  EXPECT_EQ(extract(f, k), ParseResult::kTcpTruncated);
}

TEST(FlowKeyTest, IcmpTypeAndCode) {
  FlowKey k;
  ASSERT_EQ(extract(testing::icmp4(kSrc, kDst, 8, 0), k), ParseResult::kOk);
  EXPECT_EQ(k.ip_proto, 1);
  EXPECT_EQ(k.icmp_type, 8);
  EXPECT_EQ(k.icmp_code, 0);
  EXPECT_EQ(k.tp_src, 0);
  EXPECT_EQ(k.tp_dst, 0);
  ASSERT_EQ(extract(testing::icmp4(kSrc, kDst, 3, 4), k), ParseResult::kOk);
  EXPECT_EQ(k.icmp_type, 3);
  EXPECT_EQ(k.icmp_code, 4);
}

TEST(FlowKeyTest, ArpRequest) {
  FlowKey k;
  ASSERT_EQ(extract(testing::arpRequest(kSrc, kDst), k), ParseResult::kOk);
  EXPECT_EQ(k.eth_type, be16(0x0806));
  EXPECT_EQ(k.arp_op, be16(1));
  EXPECT_EQ(0, std::memcmp(k.arp_sha, testing::kMacB.data(), 6));
  EXPECT_EQ(k.arp_spa, be32(kSrc));
  EXPECT_EQ(k.arp_tpa, be32(kDst));
  EXPECT_EQ(k.ipv4_src, 0U);  // ARP addresses do not masquerade as IP ones
  EXPECT_EQ(k.ttl_class, static_cast<uint8_t>(TtlClass::kNotIp));
}

TEST(FlowKeyTest, ArpOtherThanEthernetIpv4IsUnsupported) {
  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x0806).arp(1, testing::kMacB, kSrc, {}, kDst, 6);
  FlowKey k;
  EXPECT_EQ(extract(f, k), ParseResult::kArpUnsupported);
  Frame g;
  g.eth(testing::kMacA, testing::kMacB, 0x0806).arp(1, testing::kMacB, kSrc, {}, kDst, 1, 0x86dd);
  EXPECT_EQ(extract(g, k), ParseResult::kArpUnsupported);
}

TEST(FlowKeyTest, VlanTaggedIpv4) {
  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x8100).vlan(0x2064, 0x0800).ipv4(kSrc, kDst, 17, 8).udp(5, 6);
  FlowKey k;
  ASSERT_EQ(extract(f, k), ParseResult::kOk);
  EXPECT_EQ(k.flags & kFlagVlan, kFlagVlan);
  EXPECT_EQ(k.vlan_tci, be16(0x2064));
  EXPECT_EQ(k.eth_type, be16(0x0800));
  EXPECT_EQ(k.l3_ofs, 18);
  EXPECT_EQ(k.tp_dst, be16(6));
}

TEST(FlowKeyTest, TtlClasses) {
  const std::pair<uint8_t, TtlClass> cases[] = {
      {0, TtlClass::kZero}, {1, TtlClass::kOne}, {2, TtlClass::kMany}, {255, TtlClass::kMany}};
  for (const auto& [ttl, cls] : cases) {
    FlowKey k;
    ASSERT_EQ(extract(testing::udp4(kSrc, kDst, 1, 2, ttl), k), ParseResult::kOk);
    EXPECT_EQ(k.ttl_class, static_cast<uint8_t>(cls)) << "ttl " << int{ttl};
  }
}

TEST(FlowKeyTest, Ipv6UdpAndIcmpv6) {
  Ip6 src{};
  Ip6 dst{};
  src[0] = 0xfd;
  src[15] = 1;
  dst[0] = 0xfd;
  dst[15] = 2;
  FlowKey k;
  ASSERT_EQ(extract(testing::udp6(src, dst, 546, 547), k), ParseResult::kOk);
  EXPECT_EQ(k.eth_type, be16(0x86dd));
  EXPECT_EQ(0, std::memcmp(k.ipv6_src, src.data(), 16));
  EXPECT_EQ(0, std::memcmp(k.ipv6_dst, dst.data(), 16));
  EXPECT_EQ(k.ip_proto, 17);
  EXPECT_EQ(k.tp_src, be16(546));
  EXPECT_EQ(k.tp_dst, be16(547));
  EXPECT_EQ(k.l4_ofs, 54);
  EXPECT_EQ(k.ttl_class, static_cast<uint8_t>(TtlClass::kMany));

  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(src, dst, 58, 8, 1).icmp(135, 0);
  ASSERT_EQ(extract(f, k), ParseResult::kOk);
  EXPECT_EQ(k.ip_proto, 58);
  EXPECT_EQ(k.icmp_type, 135);
  EXPECT_EQ(k.ttl_class, static_cast<uint8_t>(TtlClass::kOne));
}

TEST(FlowKeyTest, Ipv6ExtensionHeadersAndFragments) {
  const Ip6 a{1};
  const Ip6 b{2};
  // hop-by-hop -> fragment (first, more follow) -> UDP: ports are read.
  Frame first;
  first.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 0, 24).ipv6Ext(44).ipv6Frag(17, 0, true).udp(7, 8);
  FlowKey k;
  ASSERT_EQ(extract(first, k), ParseResult::kOk);
  EXPECT_EQ(k.ip_proto, 17);
  EXPECT_EQ(k.ip_frag, static_cast<uint8_t>(IpFrag::kFirst));
  EXPECT_EQ(k.tp_dst, be16(8));
  // Later fragment: bytes after the fragment header are not a UDP header.
  Frame later;
  later.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 44, 12).ipv6Frag(17, 100, false).udp(7, 8).bytes().resize(14 + 40 + 12);
  ASSERT_EQ(extract(later, k), ParseResult::kOk);
  EXPECT_EQ(k.ip_frag, static_cast<uint8_t>(IpFrag::kLater));
  EXPECT_EQ(k.ip_proto, 17);
  EXPECT_EQ(k.tp_src, 0);
  EXPECT_EQ(k.tp_dst, 0);
  // Nine destination-options headers: more than the parser walks.
  Frame many;
  many.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 60, 9 * 8 + 8);
  for (int i = 0; i < 9; ++i) many.ipv6Ext(i < 8 ? 60 : 17);
  many.udp(1, 2);
  EXPECT_EQ(extract(many, k), ParseResult::kIpv6TooManyExt);
  // An extension header whose length runs past the payload.
  Frame longext;
  longext.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 0, 8).ipv6Ext(17);
  longext.bytes()[14 + 40 + 1] = 3;  // claims 32 bytes
  EXPECT_EQ(extract(longext, k), ParseResult::kIpv6ExtTruncated);
}

TEST(FlowKeyTest, Ipv6BadVersionAndPayloadLength) {
  Frame f = testing::udp6(Ip6{1}, Ip6{2}, 1, 2);
  f.bytes()[14] = 0x40;
  FlowKey k;
  EXPECT_EQ(extract(f, k), ParseResult::kIpv6BadVersion);
  Frame g = testing::udp6(Ip6{1}, Ip6{2}, 1, 2);
  g.bytes()[14 + 5] = 9;  // payload length 9 > 8 present
  EXPECT_EQ(extract(g, k), ParseResult::kIpv6LengthTruncated);
}

TEST(FlowKeyTest, Ipv4IhlBelowFiveIsMalformed) {
  for (uint8_t ihl = 0; ihl < 5; ++ihl) {
    Frame f;
    f.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 8, 64, 0, ihl).udp(1, 2);
    FlowKey k;
    EXPECT_EQ(extract(f, k), ParseResult::kIpv4BadIhl) << "ihl " << int{ihl};
    EXPECT_EQ(k.tp_src, 0);
  }
}

TEST(FlowKeyTest, Ipv4IhlBeyondBuffer) {
  // IHL 15 (60 bytes) but only the 20-byte base header is present.
  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 0);
  f.bytes()[14] = 0x4f;
  FlowKey k;
  EXPECT_EQ(extract(f, k), ParseResult::kIpv4OptionsTruncated);
  // IHL 6 with its 4 option bytes present: fine, L4 after the options.
  Frame g;
  g.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 8, 64, 0, 6).udp(9, 10);
  ASSERT_EQ(extract(g, k), ParseResult::kOk);
  EXPECT_EQ(k.l4_ofs, 14 + 24);
  EXPECT_EQ(k.tp_src, be16(9));
}

TEST(FlowKeyTest, Ipv4BadVersionAndTotalLength) {
  Frame f = testing::udp4(kSrc, kDst, 1, 2);
  f.bytes()[14] = 0x65;
  FlowKey k;
  EXPECT_EQ(extract(f, k), ParseResult::kIpv4BadVersion);
  Frame g = testing::udp4(kSrc, kDst, 1, 2);
  g.bytes()[16] = 0;
  g.bytes()[17] = 19;  // total length below the header length
  EXPECT_EQ(extract(g, k), ParseResult::kIpv4BadTotalLength);
}

TEST(FlowKeyTest, Ipv4Fragments) {
  // First fragment (MF set, offset 0): ports are read.
  Frame first;
  first.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 8, 64, 0x2000).udp(11, 12);
  FlowKey k;
  ASSERT_EQ(extract(first, k), ParseResult::kOk);
  EXPECT_EQ(k.ip_frag, static_cast<uint8_t>(IpFrag::kFirst));
  EXPECT_EQ(k.tp_src, be16(11));
  // Later fragment: what sits where ports would be is payload, and even a
  // 3-byte payload (too short for UDP) is well formed.
  for (uint16_t frag : {uint16_t{0x2000 | 185}, uint16_t{185}}) {
    Frame later;
    later.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 3, 64, frag).u8(0xaa).u8(0xbb).u8(0xcc);
    ASSERT_EQ(extract(later, k), ParseResult::kOk);
    EXPECT_EQ(k.ip_frag, static_cast<uint8_t>(IpFrag::kLater));
    EXPECT_EQ(k.ip_proto, 17);
    EXPECT_EQ(k.tp_src, 0);
    EXPECT_EQ(k.tp_dst, 0);
    EXPECT_EQ(k.l4_ofs, 0);
  }
}

TEST(FlowKeyTest, EthernetPaddingIsNotL4) {
  // A 60-byte minimum frame: UDP datagram fits, padding follows.
  Frame f = testing::udp4(kSrc, kDst, 1, 2);
  f.zeros(60 - f.size());
  FlowKey k;
  ASSERT_EQ(extract(f, k), ParseResult::kOk);
  EXPECT_EQ(k.tp_dst, be16(2));
  // IP says 4 bytes of L4 (too short for UDP); padding must not make up for it.
  Frame g;
  g.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 4).u16(1).u16(2).zeros(30);
  EXPECT_EQ(extract(g, k), ParseResult::kUdpTruncated);
  EXPECT_EQ(k.tp_src, 0);
}

TEST(FlowKeyTest, OtherEtherTypesAreL2Only) {
  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x88cc).zeros(40);  // LLDP
  FlowKey k;
  ASSERT_EQ(extract(f, k), ParseResult::kOk);
  EXPECT_EQ(k.eth_type, be16(0x88cc));
  EXPECT_EQ(k.l3_ofs, 0);
  EXPECT_EQ(k.ip_proto, 0);
}

// Expected result when a well-formed frame is cut to len bytes. Boundaries
// are the header ends of each frame type.
struct TruncationCase {
  std::string name;
  Frame frame;
  std::vector<std::pair<uint32_t, ParseResult>> below;  // (until this length, result)
};

TEST(FlowKeyTest, TruncatedAtEveryLength) {
  Frame vlan_udp;
  vlan_udp.eth(testing::kMacA, testing::kMacB, 0x8100).vlan(5, 0x0800).ipv4(kSrc, kDst, 17, 8).udp(1, 2);
  const TruncationCase cases[] = {
      {"udp4", testing::udp4(kSrc, kDst, 1, 2),
       {{14, ParseResult::kEthTruncated}, {34, ParseResult::kIpv4Truncated},
        {42, ParseResult::kIpv4LengthTruncated}}},
      {"tcp4", testing::tcp4(kSrc, kDst, 1, 2, 6),
       {{14, ParseResult::kEthTruncated}, {34, ParseResult::kIpv4Truncated},
        {58, ParseResult::kIpv4LengthTruncated}}},
      {"icmp4", testing::icmp4(kSrc, kDst, 8, 0),
       {{14, ParseResult::kEthTruncated}, {34, ParseResult::kIpv4Truncated},
        {42, ParseResult::kIpv4LengthTruncated}}},
      {"vlan_udp4", vlan_udp,
       {{14, ParseResult::kEthTruncated}, {18, ParseResult::kVlanTruncated},
        {38, ParseResult::kIpv4Truncated}, {46, ParseResult::kIpv4LengthTruncated}}},
      {"arp", testing::arpRequest(kSrc, kDst),
       {{14, ParseResult::kEthTruncated}, {42, ParseResult::kArpTruncated}}},
      {"udp6", testing::udp6(Ip6{1}, Ip6{2}, 1, 2),
       {{14, ParseResult::kEthTruncated}, {54, ParseResult::kIpv6Truncated},
        {62, ParseResult::kIpv6LengthTruncated}}},
  };
  for (const TruncationCase& c : cases) {
    FlowKey k;
    ASSERT_EQ(extract(c.frame, k), ParseResult::kOk) << c.name;
    ASSERT_EQ(c.below.back().first, c.frame.size()) << c.name;
    for (uint32_t len = 0; len < c.frame.size(); ++len) {
      ParseResult want = ParseResult::kOk;
      for (const auto& [limit, r] : c.below) {
        if (len < limit) {
          want = r;
          break;
        }
      }
      EXPECT_EQ(extract(c.frame.bytes(), len, k), want) << c.name << " cut to " << len;
      EXPECT_EQ(k.hash, 0U) << c.name << " cut to " << len;
      EXPECT_EQ(k.result(), want);
    }
  }
}

TEST(FlowKeyTest, BurstMatchesSinglePacketExtraction) {
  const Frame frames[] = {testing::udp4(kSrc, kDst, 1, 2), testing::arpRequest(kSrc, kDst),
                          testing::icmp4(kSrc, kDst, 0, 0)};
  Frame bad = testing::udp4(kSrc, kDst, 1, 2);
  bad.bytes().resize(20);
  PacketRef pkts[4];
  for (int i = 0; i < 3; ++i) pkts[i] = {frames[i].data(), frames[i].size(), 0, false};
  pkts[1].has_rss = true;
  pkts[1].rss_hash = 77;
  pkts[3] = {bad.data(), bad.size(), 0, false};
  FlowKey keys[4];
  EXPECT_EQ(extractFlowKeys(pkts, 4, 9, keys), 3U);
  for (int i = 0; i < 3; ++i) {
    FlowKey single;
    extractFlowKey(pkts[i].data, pkts[i].len, 9,
                   pkts[i].has_rss ? std::optional<uint32_t>(pkts[i].rss_hash) : std::nullopt, single);
    EXPECT_EQ(0, std::memcmp(&single, &keys[i], sizeof(FlowKey))) << i;
  }
  EXPECT_EQ(keys[1].hash, 77U);
  EXPECT_EQ(keys[3].result(), ParseResult::kIpv4Truncated);
}

// Every frame of `frames` and each of its truncations, with and without an
// RSS hash: the burst form's key, hash and result are the single-frame
// parser's, byte for byte. Some frames must have parsed whole with their L4
// header at plain_l4_ofs (what the one-pass route produces).
void expectBurstRouteEqualsGeneralParser(std::vector<Frame> frames, uint16_t plain_l4_ofs) {
  const size_t whole = frames.size();
  for (size_t i = 0; i < whole; ++i) {
    for (uint32_t len = 0; len < frames[i].size(); ++len) {
      Frame cut = frames[i];
      cut.bytes().resize(len);
      frames.push_back(cut);
    }
  }
  uint32_t plain = 0;
  for (const Frame& f : frames) {
    for (bool rss : {false, true}) {
      std::unique_ptr<uint8_t[]> copy(new uint8_t[f.size() == 0 ? 1 : f.size()]);
      if (f.size() > 0) std::memcpy(copy.get(), f.data(), f.size());
      const PacketRef ref{copy.get(), f.size(), 0xabcdef, rss};
      FlowKey burst;
      FlowKey single;
      extractFlowKeys(&ref, 1, 4, &burst);
      extractFlowKey(copy.get(), f.size(), 4, rss ? std::optional<uint32_t>(0xabcdef) : std::nullopt, single);
      ASSERT_EQ(0, std::memcmp(&single, &burst, sizeof(FlowKey))) << "frame of " << f.size() << " bytes";
      plain += single.result() == ParseResult::kOk && single.l4_ofs == plain_l4_ofs;
    }
  }
  EXPECT_GT(plain, 0U);  // frames of the plain shape were among them
}

// The burst form takes a one-pass route for plain IPv4 UDP/TCP; every frame
// near that route's edges (TTL classes, TOS, DF, fragments, TCP data offsets,
// IP lengths, every truncation length) must give the key, hash and result the
// general parser gives.
TEST(FlowKeyTest, PlainIpv4RouteEqualsGeneralParser) {
  std::vector<Frame> frames;
  for (uint8_t ttl : {0, 1, 2, 64}) frames.push_back(testing::udp4(kSrc, kDst, 1000, 53, ttl));
  for (uint8_t doff : {3, 5, 6, 15}) frames.push_back(testing::tcp4(kSrc, kDst, 443, 55555, doff));
  Frame tos = testing::udp4(kSrc, kDst, 7, 8);
  tos.bytes()[15] = 0xb8;
  frames.push_back(tos);
  for (uint16_t frag : {0x4000, 0x2000, 0x0001, 0x6001}) {  // DF, MF, an offset, DF + offset
    Frame f = testing::udp4(kSrc, kDst, 7, 8);
    f.bytes()[20] = static_cast<uint8_t>(frag >> 8);
    f.bytes()[21] = static_cast<uint8_t>(frag);
    frames.push_back(f);
  }
  for (uint16_t total : {0, 19, 20, 27, 28, 29, 0xffff}) {  // IP total length around the edges
    Frame f = testing::udp4(kSrc, kDst, 7, 8);
    f.bytes()[16] = static_cast<uint8_t>(total >> 8);
    f.bytes()[17] = static_cast<uint8_t>(total);
    frames.push_back(f);
  }
  Frame ihl6 = testing::udp4(kSrc, kDst, 7, 8);
  ihl6.bytes()[14] = 0x46;
  frames.push_back(ihl6);
  expectBurstRouteEqualsGeneralParser(frames, 34);
}

// The same for the one-pass route of plain IPv6 UDP/TCP: hop limits, traffic
// class, TCP data offsets, payload lengths, extension headers and fragments
// (which leave the route), every truncation length.
TEST(FlowKeyTest, PlainIpv6RouteEqualsGeneralParser) {
  const Ip6 a{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
  const Ip6 b{0xfd, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x56, 0, 0x01};
  std::vector<Frame> frames;
  for (uint8_t hop : {0, 1, 2, 255}) {
    Frame f;
    f.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 17, 8, hop).udp(1000, 53);
    frames.push_back(f);
  }
  for (uint8_t doff : {3, 5, 6, 15}) {
    Frame f;
    f.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 6, static_cast<uint16_t>(doff * 4)).tcp(443, 5, doff);
    frames.push_back(f);
  }
  Frame tclass;
  tclass.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 17, 8, 64, 0xb8).udp(7, 8);
  frames.push_back(tclass);
  for (uint16_t payload : {0, 7, 8, 9, 19, 20, 0xffff}) {  // payload length around the edges
    Frame f;
    f.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 17, payload).udp(7, 8).zeros(12);
    frames.push_back(f);
  }
  Frame ext;
  ext.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 0, 16).ipv6Ext(17).udp(7, 8);
  frames.push_back(ext);
  Frame frag;
  frag.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 44, 16).ipv6Frag(17, 0, true).udp(7, 8);
  frames.push_back(frag);
  Frame icmp;
  icmp.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 58, 8).icmp(128, 0);
  frames.push_back(icmp);
  Frame version4 = frames[0];
  version4.bytes()[14] = 0x40;
  frames.push_back(version4);
  expectBurstRouteEqualsGeneralParser(frames, 54);
}

// A chained mbuf (a jumbo frame in 2 KB segments) is parsed in its first
// segment, the lengths its headers state checked against the whole frame
// (PacketRef.frame_len). Every first-segment length: the key is the whole
// frame's once the segment holds the headers, a truncation before (never a
// read past the segment: exact heap copies, for ASan); a whole frame
// shorter than the IP length stays truncated.
TEST(FlowKeyTest, AChainedFrameParsesInItsFirstSegmentAgainstItsWholeLength) {
  std::vector<std::pair<Frame, uint32_t>> frames;  // frame, bytes of headers the key needs
  Frame u4;
  u4.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 17, 8 + 8972).udp(1234, 53, 8972);
  frames.emplace_back(u4, 14 + 20 + 8);
  Frame t4;
  t4.eth(testing::kMacA, testing::kMacB, 0x0800).ipv4(kSrc, kDst, 6, 20 + 8960).tcp(1234, 80).zeros(8960);
  frames.emplace_back(t4, 14 + 20 + 20);
  Frame u6;
  const Ip6 a{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const Ip6 b{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  u6.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(a, b, 0, 8 + 8 + 8952).ipv6Ext(17).udp(1, 2, 8952);
  frames.emplace_back(u6, 14 + 40 + 8 + 8);
  for (const auto& [f, headers] : frames) {
    FlowKey whole;
    ASSERT_EQ(extract(f, whole), ParseResult::kOk);
    for (uint32_t head = 0; head <= 2048; head = head < headers + 2 ? head + 1 : head * 2) {
      std::unique_ptr<uint8_t[]> copy(new uint8_t[head == 0 ? 1 : head]);
      std::memcpy(copy.get(), f.data(), head);
      PacketRef ref{copy.get(), head, 0, false};
      ref.frame_len = f.size();
      FlowKey k;
      extractFlowKeys(&ref, 1, 3, &k);
      if (head >= headers) {
        ASSERT_EQ(k.result(), ParseResult::kOk) << head;
        EXPECT_EQ(0, std::memcmp(&k, &whole, sizeof(FlowKey))) << head;
      } else {
        EXPECT_NE(k.result(), ParseResult::kOk) << head;
      }
    }
    // The whole frame one byte shorter than its IP length says.
    PacketRef short_ref{f.data(), 1024, 0, false};
    short_ref.frame_len = f.size() - 1;
    FlowKey k;
    extractFlowKeys(&short_ref, 1, 3, &k);
    EXPECT_TRUE(k.result() == ParseResult::kIpv4LengthTruncated || k.result() == ParseResult::kIpv6LengthTruncated);
  }
}

// Runs (extractFlowKeyRuns): the PMD decides once per run, so every packet
// of a run must have exactly the key the single-packet extractor gives it.
// Checks that, and that the runs cover the burst in order and start where
// `breaks` says.
void expectRunsAgreeWithSingleExtraction(const PacketRef* pkts, uint32_t n, uint64_t breaks, const FlowKey* keys,
                                         const PacketRun* runs, uint32_t n_runs) {
  uint32_t next = 0;
  for (uint32_t r = 0; r < n_runs; ++r) {
    ASSERT_EQ(runs[r].first, next) << "run " << r;
    ASSERT_GE(runs[r].count, 1U);
    for (uint32_t i = runs[r].first; i < runs[r].first + runs[r].count; ++i) {
      if (i != runs[r].first) {
        ASSERT_EQ((breaks >> i) & 1, 0U) << "packet " << i << " continued across a break";
      }
      FlowKey single;
      extractFlowKey(pkts[i].data, pkts[i].len, 3, std::nullopt, single);
      ASSERT_EQ(single.result(), keys[r].result()) << "packet " << i;
      ASSERT_TRUE(keysEqual(single, keys[r])) << "packet " << i << " in run " << r;
      ASSERT_EQ(single.hash, keys[r].hash) << "packet " << i;
      ASSERT_EQ(single.l3_ofs, keys[r].l3_ofs);
      ASSERT_EQ(single.l4_ofs, keys[r].l4_ofs);
    }
    next = runs[r].first + runs[r].count;
  }
  EXPECT_EQ(next, n);
}

// A UDP frame padded to 64 bytes, as on the wire (runs need 48 bytes).
Frame udp64(uint16_t sport, uint16_t dport, uint8_t ttl = 64) {
  Frame f = testing::udp4(kSrc, kDst, sport, dport, ttl);
  f.bytes().resize(64, 0x5a);
  return f;
}

// IPv6 frames as on the wire: UDP padded to 80 bytes, TCP with 8 bytes of data.
const Ip6 kSrc6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a};
const Ip6 kDst6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x0b};
Frame udp6Frame(uint16_t sport, uint16_t dport, uint8_t hop = 64) {
  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(kSrc6, kDst6, 17, 8 + 18, hop).udp(sport, dport, 18);
  return f;
}
Frame tcp6Frame(uint16_t sport, uint16_t dport) {
  Frame f;
  f.eth(testing::kMacA, testing::kMacB, 0x86dd).ipv6(kSrc6, kDst6, 6, 28).tcp(sport, dport).zeros(8);
  return f;
}

// IPv6 runs: the flow label (not in the key) and the payload bytes do not
// end a run; the traffic class, hop limit, ports, TCP data offset and
// payload length do.
TEST(FlowKeyRunsTest, Ipv6RunsFollowTheKeyMakingBytes) {
  std::vector<Frame> f;
  f.push_back(udp6Frame(1, 2));  // 0: run A
  f.push_back(udp6Frame(1, 2));  // 1: another flow label and payload: still A
  f.back().bytes()[15] ^= 0x0f;
  f.back().bytes()[16] = 0x77;
  f.back().bytes()[17] = 0x01;
  f.back().bytes()[70] = 9;
  f.push_back(udp6Frame(1, 2));  // 2: another traffic class: a new run
  f.back().bytes()[15] ^= 0x10;
  f.push_back(udp6Frame(1, 2, 63));  // 3: another hop limit: a new run
  f.push_back(udp6Frame(1, 2, 63));  // 4: continues it
  f.push_back(udp6Frame(1, 3));      // 5: another port
  f.push_back(tcp6Frame(443, 80));   // 6: TCP
  f.push_back(tcp6Frame(443, 80));   // 7: continues it
  f.push_back(tcp6Frame(443, 80));   // 8: data offset 6: a new run (still plain)
  f.back().bytes()[66] = 0x60;
  f.push_back(udp6Frame(1, 3));      // 9: payload length 300 > the frame: truncated, alone
  f.back().bytes()[18] = 1;
  f.push_back(udp6Frame(1, 2));      // 10
  f.push_back(testing::udp4(kSrc, kDst, 1, 2));  // 11: IPv4 after IPv6: a new run
  f.back().bytes().resize(80);
  std::vector<PacketRef> pkts;
  for (const Frame& x : f) pkts.push_back({x.data(), x.size(), 0, false});
  FlowKey keys[kMaxBurst];
  PacketRun runs[kMaxBurst];
  const auto n = static_cast<uint32_t>(pkts.size());
  const uint32_t n_runs = extractFlowKeyRuns(pkts.data(), n, 3, 0, keys, runs);
  const std::vector<std::pair<uint16_t, uint16_t>> want = {{0, 2}, {2, 1}, {3, 2}, {5, 1}, {6, 2},
                                                           {8, 1}, {9, 1}, {10, 1}, {11, 1}};
  ASSERT_EQ(n_runs, want.size());
  for (uint32_t r = 0; r < n_runs; ++r) {
    EXPECT_EQ(runs[r].first, want[r].first) << "run " << r;
    EXPECT_EQ(runs[r].count, want[r].second) << "run " << r;
  }
  expectRunsAgreeWithSingleExtraction(pkts.data(), n, 0, keys, runs, n_runs);
  EXPECT_EQ(keys[5].result(), ParseResult::kOk);
  EXPECT_EQ(keys[6].result(), ParseResult::kIpv6LengthTruncated);
}

TEST(FlowKeyRunsTest, RunsFollowTheKeyMakingBytes) {
  std::vector<Frame> f;
  f.push_back(udp64(1, 2));                       // 0: run A
  f.push_back(udp64(1, 2));                       // 1: A with a new IP id, checksums, payload: still A
  f.back().bytes()[18] = 0x12;
  f.back().bytes()[19] = 0x34;
  f.back().bytes()[24] ^= 0xff;
  f.back().bytes()[40] ^= 0xff;
  f.back().bytes()[60] = 1;
  f.push_back(udp64(1, 2, 63));                   // 2: another TTL: a new run (same TTL class)
  f.push_back(udp64(1, 2, 63));                   // 3: continues it
  f.push_back(udp64(1, 2, 1));                    // 4: TTL 1: another key
  f.push_back(udp64(1, 3));                       // 5: another port
  f.push_back(testing::arpRequest(kSrc, kDst));   // 6: ARP: always alone
  f.push_back(udp64(1, 3));                       // 7: after ARP: a new run
  f.push_back(testing::udp4(kSrc, kDst, 1, 3));   // 8: 42 bytes: too short to compare, alone
  f.push_back(udp64(1, 3));                       // 9: a new run
  f.push_back(udp64(1, 3));                       // 10: another TOS
  f.back().bytes()[15] = 0xb8;
  Frame tcp = testing::tcp4(kSrc, kDst, 443, 80);
  tcp.bytes().resize(64);
  f.push_back(tcp);                               // 11: TCP
  f.push_back(tcp);                               // 12: TCP data offset 15, beyond the datagram: malformed
  f.back().bytes()[46] = 0xf0;
  f.push_back(udp64(1, 3));                       // 13
  f.push_back(udp64(1, 3));                       // 14: IP total length 100 > the frame: truncated, alone
  f.back().bytes()[17] = 100;
  std::vector<PacketRef> pkts;
  for (const Frame& x : f) pkts.push_back({x.data(), x.size(), 0, false});
  FlowKey keys[kMaxBurst];
  PacketRun runs[kMaxBurst];
  const auto n = static_cast<uint32_t>(pkts.size());
  const uint32_t n_runs = extractFlowKeyRuns(pkts.data(), n, 3, 0, keys, runs);
  const std::vector<std::pair<uint16_t, uint16_t>> want = {{0, 2},  {2, 2},  {4, 1},  {5, 1},  {6, 1},
                                                           {7, 1},  {8, 1},  {9, 1},  {10, 1}, {11, 1},
                                                           {12, 1}, {13, 1}, {14, 1}};
  ASSERT_EQ(n_runs, want.size());
  for (uint32_t r = 0; r < n_runs; ++r) {
    EXPECT_EQ(runs[r].first, want[r].first) << "run " << r;
    EXPECT_EQ(runs[r].count, want[r].second) << "run " << r;
  }
  expectRunsAgreeWithSingleExtraction(pkts.data(), n, 0, keys, runs, n_runs);
  EXPECT_EQ(keys[11].result(), ParseResult::kOk);
  EXPECT_EQ(keys[10].result(), ParseResult::kTcpTruncated);

  // A break splits a run whatever the bytes say.
  const uint32_t split = extractFlowKeyRuns(pkts.data(), 2, 3, uint64_t{1} << 1, keys, runs);
  EXPECT_EQ(split, 2U);
  // All breaks: every packet its own run, as extractFlowKeys.
  EXPECT_EQ(extractFlowKeyRuns(pkts.data(), n, 3, ~uint64_t{0}, keys, runs), n);
}

// Random bursts from a few flows, each packet possibly with one byte of its
// first 50 changed (a field of the key, or not), possibly cut short, with
// random breaks: every run must hold packets with one key.
TEST(FlowKeyRunsTest, RandomBurstsNeverMixKeys) {
  const Frame templates[] = {udp64(1, 2), udp64(1, 3), [] {
                               Frame t = testing::tcp4(kSrc, kDst, 443, 80);
                               t.bytes().resize(70);
                               return t;
                             }(),
                             testing::arpRequest(kSrc, kDst), udp6Frame(1, 2), tcp6Frame(443, 80)};
  constexpr uint32_t kTemplates = sizeof(templates) / sizeof(templates[0]);
  std::mt19937 rng(20261130);
  uint64_t longer_than_one = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<Frame> f;
    const uint32_t n = 1 + rng() % 32;
    const Frame* last = &templates[0];
    for (uint32_t i = 0; i < n; ++i) {
      if (rng() % 4 == 0) last = &templates[rng() % kTemplates];  // mostly runs of one template
      Frame x = *last;
      if (rng() % 3 == 0) x.bytes()[rng() % 70 % x.size()] = static_cast<uint8_t>(rng());
      if (rng() % 16 == 0) x.bytes().resize(rng() % x.size());
      f.push_back(x);
    }
    std::vector<PacketRef> pkts;
    for (const Frame& x : f) pkts.push_back({x.data(), x.size(), 0, false});
    const uint64_t breaks = rng() % 2 == 0 ? 0 : (uint64_t{rng()} << 32 | rng()) & (uint64_t{rng()} << 32 | rng());
    FlowKey keys[kMaxBurst];
    PacketRun runs[kMaxBurst];
    const uint32_t n_runs = extractFlowKeyRuns(pkts.data(), n, 3, breaks, keys, runs);
    expectRunsAgreeWithSingleExtraction(pkts.data(), n, breaks, keys, runs, n_runs);
    if (::testing::Test::HasFatalFailure()) return;
    longer_than_one += n - n_runs;
  }
  EXPECT_GT(longer_than_one, 10000U);  // runs were formed, not only checked
}

TEST(FlowKeyTest, MaskHelpers) {
  FlowKey k;
  ASSERT_EQ(extract(testing::udp4(kSrc, kDst, 1, 2), k), ParseResult::kOk);
  FlowMask m = zeroKey();
  m.ipv4_dst = be32(0xffffff00);  // a /24 on the destination
  const FlowKey mk = applyMask(k, m);
  EXPECT_EQ(mk.ipv4_dst, be32(kDst & 0xffffff00));
  EXPECT_EQ(mk.ipv4_src, 0U);
  EXPECT_TRUE(maskedEqual(k, m, mk));
  FlowKey other;
  ASSERT_EQ(extract(testing::udp4(kSrc + 5, kDst + 7, 9, 9), other), ParseResult::kOk);
  EXPECT_TRUE(maskedEqual(other, m, mk));  // same /24, other fields ignored
  ASSERT_EQ(extract(testing::udp4(kSrc, kDst + 256, 1, 2), other), ParseResult::kOk);
  EXPECT_FALSE(maskedEqual(other, m, mk));
}

TEST(FlowKeyTest, ParseResultNamesAreUniqueAndNamed) {
  std::set<std::string_view> names;
  for (uint32_t i = 0; i < kParseResultCount; ++i) {
    const std::string_view n = parseResultName(static_cast<ParseResult>(i));
    EXPECT_FALSE(n.empty());
    EXPECT_NE(n, "unknown");
    names.insert(n);
  }
  EXPECT_EQ(names.size(), kParseResultCount);
  EXPECT_EQ(parseResultName(ParseResult::kIpv4BadIhl), "ipv4_bad_ihl");
}

}  // namespace
}  // namespace sluice::flow
