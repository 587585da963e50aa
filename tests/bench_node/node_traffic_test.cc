// The node benchmark's traffic: exact bytes of each scenario's frames, the
// round-robin flow layout, and the pcap files net_pcap replays.
#include "bench/node/node_traffic.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

#include "bench/node/pcap_writer.h"

namespace sluice::bench {
namespace {

uint16_t get16(const test::Frame& f, size_t at) { return static_cast<uint16_t>(f[at] << 8 | f[at + 1]); }
uint32_t get32(const test::Frame& f, size_t at) { return static_cast<uint32_t>(get16(f, at)) << 16 | get16(f, at + 2); }
Ipv4Address ip(const char* text) { return *Ipv4Address::parse(text); }
MacAddress mac(const char* text) { return *MacAddress::parse(text); }

TEST(NodeTraffic, L3FrameOfFlow17GoesToPod1FromSourcePort1025) {
  const test::Frame f = flowFrame(Scenario::kL3, 17);
  ASSERT_EQ(f.size(), 60u);
  EXPECT_EQ(test::ethDst(f), mac("02:00:0a:f4:00:01"));  // the gateway
  EXPECT_EQ(test::ethSrc(f), mac("02:00:0a:f4:00:0a"));  // the source pod
  EXPECT_EQ(test::etherType(f), 0x0800);
  EXPECT_EQ(get32(f, 26), ip("10.244.0.10").value);
  EXPECT_EQ(get32(f, 30), ip("10.244.2.10").value);  // pod 17 % 16 = 1
  EXPECT_EQ(get16(f, 34), 1024 + 17 / 16);
  EXPECT_EQ(get16(f, 36), 5001);
  EXPECT_EQ(test::ipv4Ttl(f), 64);
  EXPECT_TRUE(test::ipv4ChecksumValid(f));
  EXPECT_EQ(test::udpSequence(f), 17u);
}

// --frame-size: the same flow, the frame padded to the length asked for
// (the IP and UDP lengths follow it).
TEST(NodeTraffic, L3FramesOf1514And9014BytesDifferOnlyInLengthAndPadding) {
  const test::Frame small = flowFrame(Scenario::kL3, 17);
  for (uint32_t len : {1514u, 9014u}) {
    const test::Frame f = flowFrame(Scenario::kL3, 17, len);
    ASSERT_EQ(f.size(), len);
    EXPECT_EQ(get16(f, 16), len - 14) << "IP total length";
    EXPECT_EQ(get16(f, 38), len - 34) << "UDP length";
    EXPECT_EQ(get32(f, 30), get32(small, 30));
    EXPECT_EQ(get16(f, 34), get16(small, 34));
    EXPECT_TRUE(test::ipv4ChecksumValid(f));
    EXPECT_EQ(test::udpSequence(f), 17u);
  }
}

TEST(NodeTraffic, L3v6FrameOfFlow17GoesToPod1OverIpv6) {
  const test::Frame f = flowFrame(Scenario::kL3v6, 17);
  ASSERT_EQ(f.size(), 66u);
  EXPECT_EQ(test::ethDst(f), mac("02:00:0a:f4:00:01"));  // the gateway
  EXPECT_EQ(test::ethSrc(f), mac("02:00:0a:f4:00:0a"));  // the source pod
  EXPECT_EQ(test::etherType(f), 0x86dd);
  EXPECT_EQ(f[21], 64);  // hop limit
  Ipv6Address src, dst;
  std::copy(f.begin() + 22, f.begin() + 38, src.bytes.begin());
  std::copy(f.begin() + 38, f.begin() + 54, dst.bytes.begin());
  EXPECT_EQ(src.toString(), "fd00:10:244::10");
  EXPECT_EQ(dst.toString(), "fd00:10:244::2:10");  // pod 17 % 16 = 1
  EXPECT_EQ(get16(f, 54), 1024 + 17 / 16);
  EXPECT_EQ(get16(f, 56), 5001);
  EXPECT_EQ(test::udp6Sequence(f), 17u);
  EXPECT_NE(describePlan().find("pod 1 10.244.2.10 02:00:0a:f4:02:0a 10.244.2.0/24 fd00:10:244::2:10\n"),
            std::string::npos);
}

TEST(NodeTraffic, EncapFrameGoesToTheRemotePodOfNodeK) {
  const test::Frame f = flowFrame(Scenario::kEncap, 35);  // k = 3
  ASSERT_EQ(f.size(), 60u);
  EXPECT_EQ(get32(f, 30), ip("10.245.3.10").value);
  EXPECT_TRUE(remotePodCidr(3).contains(remotePodIp(3)));
  EXPECT_EQ(get16(f, 34), 1024 + 2);
}

TEST(NodeTraffic, DecapFrameIsTheInnerFrameBehindVxlanToOurVtep) {
  const uint32_t flow = 21, k = flow % kPods;
  const test::Frame f = flowFrame(Scenario::kDecap, flow);
  ASSERT_EQ(f.size(), 110u);
  // Outer Ethernet: remote VTEP -> our VTEP.
  EXPECT_EQ(test::ethDst(f), mac("02:00:ac:1f:00:01"));
  EXPECT_EQ(test::ethSrc(f), remoteVtepMac(k));
  EXPECT_EQ(test::etherType(f), 0x0800);
  // Outer IPv4: version/IHL, total length, TTL, UDP, checksum, addresses.
  EXPECT_EQ(f[14], 0x45);
  EXPECT_EQ(get16(f, 16), 110 - 14);
  EXPECT_EQ(f[22], 64);
  EXPECT_EQ(f[23], 17);
  EXPECT_EQ(test::internetChecksum(&f[14], 20), 0);
  EXPECT_EQ(get32(f, 26), ip("172.31.0.7").value);  // remote node 5
  EXPECT_EQ(get32(f, 30), ip("172.31.0.1").value);
  // Outer UDP: a dynamic source port, 4789, length, no checksum.
  EXPECT_GE(get16(f, 34), 49152);
  EXPECT_EQ(get16(f, 36), 4789);
  EXPECT_EQ(get16(f, 38), 110 - 34);
  EXPECT_EQ(get16(f, 40), 0);
  // VXLAN: I flag, VNI 100, reserved bytes zero.
  EXPECT_EQ(get32(f, 42), 0x08000000u);
  EXPECT_EQ(get32(f, 46), 100u << 8);
  // Inner: remote pod k -> local pod k, the l3 frame's layout.
  const test::Frame inner(f.begin() + 50, f.end());
  EXPECT_EQ(test::ethSrc(inner), remotePodMac(k));
  EXPECT_EQ(get32(inner, 26), remotePodIp(k).value);
  EXPECT_EQ(get32(inner, 30), localPodIp(k).value);
  EXPECT_EQ(get16(inner, 34), 1024 + 1);
  EXPECT_TRUE(test::ipv4ChecksumValid(inner));
}

TEST(NodeTraffic, OuterSourcePortsFollowTheInnerFlow) {
  // Equal inner flows get equal ports; the 1000 flows spread over many.
  EXPECT_EQ(get16(flowFrame(Scenario::kDecap, 5), 34), get16(flowFrame(Scenario::kDecap, 5), 34));
  std::set<uint16_t> ports;
  for (uint32_t i = 0; i < 1000; ++i) ports.insert(get16(flowFrame(Scenario::kDecap, i), 34));
  EXPECT_GT(ports.size(), 900u);
}

TEST(NodeTraffic, NFlowsAreNDistinctFiveTuplesOverAllSixteenPods) {
  for (Scenario s : {Scenario::kL3, Scenario::kEncap}) {
    std::set<std::pair<uint32_t, uint16_t>> tuples;
    std::set<uint32_t> dsts;
    for (uint32_t i = 0; i < 250'000; i += 7) {
      const test::Frame f = flowFrame(s, i);
      tuples.insert({get32(f, 30), get16(f, 34)});
      dsts.insert(get32(f, 30));
    }
    EXPECT_EQ(tuples.size(), (250'000u + 6) / 7);
    EXPECT_EQ(dsts.size(), kPods);
  }
}

TEST(NodeTraffic, FilesHoldWholeRoundsOfAtLeast1024Packets) {
  EXPECT_EQ(packetsForFlows(1), 1024u);
  EXPECT_EQ(packetsForFlows(100), 1100u);
  EXPECT_EQ(packetsForFlows(1000), 2000u);
  EXPECT_EQ(packetsForFlows(1024), 1024u);
  EXPECT_EQ(packetsForFlows(250'000), 250'000u);
}

TEST(NodeTraffic, PlanListsWhatTheFramesUse) {
  const std::string plan = describePlan();
  EXPECT_NE(plan.find("pod_cidr 10.244.0.0/16\n"), std::string::npos);
  EXPECT_NE(plan.find("gateway 10.244.0.1 02:00:0a:f4:00:01\n"), std::string::npos);
  EXPECT_NE(plan.find("vtep 172.31.0.1 02:00:ac:1f:00:01 172.31.0.0/24\n"), std::string::npos);
  EXPECT_NE(plan.find("vni 100\n"), std::string::npos);
  EXPECT_NE(plan.find("pod 15 10.244.16.10 02:00:0a:f4:10:0a 10.244.16.0/24 fd00:10:244::10:10\n"), std::string::npos);
  EXPECT_NE(plan.find("remote 15 172.31.0.17 02:00:ac:1f:00:11 10.245.15.0/24 10.245.15.10\n"), std::string::npos);
  for (uint32_t k = 0; k < kPods; ++k) EXPECT_TRUE(podCidr().contains(localPodIp(k)));
  for (uint32_t k = 0; k < kPods; ++k) EXPECT_TRUE(podCidr6().contains(localPodIp6(k)));
  EXPECT_NE(plan.find("pod_cidr_v6 fd00:10:244::/64\ngateway_v6 fd00:10:244::1\nsource_pod_v6 fd00:10:244::10\n"),
            std::string::npos);
}

TEST(PcapWriter, WritesTheLibpcapHeaderAndOneRecordPerFrame) {
  const std::string path = ::testing::TempDir() + "/node-traffic-" + std::to_string(::getpid()) + ".pcap";
  PcapWriter w;
  ASSERT_TRUE(w.open(path).ok());
  const test::Frame a = flowFrame(Scenario::kL3, 0), b = flowFrame(Scenario::kDecap, 1);
  ASSERT_TRUE(w.write(a).ok());
  ASSERT_TRUE(w.write(b).ok());
  ASSERT_TRUE(w.close().ok());
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  ASSERT_EQ(bytes.size(), 24u + 16 + 60 + 16 + 110);
  // Little-endian fields (this host's order), as readers detect from the magic.
  auto le32 = [&](size_t at) {
    return static_cast<uint32_t>(bytes[at]) | static_cast<uint32_t>(bytes[at + 1]) << 8 |
           static_cast<uint32_t>(bytes[at + 2]) << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
  };
  EXPECT_EQ(le32(0), 0xa1b2c3d4u);
  EXPECT_EQ(le32(4), 2u | 4u << 16);  // version 2.4
  EXPECT_EQ(le32(16), 65535u);        // snap length
  EXPECT_EQ(le32(20), 1u);            // Ethernet
  EXPECT_EQ(le32(24 + 8), 60u);       // incl_len
  EXPECT_EQ(le32(24 + 12), 60u);      // orig_len
  EXPECT_TRUE(std::equal(a.begin(), a.end(), bytes.begin() + 40));
  const size_t second = 24 + 16 + 60;
  EXPECT_EQ(le32(second + 4), 1u);  // 1 µs later
  EXPECT_EQ(le32(second + 8), 110u);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), bytes.begin() + static_cast<long>(second + 16)));
}

TEST(PcapWriter, RefusesToWriteWhenNotOpen) {
  PcapWriter w;
  EXPECT_EQ(w.write(test::Frame(60)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.open("/nonexistent-dir/x.pcap").code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace sluice::bench
