#include "common/net_address.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(Ipv4AddressTest, ParsesDottedQuads) {
  EXPECT_EQ(Ipv4Address::parse("10.244.1.2")->value, 0x0af40102u);
  EXPECT_EQ(Ipv4Address::parse("0.0.0.0")->value, 0u);
  EXPECT_EQ(Ipv4Address::parse("255.255.255.255")->value, 0xffffffffu);
  EXPECT_EQ(Ipv4Address::parse("10.244.1.2")->toString(), "10.244.1.2");
}

TEST(Ipv4AddressTest, RejectsEverythingElse) {
  for (const char* bad : {"", "1", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "01.2.3.4", "1.2.3.4 ",
                          " 1.2.3.4", "1..3.4", "a.b.c.d", "1.2.3.4/8", "1234.1.1.1", "1.2.3.4\n"})
    EXPECT_FALSE(Ipv4Address::parse(bad)) << bad;
}

TEST(MacAddressTest, ParsesAndFormats) {
  auto mac = MacAddress::parse("02:AB:cd:00:11:ff");
  ASSERT_TRUE(mac);
  EXPECT_EQ(mac->toString(), "02:ab:cd:00:11:ff");
  EXPECT_FALSE(mac->isMulticast());
  EXPECT_TRUE(MacAddress::parse("01:00:5e:00:00:01")->isMulticast());
  for (const char* bad : {"", "02:ab:cd:00:11", "02:ab:cd:00:11:ff:00", "02-ab-cd-00-11-ff", "02:ab:cd:00:11:fg",
                          "2:ab:cd:00:11:ff0"})
    EXPECT_FALSE(MacAddress::parse(bad)) << bad;
}

TEST(MacAddressTest, DerivedFromIpIsLocalUnicastAndStable) {
  MacAddress mac = MacAddress::fromIpv4(*Ipv4Address::parse("10.244.1.2"));
  EXPECT_EQ(mac.toString(), "02:53:0a:f4:01:02");
  EXPECT_EQ(mac.bytes[0] & 0x03, 0x02);  // locally administered, unicast
}

TEST(Ipv4CidrTest, ParsesContainsAndBroadcast) {
  auto cidr = Ipv4Cidr::parse("10.244.1.0/24");
  ASSERT_TRUE(cidr);
  EXPECT_TRUE(cidr->contains(*Ipv4Address::parse("10.244.1.255")));
  EXPECT_FALSE(cidr->contains(*Ipv4Address::parse("10.244.2.0")));
  EXPECT_EQ(cidr->broadcast().toString(), "10.244.1.255");
  EXPECT_EQ(Ipv4Cidr::parse("0.0.0.0/0")->mask(), 0u);
  EXPECT_EQ(Ipv4Cidr::parse("1.2.3.4/32")->mask(), 0xffffffffu);
}

TEST(Ipv4CidrTest, RejectsHostBitsAndBadLengths) {
  for (const char* bad : {"10.244.1.1/24", "10.244.1.0/33", "10.244.1.0/", "10.244.1.0", "10.244.1.0/024",
                          "10.244.1.0/2a", "/24"})
    EXPECT_FALSE(Ipv4Cidr::parse(bad)) << bad;
}

TEST(Ipv6AddressTest, ParsesAndFormatsTheRfc5952Form) {
  auto ip = Ipv6Address::parse("FD00:0010:0244:0000:0000:0000:0000:0001");
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->toString(), "fd00:10:244::1");
  EXPECT_EQ(ip->bytes[0], 0xfd);
  EXPECT_EQ(ip->bytes[15], 0x01);
  EXPECT_EQ(Ipv6Address::parse("::")->toString(), "::");
  EXPECT_TRUE(Ipv6Address::parse("::")->isZero());
  EXPECT_TRUE(Ipv6Address::parse("ff02::1:ff00:1")->isMulticast());
  EXPECT_TRUE(Ipv6Address::parse("fe80::1")->isLinkLocal());
  EXPECT_FALSE(Ipv6Address::parse("fd00::1")->isLinkLocal());
  for (const char* bad : {"", "1.2.3.4", "fd00::1/64", "fe80::1%eth0", "[fd00::1]", "fd00:::1", "g::1",
                          "1:2:3:4:5:6:7:8:9", " fd00::1", "fd00::1 "})
    EXPECT_FALSE(Ipv6Address::parse(bad)) << bad;
}

TEST(Ipv6CidrTest, ParsesContainsAndNamesHosts) {
  auto cidr = Ipv6Cidr::parse("fd00:10:244:1::/64");
  ASSERT_TRUE(cidr);
  EXPECT_EQ(cidr->prefix_len, 64);
  EXPECT_EQ(cidr->toString(), "fd00:10:244:1::/64");
  EXPECT_TRUE(cidr->contains(*Ipv6Address::parse("fd00:10:244:1::7")));
  EXPECT_FALSE(cidr->contains(*Ipv6Address::parse("fd00:10:244:2::7")));
  EXPECT_EQ(cidr->host(1).toString(), "fd00:10:244:1::1");
  EXPECT_EQ(cidr->host(0x1ff).toString(), "fd00:10:244:1::1ff");
  // A prefix that ends inside a byte.
  auto odd = Ipv6Cidr::parse("fd00:10:244:80::/57");
  ASSERT_TRUE(odd);
  EXPECT_TRUE(odd->contains(*Ipv6Address::parse("fd00:10:244:ff::1")));
  EXPECT_FALSE(odd->contains(*Ipv6Address::parse("fd00:10:244:7f::1")));
  EXPECT_TRUE(Ipv6Cidr::parse("::/0")->contains(*Ipv6Address::parse("2001:db8::1")));
  EXPECT_TRUE(Ipv6Cidr::parse("fd00::1/128"));
  for (const char* bad : {"fd00::1/64", "fd00::/129", "fd00::/064", "fd00::/", "fd00::", "10.0.0.0/8", "fd00::/6a"})
    EXPECT_FALSE(Ipv6Cidr::parse(bad)) << bad;
}

}  // namespace
}  // namespace sluice
