// Header templates: exact outer bytes, checksum, source port, and that what
// encap writes is what decap accepts.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "dataplane/datapath/overlay/encap_template.h"
#include "tests/support/frames.h"

namespace sluice::vxlan {
namespace {

EncapParams params() {
  EncapParams p{};
  const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01}, dst[6] = {0x02, 0, 0, 0, 0, 0x02}, in[6] = {0x02, 0, 0, 0, 0, 0x03};
  std::memcpy(p.src_mac, src, 6);
  std::memcpy(p.dst_mac, dst, 6);
  std::memcpy(p.inner_dst, in, 6);
  p.src_ip_be = Ipv4Address::parse("192.168.77.1")->networkOrder();
  p.dst_ip_be = Ipv4Address::parse("192.168.77.2")->networkOrder();
  p.vni = 0x123456;
  p.resolved = true;
  p.tunnel = 3;
  return p;
}

TEST(VxlanEncap, OuterHeadersAreExact) {
  const EncapTemplate t = buildEncapTemplate(params());
  EXPECT_TRUE(t.valid);
  EXPECT_EQ(t.tunnel, 3);
  uint8_t out[kOuterLen];
  writeOuterHeaders(t, 100, 0x12345678, true, out);
  const uint8_t expected_prefix[] = {
      0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,  // Ethernet
      0x45, 0x00, 0x00, 136, 0x00, 0x00, 0x40, 0x00, 64, 17};       // IPv4 up to protocol: 20+8+8+100
  EXPECT_EQ(0, std::memcmp(out, expected_prefix, sizeof(expected_prefix)));
  EXPECT_EQ(0, test::internetChecksum(out + 14, 20)) << "software checksum must verify";
  const uint8_t addrs[] = {192, 168, 77, 1, 192, 168, 77, 2};
  EXPECT_EQ(0, std::memcmp(out + 26, addrs, 8));
  const uint16_t sport = static_cast<uint16_t>((out[34] << 8) | out[35]);
  EXPECT_EQ(sport, outerSourcePort(0x12345678));
  EXPECT_GE(sport, 49152);
  const uint8_t udp_rest[] = {0x12, 0xb5, 0, 116, 0, 0};  // 4789, length 8+8+100, checksum 0
  EXPECT_EQ(0, std::memcmp(out + 36, udp_rest, 6));
  const uint8_t vx[] = {0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0};
  EXPECT_EQ(0, std::memcmp(out + 42, vx, 8));
}

TEST(VxlanEncap, OffloadLeavesTheChecksumToTheDevice) {
  const EncapTemplate t = buildEncapTemplate(params());
  uint8_t out[kOuterLen];
  writeOuterHeaders(t, 64, 1, false, out);
  EXPECT_EQ(out[24], 0);
  EXPECT_EQ(out[25], 0);
}

TEST(VxlanEncap, ChecksumIsRightForEveryLength) {
  const EncapTemplate t = buildEncapTemplate(params());
  uint8_t out[kOuterLen];
  for (uint32_t len = 14; len <= 9000; len += 7) {
    writeOuterHeaders(t, len, len * 2654435761u, true, out);
    ASSERT_EQ(0, test::internetChecksum(out + 14, 20)) << len;
  }
}

TEST(VxlanEncap, SourcePortSpreadsFlowsAndStaysInTheDynamicRange) {
  std::set<uint16_t> ports;
  for (uint32_t h = 0; h < 4096; ++h) {
    const uint16_t p = outerSourcePort(h * 0x9e3779b9u);
    ASSERT_GE(p, 49152);
    ports.insert(p);
  }
  EXPECT_GT(ports.size(), 3000u);  // 4096 hashes into 16384 ports: few collide
  EXPECT_EQ(outerSourcePort(77), outerSourcePort(77));
}

TEST(VxlanEncap, WhatEncapWritesDecapAccepts) {
  const EncapTemplate t = buildEncapTemplate(params());
  test::UdpFrameSpec s;
  s.src_mac = *MacAddress::parse("02:00:00:00:00:aa");
  s.dst_mac = *MacAddress::parse("02:00:00:00:00:bb");
  s.src_ip = *Ipv4Address::parse("10.244.0.5");
  s.dst_ip = *Ipv4Address::parse("10.245.0.2");
  const test::Frame inner = test::udpFrame(s);
  test::Frame f(kOuterLen + inner.size());
  writeOuterHeaders(t, static_cast<uint32_t>(inner.size()), 99, true, f.data());
  std::memcpy(f.data() + kOuterLen, inner.data(), inner.size());
  const DecapConfig peer{params().dst_ip_be, 0x123456};
  const DecapInfo d = classifyUplinkFrame(f.data(), static_cast<uint32_t>(f.size()), peer);
  ASSERT_EQ(d.cls, UplinkClass::kVxlan);
  EXPECT_EQ(d.inner_ofs, kOuterLen);
  EXPECT_EQ(d.inner_len, inner.size());
  EXPECT_EQ(d.outer_src_be, params().src_ip_be);
}

}  // namespace
}  // namespace sluice::vxlan
