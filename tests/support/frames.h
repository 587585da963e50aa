// Builds and inspects Ethernet frames for tests and benchmarks: IPv4/UDP with
// a correct header checksum, ARP requests, and accessors for the fields the
// tests assert on. Plain bytes, no DPDK.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/net_address.h"

namespace sluice::test {

using Frame = std::vector<uint8_t>;

struct UdpFrameSpec {
  MacAddress src_mac, dst_mac;
  Ipv4Address src_ip, dst_ip;
  uint8_t ttl = 64;
  uint16_t src_port = 1024, dst_port = 5001;
  // Total frame length without FCS; 60 is the Ethernet minimum (64 with FCS).
  size_t frame_len = 60;
  uint32_t sequence = 0;  // written into the payload so receivers can tell frames apart
};

Frame udpFrame(const UdpFrameSpec& spec);

// IPv6/UDP with a correct UDP checksum (mandatory in IPv6).
struct Udp6FrameSpec {
  MacAddress src_mac, dst_mac;
  Ipv6Address src_ip, dst_ip;
  uint8_t hop_limit = 64;
  uint16_t src_port = 1024, dst_port = 5001;
  size_t frame_len = 80;  // at least 14 + 40 + 8 + 4
  uint32_t sequence = 0;  // written into the payload
};
Frame udp6Frame(const Udp6FrameSpec& spec);

// An ICMPv6 Neighbor Solicitation for `target`, hop limit 255, to the
// target's solicited-node group (or to `unicast_dst` when given), with a
// source link-layer address option unless `sender_ip` is :: (DAD) or
// `with_source_option` is false. The ICMPv6 checksum is correct.
Frame neighborSolicitation(MacAddress sender_mac, Ipv6Address sender_ip, Ipv6Address target,
                           bool with_source_option = true, const Ipv6Address* unicast_dst = nullptr);
// An ICMPv6 Router Solicitation from sender_ip to ff02::2 (or to
// `unicast_dst`), hop limit 255, with a source link-layer address option
// unless `with_source_option` is false. The ICMPv6 checksum is correct.
Frame routerSolicitation(MacAddress sender_mac, Ipv6Address sender_ip, bool with_source_option = true,
                         const Ipv6Address* unicast_dst = nullptr);
// The ICMPv6 checksum field value of the message at frame[54, 54 + len)
// behind an IPv6 header at frame[14, 54): RFC 1071 over pseudo-header and message.
uint16_t icmpv6ChecksumOf(const Frame& f, size_t icmp_len);
Frame arpRequest(MacAddress sender_mac, Ipv4Address sender_ip, Ipv4Address target_ip);

// ICMP echo (type 8 request, 0 reply; RFC 792) with identifier, sequence and
// 32 bytes of data (0x40, 0x41, ...): IPv4 id 0, no flags, no padding
// (74 bytes). Both checksums correct.
Frame icmpEcho(MacAddress src_mac, MacAddress dst_mac, Ipv4Address src_ip, Ipv4Address dst_ip, uint8_t type,
               uint16_t id, uint16_t sequence, uint8_t ttl = 64);
// ICMPv6 echo (128 request, 129 reply; RFC 4443 4.1) likewise, traffic
// class and flow label 0 (94 bytes).
Frame icmpv6Echo(MacAddress src_mac, MacAddress dst_mac, const Ipv6Address& src_ip, const Ipv6Address& dst_ip,
                 uint8_t type, uint16_t id, uint16_t sequence, uint8_t hop_limit = 64);

// The ICMP Time Exceeded a router at `gateway` (MAC gateway_mac) sends
// back about `original`, an untagged IPv4 frame: Ethernet to its source MAC,
// IPv4 to its source address (TTL 64, precedence 6, DF, id 0), ICMP type 11
// code 0, then its datagram (padding excluded) up to 548 bytes. Written out
// field by field, apart from the dataplane's builder.
Frame icmpTimeExceeded(const Frame& original, MacAddress gateway_mac, Ipv4Address gateway);
// The same with any type and code, and the next-hop MTU field (RFC 1191)
// of "fragmentation needed" (0 elsewhere).
Frame icmpError(const Frame& original, MacAddress gateway_mac, Ipv4Address gateway, uint8_t type, uint8_t code,
                uint16_t next_hop_mtu);
// The ICMPv6 error (RFC 4443) a router at `gateway` sends back about
// `original`, an untagged IPv6 frame: Ethernet to its source MAC, IPv6 from
// the gateway to its source, hop limit 64, the type, code and 32-bit MTU
// field (Packet Too Big; 0 elsewhere), then the invoking packet up to 1232
// bytes (the error within 1280); checksum over the pseudo-header.
Frame icmpv6Error(const Frame& original, MacAddress gateway_mac, const Ipv6Address& gateway, uint8_t type,
                  uint8_t code, uint32_t mtu);

// RFC 1071 checksum over a byte range (0 when the range holds a valid checksum).
uint16_t internetChecksum(const uint8_t* data, size_t len);

// Field accessors (frames assumed long enough; tests check length first).
MacAddress ethDst(const Frame& f);
MacAddress ethSrc(const Frame& f);
uint16_t etherType(const Frame& f);
uint8_t ipv4Ttl(const Frame& f);
bool ipv4ChecksumValid(const Frame& f);
uint32_t udpSequence(const Frame& f);
uint32_t udp6Sequence(const Frame& f);

}  // namespace sluice::test
