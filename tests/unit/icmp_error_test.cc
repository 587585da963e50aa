// The ICMP/ICMPv6 error builders (dataplane/datapath/icmp/icmp_error.h) on
// hand-built frames in hand-made mbufs (no EAL): the exact bytes of the
// error (the expected frames and their checksums were computed apart from
// this code, and the checksums are verified again here with the test
// support's RFC 1071 sum), what is quoted, and every rule for when no error
// is sent (with the frame then left as it was). Also the per-PMD limiter on
// a hand-driven clock. And the gateway's echo replies (icmp_echo.h), the
// same way.
#include "dataplane/datapath/icmp/icmp_error.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/datapath/icmp/icmp_echo.h"
#include "dataplane/datapath/icmp/icmp_error_limiter.h"
#include "tests/support/frames.h"

namespace sluice::icmp {
namespace {

using test::Frame;

Frame fromHex(const std::string& hex) {
  Frame f;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) f.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return f;
}

// Pod 10.244.0.10 (02:00:0a:f4:00:0a) sends UDP with TTL 1 to 10.244.0.11
// through the gateway 10.244.0.1 (02:00:0a:f4:00:01): a 60-byte frame.
const Frame kUdpTtl1 = fromHex(
    "02000af4000102000af4000a08004500002e123400000111918f0af4000a0af4000b04001389001a0000404142434445464748494a4b4c4d"
    "4e4f5051");
// Its Time Exceeded: 88 bytes, the whole 46-byte datagram quoted.
const Frame kUdpTtl1TimeExceeded = fromHex(
    "02000af4000a02000af40001080045c0004a00004000400124010af400010af4000a0b0052c9000000004500002e123400000111918f0af4"
    "000a0af4000b04001389001a0000404142434445464748494a4b4c4d4e4f5051");
// IPv6: 2001:db8:1::a sends UDP with hop limit 1 to 2001:db8:2::b through
// the gateway 2001:db8:1::1 (flow label 0x12345 kept in the quote).
const Frame kUdp6HopLimit1 = fromHex(
    "02000af4000102000af4000a86dd600123450014110120010db800010000000000000000000a20010db80002000000000000000000"
    "0b0fa0003500147340808182838485868788898a8b");
const Frame kUdp6TimeExceeded = fromHex(
    "02000af4000a02000af4000186dd6000000000443a4020010db800010000000000000000000120010db80001000000000000000000"
    "0a03000ccc00000000600123450014110120010db800010000000000000000000a20010db800020000000000000000000b0fa00035"
    "00147340808182838485868788898a8b");
const Frame kUdp6PacketTooBig1400 = fromHex(
    "02000af4000a02000af4000186dd6000000000443a4020010db800010000000000000000000120010db80001000000000000000000"
    "0a0200085400000578600123450014110120010db800010000000000000000000a20010db800020000000000000000000b0fa00035"
    "00147340808182838485868788898a8b");

constexpr uint16_t kHeadroom = RTE_PKTMBUF_HEADROOM;

// An mbuf over a heap buffer (headroom + frame + room), made by hand.
class TestMbuf {
 public:
  explicit TestMbuf(const Frame& f, uint16_t headroom = kHeadroom)
      : buf_(headroom + f.size() + 64, 0xee), m_(std::make_unique<rte_mbuf>()) {
    std::memset(m_.get(), 0, sizeof(rte_mbuf));
    m_->buf_addr = buf_.data();
    m_->buf_len = static_cast<uint16_t>(buf_.size());
    m_->data_off = headroom;
    m_->data_len = static_cast<uint16_t>(f.size());
    m_->pkt_len = static_cast<uint32_t>(f.size());
    m_->nb_segs = 1;
    rte_mbuf_refcnt_set(m_.get(), 1);
    if (!f.empty()) std::memcpy(buf_.data() + headroom, f.data(), f.size());
  }
  rte_mbuf* get() { return m_.get(); }
  Frame frame() const {
    const auto* d = static_cast<const uint8_t*>(m_->buf_addr) + m_->data_off;
    return Frame(d, d + m_->data_len);
  }

 private:
  std::vector<uint8_t> buf_;
  std::unique_ptr<rte_mbuf> m_;  // on the heap: the struct ends in a zero-size array
};

Ipv4ErrorParams v4Params() {
  Ipv4ErrorParams p;
  p.source_be = Ipv4Address::parse("10.244.0.1")->networkOrder();
  std::memcpy(p.mac.addr_bytes, "\x02\x00\x0a\xf4\x00\x01", 6);
  return p;
}
Ipv6ErrorParams v6Params(uint8_t type = kIpv6TimeExceeded, uint32_t mtu = 0) {
  Ipv6ErrorParams p;
  const Frame gw = fromHex("20010db8000100000000000000000001");
  std::memcpy(p.source.data(), gw.data(), 16);
  std::memcpy(p.mac.addr_bytes, "\x02\x00\x0a\xf4\x00\x01", 6);
  p.type = type;
  p.mtu = mtu;
  return p;
}

// The IPv4 error's checksums, verified independently of the builder.
void expectIpv4ChecksumsValid(const Frame& f) {
  ASSERT_GE(f.size(), 42u);
  EXPECT_EQ(test::internetChecksum(&f[14], 20), 0);
  EXPECT_EQ(test::internetChecksum(&f[34], f.size() - 34), 0);
}
void expectIcmpv6ChecksumValid(const Frame& f) {
  ASSERT_GE(f.size(), 62u);
  const size_t icmp_len = f.size() - 54;
  Frame pseudo(f.begin() + 22, f.begin() + 54);  // source, destination
  pseudo.insert(pseudo.end(), {0, 0, static_cast<uint8_t>(icmp_len >> 8), static_cast<uint8_t>(icmp_len), 0, 0, 0, 58});
  pseudo.insert(pseudo.end(), f.begin() + 54, f.end());
  EXPECT_EQ(test::internetChecksum(pseudo.data(), pseudo.size()), 0);
}

// Sets a 16-bit field and fixes the IPv4 header checksum (for variants).
void set16(Frame& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}
void fixIpv4Checksum(Frame& f) {
  set16(f, 24, 0);
  set16(f, 24, test::internetChecksum(&f[14], (f[14] & 0x0f) * 4u));
}

TEST(Ipv4ErrorTest, TimeExceededHasExactBytes) {
  TestMbuf m(kUdpTtl1);
  ASSERT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNone);
  EXPECT_EQ(m.frame(), kUdpTtl1TimeExceeded);
  EXPECT_EQ(m.get()->pkt_len, kUdpTtl1TimeExceeded.size());
  EXPECT_EQ(m.get()->data_off, kHeadroom - kIpv4ErrorPrepend);
  expectIpv4ChecksumsValid(m.frame());
}

TEST(Ipv4ErrorTest, EthernetPaddingIsNotQuoted) {
  // ICMP echo request of 28 bytes in a 60-byte frame: 18 bytes of padding.
  Frame f = kUdpTtl1;
  f[23] = 1;  // ICMP
  set16(f, 16, 28);
  f[34] = 8;  // echo request
  fixIpv4Checksum(f);
  TestMbuf m(f);
  ASSERT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNone);
  const Frame out = m.frame();
  ASSERT_EQ(out.size(), 14u + 28 + 28);
  EXPECT_EQ(Frame(out.begin() + 42, out.end()), Frame(f.begin() + 14, f.begin() + 42));
  EXPECT_EQ(out[16], 0);
  EXPECT_EQ(out[17], 56);  // total length: 20 + 8 + 28
  expectIpv4ChecksumsValid(out);
}

TEST(Ipv4ErrorTest, LongDatagramIsQuotedUpTo576Bytes) {
  test::UdpFrameSpec s{*MacAddress::parse("02:00:0a:f4:00:0a"), *MacAddress::parse("02:00:0a:f4:00:01"),
                       *Ipv4Address::parse("10.244.0.10"), *Ipv4Address::parse("10.244.0.11")};
  s.ttl = 1;
  s.frame_len = 1514;
  const Frame f = test::udpFrame(s);
  TestMbuf m(f);
  ASSERT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNone);
  const Frame out = m.frame();
  ASSERT_EQ(out.size(), 14u + 576);
  EXPECT_EQ(out[16] << 8 | out[17], 576);
  EXPECT_EQ(Frame(out.begin() + 42, out.end()), Frame(f.begin() + 14, f.begin() + 14 + 548));
  expectIpv4ChecksumsValid(out);
}

TEST(Ipv4ErrorTest, FragmentationNeededCarriesTheNextHopMtu) {
  Ipv4ErrorParams p = v4Params();
  p.type = kIpv4DestinationUnreachable;
  p.code = kIpv4CodeFragmentationNeeded;
  p.next_hop_mtu = 1450;
  TestMbuf m(kUdpTtl1);
  ASSERT_EQ(buildIpv4Error(m.get(), p), Refusal::kNone);
  Frame out = m.frame();
  EXPECT_EQ(Frame(out.begin() + 34, out.begin() + 42), (Frame{3, 4, out[36], out[37], 0, 0, 0x05, 0xaa}));
  expectIpv4ChecksumsValid(out);
  // Elsewhere the field is unused: zero whatever the parameter says.
  p.type = kIpv4TimeExceeded;
  p.code = kIpv4CodeTtlExceeded;
  TestMbuf m2(kUdpTtl1);
  ASSERT_EQ(buildIpv4Error(m2.get(), p), Refusal::kNone);
  EXPECT_EQ(m2.frame(), kUdpTtl1TimeExceeded);
}

TEST(Ipv4ErrorTest, OffloadFlagsOfTheReceivedFrameAreCleared) {
  TestMbuf m(kUdpTtl1);
  m.get()->ol_flags = RTE_MBUF_F_RX_RSS_HASH | RTE_MBUF_F_RX_IP_CKSUM_GOOD;
  m.get()->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP;
  ASSERT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNone);
  EXPECT_EQ(m.get()->ol_flags, 0u);
  EXPECT_EQ(m.get()->packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_ICMP);
}

struct Case {
  const char* what;
  Frame frame;
  Refusal want;
};

// kUdpTtl1 with `edit` applied and its header checksum fixed.
Frame variant(void (*edit)(Frame&)) {
  Frame f = kUdpTtl1;
  edit(f);
  if (f.size() >= 34 && (f[14] & 0x0f) >= 5 && f.size() >= 14u + (f[14] & 0x0f) * 4u) fixIpv4Checksum(f);
  return f;
}
Frame icmpOfType(uint8_t type) {
  Frame f = kUdpTtl1;
  f[23] = 1;
  f[34] = type;
  fixIpv4Checksum(f);
  return f;
}

TEST(Ipv4ErrorTest, WhenNoErrorIsSent) {
  std::vector<Case> cases = {
      {"echo request", icmpOfType(8), Refusal::kNone},
      {"echo reply", icmpOfType(0), Refusal::kNone},
      {"timestamp", icmpOfType(13), Refusal::kNone},
      {"destination unreachable", icmpOfType(3), Refusal::kAboutIcmpError},
      {"source quench", icmpOfType(4), Refusal::kAboutIcmpError},
      {"redirect", icmpOfType(5), Refusal::kAboutIcmpError},
      {"time exceeded", icmpOfType(11), Refusal::kAboutIcmpError},
      {"parameter problem", icmpOfType(12), Refusal::kAboutIcmpError},
      {"unassigned type 1", icmpOfType(1), Refusal::kAboutIcmpError},
      {"type 40", icmpOfType(40), Refusal::kAboutIcmpError},
      {"first fragment (MF)", variant([](Frame& f) { set16(f, 20, 0x2000); }), Refusal::kNone},
      {"DF", variant([](Frame& f) { set16(f, 20, 0x4000); }), Refusal::kNone},
      {"later fragment", variant([](Frame& f) { set16(f, 20, 0x0001); }), Refusal::kNotFirstFragment},
      {"last fragment", variant([](Frame& f) { set16(f, 20, 0x00b9); }), Refusal::kNotFirstFragment},
      {"multicast destination", variant([](Frame& f) { f[30] = 224, f[31] = 0, f[32] = 0, f[33] = 5; }),
       Refusal::kMulticastDestination},
      {"limited broadcast", variant([](Frame& f) { std::memset(&f[30], 0xff, 4); }), Refusal::kMulticastDestination},
      {"link-layer broadcast", variant([](Frame& f) { std::memset(&f[0], 0xff, 6); }), Refusal::kMulticastDestination},
      {"link-layer multicast", variant([](Frame& f) { f[0] = 0x01, f[1] = 0x00, f[2] = 0x5e; }),
       Refusal::kMulticastDestination},
      {"source 0.0.0.0", variant([](Frame& f) { std::memset(&f[26], 0, 4); }), Refusal::kSourceNotUnique},
      {"source 0.1.2.3", variant([](Frame& f) { f[26] = 0; }), Refusal::kSourceNotUnique},
      {"source loopback", variant([](Frame& f) { f[26] = 127; }), Refusal::kSourceNotUnique},
      {"source multicast", variant([](Frame& f) { f[26] = 239; }), Refusal::kSourceNotUnique},
      {"source class E", variant([](Frame& f) { f[26] = 240; }), Refusal::kSourceNotUnique},
      {"source broadcast", variant([](Frame& f) { std::memset(&f[26], 0xff, 4); }), Refusal::kSourceNotUnique},
      {"group source MAC", variant([](Frame& f) { f[6] = 0x03; }), Refusal::kSourceNotUnique},
      {"shorter than IPv4", Frame(kUdpTtl1.begin(), kUdpTtl1.begin() + 33), Refusal::kMalformed},
      {"Ethernet only", Frame(kUdpTtl1.begin(), kUdpTtl1.begin() + 14), Refusal::kMalformed},
      {"empty", Frame{}, Refusal::kMalformed},
      {"IPv6 EtherType", variant([](Frame& f) { set16(f, 12, 0x86dd); }), Refusal::kMalformed},
      {"VLAN tagged", variant([](Frame& f) { set16(f, 12, 0x8100); }), Refusal::kMalformed},
      {"version 6", variant([](Frame& f) { f[14] = 0x65; }), Refusal::kMalformed},
      {"IHL 4", variant([](Frame& f) { f[14] = 0x44; }), Refusal::kMalformed},
      {"IHL beyond the frame", variant([](Frame& f) { f[14] = 0x4f; }), Refusal::kMalformed},
      {"total length beyond the frame", variant([](Frame& f) { set16(f, 16, 47); }), Refusal::kMalformed},
      {"total length below IHL", variant([](Frame& f) { set16(f, 16, 19); }), Refusal::kMalformed},
      {"ICMP without its type",
       [] {
         Frame f = icmpOfType(8);
         set16(f, 16, 20);
         fixIpv4Checksum(f);
         return f;
       }(),
       Refusal::kMalformed},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ipv4ErrorRefusal(c.frame.data(), static_cast<uint32_t>(c.frame.size())), c.want) << c.what;
    TestMbuf m(c.frame);
    EXPECT_EQ(buildIpv4Error(m.get(), v4Params()), c.want) << c.what;
    if (c.want == Refusal::kNone) {
      expectIpv4ChecksumsValid(m.frame());
    } else {
      EXPECT_EQ(m.frame(), c.frame) << c.what << ": a refused frame is left as it was";
      EXPECT_EQ(m.get()->data_off, kHeadroom) << c.what;
    }
  }
}

TEST(Ipv4ErrorTest, AnMbufItMayNotRewriteIsRefused) {
  {
    TestMbuf m(kUdpTtl1, kIpv4ErrorPrepend - 1);
    EXPECT_EQ(ipv4ErrorRefusal(m.get()), Refusal::kNotWritable);
    EXPECT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNotWritable);
    EXPECT_EQ(m.frame(), kUdpTtl1);
  }
  {
    TestMbuf m(kUdpTtl1, kIpv4ErrorPrepend);  // exactly enough headroom
    EXPECT_EQ(ipv4ErrorRefusal(m.get()), Refusal::kNone);
    EXPECT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNone);
    EXPECT_EQ(m.frame(), kUdpTtl1TimeExceeded);
    EXPECT_EQ(m.get()->data_off, 0);
  }
  {
    TestMbuf m(kUdpTtl1);
    rte_mbuf_refcnt_set(m.get(), 2);  // shared (a clone holds it too)
    EXPECT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNotWritable);
  }
  {
    TestMbuf m(kUdpTtl1);
    m.get()->ol_flags = RTE_MBUF_F_INDIRECT;
    EXPECT_EQ(buildIpv4Error(m.get(), v4Params()), Refusal::kNotWritable);
    m.get()->ol_flags = 0;
  }
}

TEST(Ipv6ErrorTest, TimeExceededHasExactBytes) {
  TestMbuf m(kUdp6HopLimit1);
  ASSERT_EQ(buildIpv6Error(m.get(), v6Params()), Refusal::kNone);
  EXPECT_EQ(m.frame(), kUdp6TimeExceeded);
  EXPECT_EQ(m.get()->data_off, kHeadroom - kIpv6ErrorPrepend);
  EXPECT_EQ(m.get()->packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_ICMP);
  expectIcmpv6ChecksumValid(m.frame());
}

TEST(Ipv6ErrorTest, PacketTooBigCarriesTheMtu) {
  TestMbuf m(kUdp6HopLimit1);
  ASSERT_EQ(buildIpv6Error(m.get(), v6Params(kIpv6PacketTooBig, 1400)), Refusal::kNone);
  EXPECT_EQ(m.frame(), kUdp6PacketTooBig1400);
  expectIcmpv6ChecksumValid(m.frame());
}

// kUdp6HopLimit1 grown to a payload of `payload` bytes (UDP length fixed;
// its checksum is not read by the builder).
Frame udp6OfPayload(size_t payload) {
  Frame f = kUdp6HopLimit1;
  f.resize(14 + 40 + payload);
  for (size_t i = 14 + 40 + 8; i < f.size(); ++i) f[i] = static_cast<uint8_t>(i * 7);
  set16(f, 18, static_cast<uint16_t>(payload));
  set16(f, 58, static_cast<uint16_t>(payload));
  return f;
}

TEST(Ipv6ErrorTest, LongPacketIsQuotedUpTo1280Bytes) {
  const Frame f = udp6OfPayload(1460);  // a 1500-byte packet
  TestMbuf m(f);
  ASSERT_EQ(buildIpv6Error(m.get(), v6Params()), Refusal::kNone);
  const Frame out = m.frame();
  ASSERT_EQ(out.size(), 14u + 1280);
  EXPECT_EQ(out[18] << 8 | out[19], 1280 - 40);
  EXPECT_EQ(Frame(out.begin() + 62, out.end()), Frame(f.begin() + 14, f.begin() + 14 + 1232));
  expectIcmpv6ChecksumValid(out);
  // One that fits is quoted whole, padding excluded.
  Frame padded = udp6OfPayload(100);
  const size_t packet_end = padded.size();
  padded.resize(packet_end + 30, 0);
  TestMbuf m2(padded);
  ASSERT_EQ(buildIpv6Error(m2.get(), v6Params()), Refusal::kNone);
  const Frame out2 = m2.frame();
  ASSERT_EQ(out2.size(), 14u + 48 + 140);
  EXPECT_EQ(Frame(out2.begin() + 62, out2.end()), Frame(padded.begin() + 14, padded.begin() + packet_end));
  expectIcmpv6ChecksumValid(out2);
}

// kUdp6HopLimit1 with the given bytes between the IPv6 header and the UDP
// header (extension headers), the IPv6 next header set to `first` and the
// payload length fixed; the upper layer is then whatever the headers name.
Frame udp6With(uint8_t first, const Frame& ext, const Frame& upper) {
  Frame f(kUdp6HopLimit1.begin(), kUdp6HopLimit1.begin() + 54);
  f[20] = first;
  f.insert(f.end(), ext.begin(), ext.end());
  f.insert(f.end(), upper.begin(), upper.end());
  set16(f, 18, static_cast<uint16_t>(f.size() - 54));
  return f;
}
const Frame kIcmpv6Error = {1, 0, 0, 0, 0, 0, 0, 0};       // destination unreachable
const Frame kIcmpv6Echo = {128, 0, 0, 0, 0, 0, 0, 0};      // echo request
const Frame kUdpHeader = {0x0f, 0xa0, 0, 0x35, 0, 8, 0, 0};
Frame hopByHop(uint8_t next) { return {next, 0, 1, 4, 0, 0, 0, 0}; }  // PadN
Frame fragment(uint8_t next, uint16_t offset_flags) {
  return {next, 0, static_cast<uint8_t>(offset_flags >> 8), static_cast<uint8_t>(offset_flags), 0, 0, 0, 9};
}
Frame concat(Frame a, const Frame& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Frame v6variant(void (*edit)(Frame&)) {
  Frame f = kUdp6HopLimit1;
  edit(f);
  return f;
}

TEST(Ipv6ErrorTest, WhenNoErrorIsSent) {
  std::vector<Case> cases = {
      {"ICMPv6 error", udp6With(58, {}, kIcmpv6Error), Refusal::kAboutIcmpError},
      {"ICMPv6 type 127", udp6With(58, {}, Frame{127, 0, 0, 0, 0, 0, 0, 0}), Refusal::kAboutIcmpError},
      {"ICMPv6 echo", udp6With(58, {}, kIcmpv6Echo), Refusal::kNone},
      {"ICMPv6 error behind hop-by-hop and destination options",
       udp6With(0, concat(hopByHop(60), hopByHop(58)), kIcmpv6Error), Refusal::kAboutIcmpError},
      {"ICMPv6 echo behind hop-by-hop", udp6With(0, hopByHop(58), kIcmpv6Echo), Refusal::kNone},
      {"ICMPv6 error behind a routing header",
       udp6With(43, Frame{58, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, kIcmpv6Error),
       Refusal::kAboutIcmpError},
      {"ICMPv6 error behind AH", udp6With(51, Frame{58, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, kIcmpv6Error),
       Refusal::kAboutIcmpError},
      {"first fragment of an ICMPv6 error", udp6With(44, fragment(58, 0x0001), kIcmpv6Error),
       Refusal::kAboutIcmpError},
      {"later fragment of ICMPv6", udp6With(44, fragment(58, 0x0008), kIcmpv6Echo), Refusal::kNotFirstFragment},
      {"later fragment of UDP", udp6With(44, fragment(17, 0x0008), kUdpHeader), Refusal::kNone},
      {"extension header cut short", udp6With(0, Frame{58, 0, 0, 0}, {}), Refusal::kMalformed},
      {"extension header longer than the packet", udp6With(0, Frame{17, 4, 0, 0, 0, 0, 0, 0}, kUdpHeader),
       Refusal::kMalformed},
      {"ICMPv6 without its type", udp6With(0, hopByHop(58), {}), Refusal::kMalformed},
      {"multicast destination", v6variant([](Frame& f) { f[38] = 0xff, f[39] = 0x02; }),
       Refusal::kMulticastDestination},
      {"link-layer multicast", v6variant([](Frame& f) { f[0] = 0x33, f[1] = 0x33; }), Refusal::kMulticastDestination},
      {"unspecified source", v6variant([](Frame& f) { std::memset(&f[22], 0, 16); }), Refusal::kSourceNotUnique},
      {"loopback source",
       v6variant([](Frame& f) {
         std::memset(&f[22], 0, 16);
         f[37] = 1;
       }),
       Refusal::kSourceNotUnique},
      {"multicast source", v6variant([](Frame& f) { f[22] = 0xff; }), Refusal::kSourceNotUnique},
      {"group source MAC", v6variant([](Frame& f) { f[6] = 0x33; }), Refusal::kSourceNotUnique},
      {"payload length beyond the frame", v6variant([](Frame& f) { set16(f, 18, 21); }), Refusal::kMalformed},
      {"version 4", v6variant([](Frame& f) { f[14] = 0x40; }), Refusal::kMalformed},
      {"IPv4 EtherType", v6variant([](Frame& f) { set16(f, 12, 0x0800); }), Refusal::kMalformed},
      {"shorter than IPv6", Frame(kUdp6HopLimit1.begin(), kUdp6HopLimit1.begin() + 53), Refusal::kMalformed},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ipv6ErrorRefusal(c.frame.data(), static_cast<uint32_t>(c.frame.size()), kIpv6TimeExceeded), c.want)
        << c.what;
    TestMbuf m(c.frame);
    EXPECT_EQ(buildIpv6Error(m.get(), v6Params()), c.want) << c.what;
    if (c.want == Refusal::kNone) {
      expectIcmpv6ChecksumValid(m.frame());
    } else {
      EXPECT_EQ(m.frame(), c.frame) << c.what << ": a refused frame is left as it was";
    }
  }
}

TEST(Ipv6ErrorTest, PacketTooBigMayAnswerMulticastAndNothingElseMay) {
  const Frame to_group = v6variant([](Frame& f) {
    f[38] = 0xff;
    f[39] = 0x0e;
    f[0] = 0x33;
    f[1] = 0x33;
  });
  EXPECT_EQ(ipv6ErrorRefusal(to_group.data(), static_cast<uint32_t>(to_group.size()), kIpv6TimeExceeded),
            Refusal::kMulticastDestination);
  EXPECT_EQ(ipv6ErrorRefusal(to_group.data(), static_cast<uint32_t>(to_group.size()), kIpv6DestinationUnreachable),
            Refusal::kMulticastDestination);
  TestMbuf m(to_group);
  ASSERT_EQ(buildIpv6Error(m.get(), v6Params(kIpv6PacketTooBig, 1280)), Refusal::kNone);
  expectIcmpv6ChecksumValid(m.frame());
  // Still never about an ICMPv6 error, nor from a group source.
  const Frame error_to_group = udp6With(58, {}, kIcmpv6Error);
  Frame e = error_to_group;
  e[38] = 0xff;
  EXPECT_EQ(ipv6ErrorRefusal(e.data(), static_cast<uint32_t>(e.size()), kIpv6PacketTooBig), Refusal::kAboutIcmpError);
}

TEST(Ipv6ErrorTest, AnMbufItMayNotRewriteIsRefused) {
  TestMbuf m(kUdp6HopLimit1, kIpv6ErrorPrepend - 1);
  EXPECT_EQ(ipv6ErrorRefusal(m.get(), kIpv6TimeExceeded), Refusal::kNotWritable);
  EXPECT_EQ(buildIpv6Error(m.get(), v6Params()), Refusal::kNotWritable);
  EXPECT_EQ(m.frame(), kUdp6HopLimit1);
  TestMbuf exact(kUdp6HopLimit1, kIpv6ErrorPrepend);
  EXPECT_EQ(buildIpv6Error(exact.get(), v6Params()), Refusal::kNone);
  EXPECT_EQ(exact.frame(), kUdp6TimeExceeded);
}

// The limiter on a hand-driven clock: 1000 cycles a second, so at 100
// errors a second one token is earned every 10 cycles, and the bucket
// holds 5 (a twentieth of a second).
TEST(IcmpErrorLimiterTest, TokenBucketOnAnInjectedClock) {
  IcmpErrorLimiter l({1000, 100});
  EXPECT_EQ(IcmpErrorLimiter::burstFor(100), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(l.admit(0, 0)) << i;  // starts full
  EXPECT_FALSE(l.admit(0, 0));
  EXPECT_FALSE(l.admit(0, 9));
  EXPECT_TRUE(l.admit(0, 10));
  EXPECT_FALSE(l.admit(0, 19));
  EXPECT_TRUE(l.admit(0, 25));   // one earned at 20; the partial 5 cycles carry over
  EXPECT_TRUE(l.admit(0, 30));
  EXPECT_FALSE(l.admit(0, 30));
  // A long pause fills the bucket, no more.
  int sent = 0;
  while (l.admit(0, 1'000'000)) ++sent;
  EXPECT_EQ(sent, 5);
}

TEST(IcmpErrorLimiterTest, RateZeroSendsNothingAndRatesChangeLive) {
  IcmpErrorLimiter l({1000, 0});
  EXPECT_FALSE(l.admit(0, 0));
  EXPECT_FALSE(l.admit(0, 1'000'000));
  l.setRate(100);  // starts full at its first use
  int sent = 0;
  while (l.admit(0, 2'000'000)) ++sent;
  EXPECT_EQ(sent, 5);
  l.setRate(20);  // burst 1: nothing earned yet, nothing kept
  EXPECT_FALSE(l.admit(0, 2'000'000));
  EXPECT_TRUE(l.admit(0, 2'000'050));  // one token per 50 cycles
  EXPECT_FALSE(l.admit(0, 2'000'099));
  l.setRate(0);
  EXPECT_FALSE(l.admit(0, 9'000'000));
  EXPECT_EQ(IcmpErrorLimiter::burstFor(1000), 50u);  // Linux's icmp_msgs_burst at its default rate
  EXPECT_EQ(IcmpErrorLimiter::burstFor(1), 1u);
}

// Two ports polled: each has half the rate and half the burst as its share.
// Port A sending nothing but expiring packets spends the PMD's tokens down
// to half the burst and then only its own share; the half kept back still
// answers port B at once, and over time A gets no more than its share of
// the rate while B's errors keep coming.
TEST(IcmpErrorLimiterTest, OnePortExhaustingItsShareDoesNotStarveAnother) {
  constexpr uint16_t kPortA = 3, kPortB = 7;
  IcmpErrorLimiter l({1000, 200, 16});  // burst 10, a token every 5 cycles; shares: 5, every 10 cycles
  l.setPortCount(2);
  int a_sent = 0;
  while (l.admit(kPortA, 0)) ++a_sent;
  EXPECT_EQ(a_sent, 5) << "the PMD's tokens above half the burst, which also spend A's share of 5";
  EXPECT_FALSE(l.admit(kPortA, 0)) << "A's share is spent";
  int b_sent = 0;
  while (l.admit(kPortB, 0)) ++b_sent;
  EXPECT_EQ(b_sent, 5) << "B's whole share from the half kept back";

  // A keeps flooding: over 1000 cycles the PMD earns 200 tokens and A's
  // share 100. B asks once every 10 cycles and is always answered.
  a_sent = b_sent = 0;
  int b_asked = 0;
  for (uint64_t now = 1; now <= 1000; ++now) {
    a_sent += l.admit(kPortA, now);
    if (now % 10 == 0) {
      ++b_asked;
      b_sent += l.admit(kPortB, now);
    }
  }
  EXPECT_EQ(b_sent, b_asked) << "every one of B's errors went out";
  EXPECT_LE(a_sent, 100 + 1) << "A took no more than its share of the rate (and the PMD's surplus)";
}

TEST(IcmpErrorLimiterTest, OnePortPolledHasTheWholeBucket) {
  IcmpErrorLimiter l({1000, 100, 16});
  l.setPortCount(1);
  int sent = 0;
  while (l.admit(2, 0)) ++sent;
  EXPECT_EQ(sent, 5);
}

TEST(IcmpErrorLimiterTest, RefusalNamesAreDistinct) {
  EXPECT_STREQ(refusalName(Refusal::kNone), "none");
  EXPECT_STREQ(refusalName(Refusal::kAboutIcmpError), "about_icmp_error");
  EXPECT_STREQ(refusalName(Refusal::kNotWritable), "not_writable");
}

// Pod 10.244.0.10 pings the gateway 10.244.0.1 (identifier 0x1234, sequence
// 1, "abcdefgh", TTL 63, DF, 6 bytes of Ethernet padding), and the reply:
// the padding gone, addresses swapped, TTL 64, type 0 (bytes and checksums
// computed apart from this code).
const Frame kEchoRequest = fromHex(
    "02000af4000102000af4000a080045000024432140003f01e2c50af4000a0af4000108005435123400016162636465666768000000000000");
const Frame kEchoReply = fromHex(
    "02000af4000a02000af40001080045000024432140004001e1c50af400010af4000a00005c35123400016162636465666768");
// 2001:db8:1::a pings the IPv6 gateway 2001:db8:1::1 (flow label kept).
const Frame kEcho6Request = fromHex(
    "02000af4000102000af4000a86dd6001234500103a3f20010db800010000000000000000000a20010db800010000000000000000"
    "00018000806b123400016162636465666768");
const Frame kEcho6Reply = fromHex(
    "02000af4000a02000af4000186dd6001234500103a4020010db800010000000000000000000120010db800010000000000000000"
    "000a81007f6b123400016162636465666768");
const rte_ether_addr kGatewayMac = {{0x02, 0x00, 0x0a, 0xf4, 0x00, 0x01}};

TEST(EchoReplyTest, Ipv4ReplyHasExactBytes) {
  TestMbuf m(kEchoRequest);
  m.get()->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
  ASSERT_EQ(buildIpv4EchoReply(m.get(), kGatewayMac), Refusal::kNone);
  EXPECT_EQ(m.frame(), kEchoReply);
  EXPECT_EQ(m.get()->pkt_len, kEchoReply.size());
  EXPECT_EQ(m.get()->ol_flags, 0u);
  EXPECT_EQ(m.get()->data_off, kHeadroom);  // in place: nothing prepended
  expectIpv4ChecksumsValid(m.frame());
}

TEST(EchoReplyTest, Ipv6ReplyHasExactBytes) {
  TestMbuf m(kEcho6Request);
  ASSERT_EQ(buildIpv6EchoReply(m.get(), kGatewayMac), Refusal::kNone);
  EXPECT_EQ(m.frame(), kEcho6Reply);
  expectIcmpv6ChecksumValid(m.frame());
}

TEST(EchoReplyTest, WhenNoReplyIsSent) {
  auto v4 = [](void (*change)(Frame&)) {
    Frame f = kEchoRequest;
    change(f);
    fixIpv4Checksum(f);
    return f;
  };
  const std::vector<Case> cases = {
      {"echo reply", v4([](Frame& f) { f[34] = 0; }), Refusal::kMalformed},
      {"code 1", v4([](Frame& f) { f[35] = 1; }), Refusal::kMalformed},
      {"UDP", v4([](Frame& f) { f[23] = 17; }), Refusal::kMalformed},
      {"truncated datagram", v4([](Frame& f) { set16(f, 16, 200); }), Refusal::kMalformed},
      {"first fragment (MF)", v4([](Frame& f) { set16(f, 20, 0x2000); }), Refusal::kNotFirstFragment},
      {"later fragment", v4([](Frame& f) { set16(f, 20, 0x0001); }), Refusal::kNotFirstFragment},
      {"link-layer broadcast", v4([](Frame& f) { std::memset(&f[0], 0xff, 6); }), Refusal::kMulticastDestination},
      {"source 0.0.0.0", v4([](Frame& f) { std::memset(&f[26], 0, 4); }), Refusal::kSourceNotUnique},
      {"source loopback", v4([](Frame& f) { f[26] = 127; }), Refusal::kSourceNotUnique},
      {"source broadcast", v4([](Frame& f) { std::memset(&f[26], 0xff, 4); }), Refusal::kSourceNotUnique},
      {"group source MAC", v4([](Frame& f) { f[6] = 0x03; }), Refusal::kSourceNotUnique},
  };
  for (const Case& c : cases) {
    TestMbuf m(c.frame);
    EXPECT_EQ(buildIpv4EchoReply(m.get(), kGatewayMac), c.want) << c.what;
    EXPECT_EQ(m.frame(), c.frame) << c.what << ": left as it was";
  }
  const std::vector<Case> cases6 = {
      {"echo reply", [] { Frame f = kEcho6Request; f[54] = 129; return f; }(), Refusal::kMalformed},
      {"behind an extension header", [] { Frame f = kEcho6Request; f[20] = 0; return f; }(), Refusal::kMalformed},
      {"multicast destination", [] { Frame f = kEcho6Request; f[38] = 0xff; return f; }(),
       Refusal::kMulticastDestination},
      {"unspecified source", [] { Frame f = kEcho6Request; std::memset(&f[22], 0, 16); return f; }(),
       Refusal::kSourceNotUnique},
  };
  for (const Case& c : cases6) {
    TestMbuf m(c.frame);
    EXPECT_EQ(buildIpv6EchoReply(m.get(), kGatewayMac), c.want) << c.what;
    EXPECT_EQ(m.frame(), c.frame) << c.what << ": left as it was";
  }
  TestMbuf shared(kEchoRequest);
  rte_mbuf_refcnt_set(shared.get(), 2);
  EXPECT_EQ(buildIpv4EchoReply(shared.get(), kGatewayMac), Refusal::kNotWritable);
  EXPECT_EQ(shared.frame(), kEchoRequest);
}

}  // namespace
}  // namespace sluice::icmp
