// ICMP and ICMPv6 error messages about a packet the fast path will not
// forward, built in place in the offending packet's own mbuf: the new
// headers go into its headroom in front of the original IP header, which
// with as much of the original datagram as the error may carry becomes the
// error's payload, and the rest is trimmed. Nothing is allocated, so a PMD
// may answer on its rare drop paths.
//
// What is sent, as a router does:
//  - IPv4 (RFC 792, RFC 1812 4.3.2): Ethernet back to the frame's sender
//    (destination := its source MAC, source := the gateway MAC); IPv4 from
//    the gateway address to the original source, TTL 64, precedence
//    "internetwork control", DF set (an error of at most 576 bytes never
//    needs fragmenting), no options; the ICMP header (type, code, the
//    next-hop MTU for "fragmentation needed"); then the original IP header
//    and as much of its datagram as keeps the error within 576 bytes (at
//    least the 8 bytes after the header that RFC 792 asks for, when the
//    datagram has them).
//  - IPv6 (RFC 4443): the same Ethernet; IPv6 from the gateway's IPv6
//    address to the original source, hop limit 64; the ICMPv6 header (the
//    MTU for Packet Too Big); then as much of the invoking packet as keeps
//    the error within the minimum IPv6 MTU, 1280 bytes. The checksum covers
//    the pseudo-header.
//
// What is never answered (the refusals below), so that errors cannot
// multiply or be aimed at a third party: an ICMP error message (or, for
// IPv4, a type that might be one), a fragment other than the first (for
// IPv6: one of an ICMPv6 message, whose type cannot be seen), a multicast
// or broadcast destination (link-layer or IP; for IPv6 Packet Too Big is
// the exception RFC 4443 2.4 (e.2, e.3) makes), a source that names no
// single host (unspecified, loopback, multicast, broadcast, IPv4 class E),
// a frame that is malformed or not untagged IPv4/IPv6 as the builder
// expects it. An mbuf the builder may not rewrite (shared, indirect,
// external, or without the headroom) is refused too. A chained mbuf is
// rewritten when its first segment holds every header read and the part of
// the datagram the error quotes (the later segments are freed); else it
// is refused as not writable.
//
// Pure functions of their arguments (the gateway's addresses are
// parameters, not read from a snapshot); any thread.
#pragma once

#include <rte_ether.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>

namespace sluice::icmp {

// ICMP (RFC 792) and ICMPv6 (RFC 4443) types and codes the dataplane sends.
inline constexpr uint8_t kIpv4DestinationUnreachable = 3;
inline constexpr uint8_t kIpv4TimeExceeded = 11;
inline constexpr uint8_t kIpv4CodeNetUnreachable = 0;
inline constexpr uint8_t kIpv4CodeHostUnreachable = 1;
inline constexpr uint8_t kIpv4CodeFragmentationNeeded = 4;
inline constexpr uint8_t kIpv4CodeTtlExceeded = 0;  // "time to live exceeded in transit"
inline constexpr uint8_t kIpv6DestinationUnreachable = 1;
inline constexpr uint8_t kIpv6PacketTooBig = 2;
inline constexpr uint8_t kIpv6TimeExceeded = 3;
inline constexpr uint8_t kIpv6CodeNoRoute = 0;
inline constexpr uint8_t kIpv6CodeAddressUnreachable = 3;
inline constexpr uint8_t kIpv6CodeHopLimitExceeded = 0;

// Headers the error puts in front of the original IP header: its own IP
// header and the 8-byte ICMP header.
inline constexpr uint16_t kIpv4ErrorPrepend = 20 + 8;
inline constexpr uint16_t kIpv6ErrorPrepend = 40 + 8;
// The largest IP datagram an error may be (RFC 1812 4.3.2.3; RFC 4443 2.4 (c)).
inline constexpr uint32_t kIpv4ErrorMaxDatagram = 576;
inline constexpr uint32_t kIpv6ErrorMaxDatagram = 1280;
// TTL / hop limit of an error (the usual initial value, RFC 1700's 64).
inline constexpr uint8_t kErrorTtl = 64;

// Why no error is sent about a packet.
enum class Refusal : uint8_t {
  kNone,                  // an error may be (or was) sent
  kMalformed,             // not untagged IPv4/IPv6, or headers truncated or inconsistent
  kAboutIcmpError,        // the packet is an ICMP error itself (or may be)
  kNotFirstFragment,      // a later fragment
  kMulticastDestination,  // link-layer or IP multicast/broadcast destination
  kSourceNotUnique,       // source that names no single host
  kNotWritable,           // shared, indirect or external mbuf, too little headroom, or a quote past the first segment
};
const char* refusalName(Refusal r);

struct Ipv4ErrorParams {
  uint32_t source_be = 0;  // the gateway address, network order
  rte_ether_addr mac{};    // the gateway MAC
  uint8_t type = kIpv4TimeExceeded;
  uint8_t code = kIpv4CodeTtlExceeded;
  // Destination Unreachable, fragmentation needed: the next hop's MTU
  // (RFC 1191); 0 elsewhere (the field is unused).
  uint16_t next_hop_mtu = 0;
};

struct Ipv6ErrorParams {
  std::array<uint8_t, 16> source{};  // the gateway's IPv6 address
  rte_ether_addr mac{};              // the gateway MAC
  uint8_t type = kIpv6TimeExceeded;
  uint8_t code = kIpv6CodeHopLimitExceeded;
  uint32_t mtu = 0;  // Packet Too Big: the link's MTU; 0 elsewhere (unused)
};

// Whether an error may be sent about the frame (its first `len` bytes from
// `frame`), by the rules above; reads nothing beyond them.
Refusal ipv4ErrorRefusal(const uint8_t* frame, uint32_t len);
// For IPv6 the error's type matters (Packet Too Big may answer multicast).
Refusal ipv6ErrorRefusal(const uint8_t* frame, uint32_t len, uint8_t type);
// The same checks on an mbuf's frame, and whether it may be rewritten.
Refusal ipv4ErrorRefusal(const rte_mbuf* m);
Refusal ipv6ErrorRefusal(const rte_mbuf* m, uint8_t type);

// Turns the frame in `m` into the error about it, in place; on a refusal
// `m` is left untouched. Offload flags and packet type are set for an
// ordinary transmit of the result.
Refusal buildIpv4Error(rte_mbuf* m, const Ipv4ErrorParams& p);
Refusal buildIpv6Error(rte_mbuf* m, const Ipv6ErrorParams& p);

}  // namespace sluice::icmp
