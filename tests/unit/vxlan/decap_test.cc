// classifyUplinkFrame: every check, in the order the header documents.
#include <gtest/gtest.h>

#include "dataplane/datapath/overlay/vxlan_decap.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice::vxlan {
namespace {

using test::Frame;
using test::OuterSpec;

const DecapConfig kCfg{Ipv4Address{0xc0a84d01}.networkOrder(), 42};  // 192.168.77.1, VNI 42

Frame inner() {
  test::UdpFrameSpec s;
  s.src_mac = *MacAddress::parse("02:00:00:00:00:aa");
  s.dst_mac = *MacAddress::parse("02:00:00:00:00:bb");
  s.src_ip = *Ipv4Address::parse("10.245.0.2");
  s.dst_ip = *Ipv4Address::parse("10.244.0.5");
  return test::udpFrame(s);
}

DecapInfo classify(const Frame& f) { return classifyUplinkFrame(f.data(), static_cast<uint32_t>(f.size()), kCfg); }

TEST(VxlanDecap, AcceptsOurVniAndVtepAndLocatesTheInnerFrame) {
  const Frame in = inner();
  const Frame f = test::vxlanFrame(in);
  DecapInfo d = classify(f);
  ASSERT_EQ(d.cls, UplinkClass::kVxlan);
  EXPECT_EQ(d.inner_ofs, 50);
  EXPECT_EQ(d.inner_len, in.size());
  EXPECT_EQ(d.vni, 42u);
  EXPECT_EQ(d.outer_src_be, Ipv4Address::parse("192.168.77.2")->networkOrder());
  EXPECT_EQ(d.outer_dst_be, kCfg.vtep_ip_be);
  EXPECT_EQ(Frame(f.begin() + d.inner_ofs, f.end()), in);
}

// Inner IPv6 is decapsulated like inner IPv4 (only neighbor discovery is
// refused, below); an ICMPv6 message of another type, e.g. an echo request,
// and a frame too short to hold an ICMPv6 type are not taken for it.
TEST(VxlanDecap, InnerIpv6IsDecapsulated) {
  test::Udp6FrameSpec s;
  s.src_mac = *MacAddress::parse("02:00:00:00:00:aa");
  s.dst_mac = *MacAddress::parse("02:00:00:00:00:bb");
  s.src_ip = *Ipv6Address::parse("fd00:10:245::2");
  s.dst_ip = *Ipv6Address::parse("fd00:10:244::5");
  const Frame in = test::udp6Frame(s);
  DecapInfo d = classify(test::vxlanFrame(in));
  ASSERT_EQ(d.cls, UplinkClass::kVxlan);
  EXPECT_EQ(d.inner_len, in.size());

  Frame echo = in;
  echo[14 + 6] = 58;       // ICMPv6
  echo[14 + 40] = 128;     // echo request
  EXPECT_EQ(classify(test::vxlanFrame(echo)).cls, UplinkClass::kVxlan);
  Frame headers_only(echo.begin(), echo.begin() + 14 + 40);  // no room for a type
  EXPECT_EQ(classify(test::vxlanFrame(headers_only)).cls, UplinkClass::kVxlan);
}

TEST(VxlanDecap, OuterIpOptionsMoveTheInnerFrame) {
  OuterSpec o;
  o.version_ihl = 0x46;  // one option word
  const Frame f = test::vxlanFrame(inner(), o);
  DecapInfo d = classify(f);
  ASSERT_EQ(d.cls, UplinkClass::kVxlan);
  EXPECT_EQ(d.inner_ofs, 54);
}

TEST(VxlanDecap, EthernetPaddingIsNotPartOfTheInnerFrame) {
  const Frame in = inner();
  Frame f = test::vxlanFrame(in);
  f.resize(f.size() + 7, 0xee);
  DecapInfo d = classify(f);
  ASSERT_EQ(d.cls, UplinkClass::kVxlan);
  EXPECT_EQ(d.inner_len, in.size());
}

TEST(VxlanDecap, ArpIsHandedToTheArpHandler) {
  Frame f = test::arpRequest(*MacAddress::parse("02:00:00:00:00:01"), *Ipv4Address::parse("192.168.77.2"),
                             *Ipv4Address::parse("192.168.77.1"));
  EXPECT_EQ(classify(f).cls, UplinkClass::kArp);
}

struct BadCase {
  const char* what;
  Frame frame;
  DropReason reason;
};

TEST(VxlanDecap, MalformedAndForeignFramesAreDroppedWithTheirReason) {
  const Frame good = test::vxlanFrame(inner());
  std::vector<BadCase> cases;
  auto with = [&](const char* what, auto change, DropReason r) {
    OuterSpec o;
    change(o);
    cases.push_back({what, test::vxlanFrame(inner(), o), r});
  };
  with("wrong flags (I clear)", [](OuterSpec& o) { o.flags = 0x00; }, DropReason::kVxlanBadFlags);
  with("wrong flags (extra bit)", [](OuterSpec& o) { o.flags = 0x88; }, DropReason::kVxlanBadFlags);
  with("unknown VNI", [](OuterSpec& o) { o.vni = 43; }, DropReason::kVxlanUnknownVni);
  with("wrong VTEP", [](OuterSpec& o) { o.dst = *Ipv4Address::parse("192.168.77.9"); }, DropReason::kVxlanWrongVtep);
  with("first fragment (MF)", [](OuterSpec& o) { o.frag = 0x2000; }, DropReason::kVxlanFragment);
  with("later fragment (offset)", [](OuterSpec& o) { o.frag = 0x0010; }, DropReason::kVxlanFragment);
  with("IHL below 5", [](OuterSpec& o) { o.version_ihl = 0x44; }, DropReason::kVxlanBadOuterIp);
  with("IPv6 version in an IPv4 frame", [](OuterSpec& o) { o.version_ihl = 0x65; }, DropReason::kVxlanBadOuterIp);
  with("UDP to another port", [](OuterSpec& o) { o.udp_dst = 4790; }, DropReason::kUplinkNotVxlan);
  with("TCP", [](OuterSpec& o) { o.proto = 6; }, DropReason::kUplinkNotVxlan);
  // IHL 15 (60 bytes) on a frame whose IPv4 part is shorter than that.
  {
    Frame f = good;
    f[14] = 0x4f;
    f.resize(14 + 40);
    cases.push_back({"IHL 15 beyond the frame", f, DropReason::kVxlanTruncated});
  }
  for (size_t cut : {0, 13, 14 + 19, 14 + 20 + 7, 14 + 20 + 8 + 7, 14 + 20 + 16 + 13}) {
    Frame f(good.begin(), good.begin() + static_cast<long>(cut));
    cases.push_back({"truncated", f, DropReason::kVxlanTruncated});
  }
  {
    Frame f = good;
    f[14 + 20 + 4] = 0;  // UDP length 0
    f[14 + 20 + 5] = 8;
    cases.push_back({"UDP length below UDP+VXLAN", f, DropReason::kVxlanTruncated});
  }
  {
    Frame f = good;
    f[14 + 2] = 0;  // IPv4 total length 10 < IHL
    f[14 + 3] = 10;
    cases.push_back({"total length below the header", f, DropReason::kVxlanBadOuterIp});
  }
  {
    Frame f = good;
    f[12] = 0x86;
    f[13] = 0xdd;
    cases.push_back({"IPv6 outer", f, DropReason::kUplinkNotVxlan});
  }
  {
    Frame f = good;
    f[12] = 0x81;
    f[13] = 0x00;
    cases.push_back({"VLAN tag", f, DropReason::kUplinkNotVxlan});
  }
  {
    Frame arp = test::arpRequest(*MacAddress::parse("02:00:00:00:00:aa"), *Ipv4Address::parse("10.245.0.2"),
                                 *Ipv4Address::parse("10.244.0.5"));
    cases.push_back({"ARP inside the tunnel", test::vxlanFrame(arp), DropReason::kVxlanInnerArp});
  }
  {
    const Frame ns = test::neighborSolicitation(*MacAddress::parse("02:00:00:00:00:aa"),
                                                *Ipv6Address::parse("fd00:10:245::2"),
                                                *Ipv6Address::parse("fd00:10:244::5"));
    cases.push_back({"neighbor solicitation inside the tunnel", test::vxlanFrame(ns), DropReason::kVxlanInnerNd});
    Frame advert = ns;
    advert[14 + 40] = 136;  // neighbor advertisement: every neighbor discovery type is refused
    cases.push_back({"neighbor advertisement inside the tunnel", test::vxlanFrame(advert), DropReason::kVxlanInnerNd});
  }
  for (const BadCase& c : cases) {
    DecapInfo d = classify(c.frame);
    EXPECT_EQ(d.cls, UplinkClass::kDrop) << c.what;
    EXPECT_EQ(dropReasonName(d.reason), dropReasonName(c.reason)) << c.what;
  }
}

}  // namespace
}  // namespace sluice::vxlan
