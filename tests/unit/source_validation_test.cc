// Source validation in the megaflow decision (translateFlow with a
// SourceTable): a checked port's packets are forwarded only from its own MAC
// and IPv4 / IPv6 / link-local address, spoofed ones are dropped with a
// named reason before the destination is read, and every mask holds exactly
// what the decision read, so that no cached decision can answer a packet
// decided otherwise (checked here over random keys against each mask).
#include <gtest/gtest.h>
#include <rte_ether.h>

#include <cstring>
#include <memory>
#include <random>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow_translate.h"
#include "tests/support/frames.h"
#include "tests/support/translate_checks.h"

namespace sluice {
namespace {

using flow::FlowKey;
using flow::FlowMask;
using flow::MegaflowActions;
using test::expectDrop;

const Ipv4Address kGateway = *Ipv4Address::parse("10.60.0.1");
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);
const Ipv4Address kIpA = *Ipv4Address::parse("10.60.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.60.0.11");
const Ipv4Address kIpOther = *Ipv4Address::parse("10.60.0.12");
const Ipv6Cidr kCidr6 = *Ipv6Cidr::parse("fd00:60::/64");
const Ipv6Address kIp6A = *Ipv6Address::parse("fd00:60::a");
const Ipv6Address kIp6B = *Ipv6Address::parse("fd00:60::b");
const Ipv6Address kIp6Other = *Ipv6Address::parse("fd00:60::c");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kMacB = MacAddress::fromIpv4(kIpB);
const MacAddress kMacOther = *MacAddress::parse("02:99:00:00:00:01");
// Port A: dual-stack, checked. Port B: checked. Port R: a router, unchecked.
// Port S: IPv6-only, checked.
constexpr uint16_t kPortA = 1, kPortB = 2, kPortR = 3, kPortS = 4, kPortUplink = 31;
const Ipv6Address kIp6S = *Ipv6Address::parse("fd00:60::5");
const MacAddress kMacS = MacAddress::fromIpv6(kIp6S);

PortSources sourcesOf(const MacAddress& mac, std::optional<Ipv4Address> ip, std::optional<Ipv6Address> ip6,
                      bool checked) {
  PortSources s;
  s.checked = checked;
  std::memcpy(s.mac, mac.bytes.data(), 6);
  s.has_ipv4 = ip.has_value();
  s.ipv4_be = ip ? ip->networkOrder() : 0;
  s.has_ipv6 = ip6.has_value();
  if (ip6) std::memcpy(s.ipv6, ip6->bytes.data(), 16);
  std::memcpy(s.link_local, linkLocalFromMac(mac).bytes.data(), 16);
  return s;
}

class SourceValidationTranslateTest : public ::testing::Test {
 protected:
  SourceValidationTranslateTest() {
    fib_ = std::make_shared<ForwardingTable>(
        std::vector<ForwardingTable::Entry>{{kIpA, kPortA, kMacA}, {kIpB, kPortB, kMacB}});
    fib6_ = std::make_shared<Ipv6ForwardingTable>(std::vector<Ipv6ForwardingTable::Entry>{
        {kIp6A, kPortA, kMacA}, {kIp6B, kPortB, kMacB}, {kIp6S, kPortS, kMacS}});
    net_.enabled = true;
    net_.prefix_len = 64;
    std::memcpy(net_.net, kCidr6.network.bytes.data(), 16);
    std::memcpy(net_.gateway, kCidr6.host(1).bytes.data(), 16);
    std::memcpy(net_.gateway_link_local, linkLocalFromMac(kGatewayMac).bytes.data(), 16);
    sources_.ports[kPortA] = sourcesOf(kMacA, kIpA, kIp6A, true);
    sources_.ports[kPortB] = sourcesOf(kMacB, kIpB, kIp6B, true);
    sources_.ports[kPortR] = sourcesOf(*MacAddress::parse("02:60:00:00:00:33"), kIpOther, std::nullopt, false);
    sources_.ports[kPortS] = sourcesOf(kMacS, std::nullopt, kIp6S, true);
  }

  RouteTables tables() const {
    return RouteTables{.fib = fib_.get(), .gateway_ip_be = kGateway.networkOrder(), .fib6 = fib6_.get(), .v6 = &net_,
                       .sources = &sources_};
  }

  static FlowKey key4(uint16_t in_port, const MacAddress& src_mac, Ipv4Address src, Ipv4Address dst) {
    return test::udpKey4(in_port, src_mac, kGatewayMac, src, dst);
  }
  static FlowKey key6(uint16_t in_port, const MacAddress& src_mac, const Ipv6Address& src, const Ipv6Address& dst) {
    return test::udpKey6(in_port, src_mac, kGatewayMac, src, dst);
  }

  FlowTranslation decide(const FlowKey& k) const {
    FlowTranslation t;
    translateFlow(tables(), k, t);
    return t;
  }

  static void expectOutput(const FlowTranslation& t, uint16_t port) {
    ASSERT_EQ(t.actions.kind, MegaflowActions::Kind::kOutput) << kDropReasonNames[t.actions.drop_reason];
    EXPECT_EQ(t.actions.out_port, port);
  }
  static bool allOnes(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (p[i] != 0xff) return false;
    return true;
  }
  static bool allZero(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (p[i] != 0) return false;
    return true;
  }

  std::shared_ptr<ForwardingTable> fib_;
  std::shared_ptr<Ipv6ForwardingTable> fib6_;
  Ipv6PodNet net_;
  SourceTable sources_;
};

TEST_F(SourceValidationTranslateTest, OwnSourcesAreForwardedAndTheMaskHoldsThemExactly) {
  const FlowTranslation t = decide(key4(kPortA, kMacA, kIpA, kIpB));
  expectOutput(t, kPortB);
  EXPECT_EQ(t.mask.in_port, 0xffff);
  EXPECT_TRUE(allOnes(t.mask.eth_src, 6));
  EXPECT_EQ(t.mask.ipv4_src, 0xffffffffU);
  EXPECT_EQ(t.mask.ipv4_dst, 0xffffffffU);
  EXPECT_EQ(t.mask.ttl_class, 0xff);
  EXPECT_EQ(t.mask.tp_src, 0);  // still one megaflow for all the pod's flows to B
}

TEST_F(SourceValidationTranslateTest, SpoofedIpv4SourceIsDroppedBeforeTheDestinationIsRead) {
  const FlowTranslation t = decide(key4(kPortA, kMacA, kIpOther, kIpB));
  expectDrop(t, DropReason::kSpoofedSourceIp);
  EXPECT_EQ(t.mask.in_port, 0xffff);
  EXPECT_TRUE(allOnes(t.mask.eth_src, 6));
  // 10.60.0.12 and 10.60.0.10 first differ in the last octet: all four are read.
  EXPECT_EQ(t.mask.ipv4_src, 0xffffffffU);
  EXPECT_EQ(t.mask.ipv4_dst, 0u);
  EXPECT_EQ(t.mask.ttl_class, 0);
  // Any source outside 10/8: the first octet decides, for every such source.
  const FlowTranslation far = decide(key4(kPortA, kMacA, *Ipv4Address::parse("192.0.2.7"), kIpB));
  expectDrop(far, DropReason::kSpoofedSourceIp);
  EXPECT_EQ(far.mask.ipv4_src, RTE_BE32(0xff000000U));
}

TEST_F(SourceValidationTranslateTest, SpoofedMacIsDroppedReadingOnlyTheOctetsThatDiffer) {
  // A foreign MAC with the pod's own IP: the MAC decides alone.
  const FlowTranslation t = decide(key4(kPortA, kMacOther, kIpA, kIpB));
  expectDrop(t, DropReason::kSpoofedSourceMac);
  EXPECT_EQ(t.mask.in_port, 0xffff);
  // 02:99:.. against 02:53:0a:..: the second octet differs.
  const uint8_t two_octets[6] = {0xff, 0xff, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(t.mask.eth_src, two_octets, 6), 0);
  EXPECT_EQ(t.mask.ipv4_src, 0u);
  EXPECT_EQ(t.mask.ipv4_dst, 0u);
  // Another pod's MAC on A (B's, which differs from A's in its last octet).
  expectDrop(decide(key4(kPortA, kMacB, kIpB, kIpA)), DropReason::kSpoofedSourceMac);
}

TEST_F(SourceValidationTranslateTest, AnUncheckedPortForwardsAnySourceButItsPortIsInTheMask) {
  const FlowTranslation t = decide(key4(kPortR, kMacOther, *Ipv4Address::parse("198.51.100.3"), kIpB));
  expectOutput(t, kPortB);
  EXPECT_EQ(t.mask.in_port, 0xffff);
  EXPECT_TRUE(allZero(t.mask.eth_src, 6));
  EXPECT_EQ(t.mask.ipv4_src, 0u);
  // A port no pod has (the overlay's uplink): not checked either.
  expectOutput(decide(key4(kPortUplink, kMacOther, kIpOther, kIpB)), kPortB);
}

TEST_F(SourceValidationTranslateTest, WithoutASourceTableNothingIsCheckedOrMasked) {
  RouteTables plain = tables();
  plain.sources = nullptr;
  FlowTranslation t;
  translateFlow(plain, key4(kPortA, kMacOther, kIpOther, kIpB), t);
  expectOutput(t, kPortB);
  EXPECT_EQ(t.mask.in_port, 0);
  EXPECT_TRUE(allZero(t.mask.eth_src, 6));
  EXPECT_EQ(t.mask.ipv4_src, 0u);
}

TEST_F(SourceValidationTranslateTest, Ipv6FromTheOwnOrTheLinkLocalAddressOnly) {
  const FlowTranslation own = decide(key6(kPortA, kMacA, kIp6A, kIp6B));
  expectOutput(own, kPortB);
  EXPECT_TRUE(allOnes(own.mask.ipv6_src, 16));
  EXPECT_TRUE(allOnes(own.mask.eth_src, 6));
  expectOutput(decide(key6(kPortA, kMacA, linkLocalFromMac(kMacA), kIp6B)), kPortB);
  // Another pod's address, another link-local, the unspecified address.
  const FlowTranslation other = decide(key6(kPortA, kMacA, kIp6Other, kIp6B));
  expectDrop(other, DropReason::kSpoofedSourceIp);
  EXPECT_TRUE(allOnes(other.mask.ipv6_src, 16));  // differs from fd00:60::a in the last octet
  EXPECT_TRUE(allZero(other.mask.ipv6_dst, 16));
  expectDrop(decide(key6(kPortA, kMacA, linkLocalFromMac(kMacB), kIp6B)), DropReason::kSpoofedSourceIp);
  expectDrop(decide(key6(kPortA, kMacA, Ipv6Address{}, kIp6B)), DropReason::kSpoofedSourceIp);
  // From :: to a link-scope group (MLD before the pod's address is its own):
  // unrouted, not spoofed, and only that pair of addresses in the mask.
  const FlowTranslation mld = decide(key6(kPortA, kMacA, Ipv6Address{}, *Ipv6Address::parse("ff02::16")));
  expectDrop(mld, DropReason::kNoRoute);
  EXPECT_TRUE(allOnes(mld.mask.ipv6_src, 16));
  const uint8_t two_octets[16] = {0xff, 0xff};
  EXPECT_EQ(std::memcmp(mld.mask.ipv6_dst, two_octets, 16), 0);
  expectDrop(decide(key6(kPortA, kMacA, Ipv6Address{}, *Ipv6Address::parse("ff05::16"))),
             DropReason::kSpoofedSourceIp);
  expectDrop(decide(key6(kPortA, kMacOther, kIp6A, kIp6B)), DropReason::kSpoofedSourceMac);
  // A far address: the first octet tells it from both of A's.
  const FlowTranslation far = decide(key6(kPortA, kMacA, *Ipv6Address::parse("2001:db8::1"), kIp6B));
  expectDrop(far, DropReason::kSpoofedSourceIp);
  const uint8_t one_octet[16] = {0xff};
  EXPECT_EQ(std::memcmp(far.mask.ipv6_src, one_octet, 16), 0);
}

TEST_F(SourceValidationTranslateTest, AnIpv6OnlyPodOwnsNoIpv4Source) {
  const FlowTranslation t = decide(key4(kPortS, kMacS, kIpOther, kIpB));
  expectDrop(t, DropReason::kSpoofedSourceIp);
  EXPECT_EQ(t.mask.ipv4_src, 0u);  // no IPv4 source is its own: none is read
  expectOutput(decide(key6(kPortS, kMacS, kIp6S, kIp6B)), kPortB);
  // And a pod without IPv6 still owns its link-local address.
  sources_.ports[kPortA].has_ipv6 = false;
  expectOutput(decide(key6(kPortA, kMacA, linkLocalFromMac(kMacA), kIp6B)), kPortB);
  expectDrop(decide(key6(kPortA, kMacA, kIp6A, kIp6B)), DropReason::kSpoofedSourceIp);
}

// Every key a megaflow (masked key, mask) matches is decided as the key it
// was made from: random keys near the checked ports' own sources, each
// translated, then random variations of it inside its mask re-translated.
TEST_F(SourceValidationTranslateTest, EveryKeyInsideAMaskIsDecidedAlike) {
  std::mt19937 rng(777);
  const MacAddress macs[] = {kMacA, kMacB, kMacS, kMacOther};
  const Ipv4Address ips[] = {kIpA, kIpB, kIpOther, kGateway, *Ipv4Address::parse("10.61.0.10")};
  const Ipv6Address ip6s[] = {kIp6A, kIp6B, kIp6S, kIp6Other, linkLocalFromMac(kMacA), linkLocalFromMac(kMacS)};
  const uint16_t ports[] = {kPortA, kPortB, kPortR, kPortS, kPortUplink};
  auto flipBits = [&](uint8_t* p, size_t n) {
    for (int i = rng() % 3; i > 0; --i) p[rng() % n] ^= static_cast<uint8_t>(1U << (rng() % 8));
  };
  uint64_t checked = 0;
  for (int round = 0; round < 4000; ++round) {
    const bool v6 = rng() % 2 == 0;
    const uint16_t in_port = ports[rng() % 5];
    MacAddress mac = macs[rng() % 4];
    if (rng() % 4 == 0) flipBits(mac.bytes.data(), 6);
    FlowKey k;
    if (v6) {
      Ipv6Address src = ip6s[rng() % 6];
      if (rng() % 4 == 0) flipBits(src.bytes.data(), 16);
      k = key6(in_port, mac, src, ip6s[rng() % 3]);
    } else {
      Ipv4Address src = ips[rng() % 5];
      if (rng() % 4 == 0) src.value ^= 1U << (rng() % 32);
      k = key4(in_port, mac, src, ips[rng() % 5]);
    }
    const FlowTranslation t = decide(k);
    const FlowKey masked = flow::applyMask(k, t.mask);
    for (int v = 0; v < 8; ++v) {
      // A packet that differs from k only outside the mask's source fields.
      FlowKey other = k;
      for (size_t i = 0; i < 6; ++i) other.eth_src[i] ^= static_cast<uint8_t>(rng() & ~t.mask.eth_src[i]);
      other.ipv4_src ^= static_cast<uint32_t>(rng()) & ~t.mask.ipv4_src;
      for (size_t i = 0; i < 16; ++i) other.ipv6_src[i] ^= static_cast<uint8_t>(rng() & ~t.mask.ipv6_src[i]);
      if (v6) other.ipv4_src = 0;
      else std::memset(other.ipv6_src, 0, 16);
      ASSERT_TRUE(flow::maskedEqual(other, t.mask, masked));
      const FlowTranslation u = decide(other);
      ASSERT_EQ(u.actions.kind, t.actions.kind) << "round " << round;
      ASSERT_EQ(u.actions.drop_reason, t.actions.drop_reason) << "round " << round;
      ASSERT_EQ(u.actions.out_port, t.actions.out_port) << "round " << round;
      ASSERT_TRUE(flow::keysEqual(u.mask, t.mask)) << "round " << round;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 32000u);
}

}  // namespace
}  // namespace sluice
