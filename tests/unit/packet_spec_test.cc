#include "dataplane/core/packet_spec.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PacketSpecTest, FieldsMakeTheFrameByteForByte) {
  absl::StatusOr<PacketSpec> s = parsePacketSpec(
      "in_port=3,src=10.0.0.1,dst=10.0.0.2,proto=udp,sport=1000,dport=2000,ttl=1,eth_src=02:00:00:00:00:05,"
      "eth_dst=02:00:00:00:00:01");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->in_port, 3);
  const std::vector<uint8_t> expected = {
      0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x05, 0x08, 0x00,  // Ethernet
      0x45, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0xa5, 0xcf,              // IPv4 ...
      0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,                                      // ... addresses
      0x03, 0xe8, 0x07, 0xd0, 0x00, 0x08, 0x00, 0x00};                                     // UDP
  EXPECT_EQ(s->frame, expected);
  EXPECT_FALSE(s->eth_src_from_port) << "eth_src given";
}

TEST(PacketSpecTest, TcpAndPaddingAndHex) {
  absl::StatusOr<PacketSpec> s = parsePacketSpec("in_port=0,proto=tcp,dport=80,len=100");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->frame.size(), 114u);
  EXPECT_EQ(s->frame[23], 6);     // protocol
  EXPECT_EQ(s->frame[46], 0x50);  // data offset 5
  EXPECT_TRUE(s->eth_src_from_port) << "no eth_src: the port's pod's MAC goes there";
  s = parsePacketSpec("in_port=7,hex=0200000000010200000000020806");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->in_port, 7);
  EXPECT_EQ(s->frame, (std::vector<uint8_t>{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 6}));
  EXPECT_FALSE(s->eth_src_from_port) << "a whole frame is taken as it is";
}

TEST(PacketSpecTest, BadSpecsSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"src=10.0.0.1", "in_port is required"},
      {"in_port=1,color=red", "unknown key \"color\""},
      {"in_port=1,src=10.0.0.300", "src=10.0.0.300: not an IPv4 address"},
      {"in_port=1,ttl=256", "ttl=256: not a number from 0 to 255"},
      {"in_port=1,proto=gre", "proto=gre: tcp, udp, icmp or 0-255"},
      {"in_port=1,in_port=2", "in_port given twice"},
      {"in_port=1,hex=0011", "hex: a frame of 14 to 9216 bytes"},
      {"in_port=1,hex=020000000001020000000002080", "hex: an odd number of digits"},
      {"in_port=1,hex=0200000000010200000000020g00", "hex: not a hex digit"},
      {"in_port=1,dst=10.0.0.1,hex=0200000000010200000000020800", "hex goes with in_port alone"},
      {"in_port=1,proto=tcp,len=30", "len=30: below the headers' 40 bytes"},
      {"in_port=1,src", "\"src\": expected key=value"},
      {"in_port=70000", "in_port=70000: not a number from 0 to 65535"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<PacketSpec> s = parsePacketSpec(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(s.status().message(), message) << text;
  }
}

}  // namespace
}  // namespace sluice
