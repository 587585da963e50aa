// Why a packet's flow key could or could not be extracted. The list below is
// the single declaration of every parse outcome: it generates the enum, the
// names used in logs and the metric names, so a drop counted by the pipeline
// always carries one of these reasons.
// Pure data; usable from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::flow {

// X(enumerator, metric/log name, what it means)
#define SLUICE_FLOW_PARSE_RESULTS(X)                                                     \
  X(kOk, "ok", "every header the key needs was present and well formed")               \
  X(kEthTruncated, "eth_truncated", "fewer than 14 bytes: no full Ethernet header")      \
  X(kVlanTruncated, "vlan_truncated", "802.1Q/802.1ad tag cut short")                    \
  X(kIpv4Truncated, "ipv4_truncated", "fewer than 20 bytes after the L2 header")        \
  X(kIpv4BadVersion, "ipv4_bad_version", "EtherType IPv4 but version field is not 4")    \
  X(kIpv4BadIhl, "ipv4_bad_ihl", "IHL below 5 (header shorter than 20 bytes)")           \
  X(kIpv4OptionsTruncated, "ipv4_options_truncated", "IHL*4 runs past the buffer")       \
  X(kIpv4BadTotalLength, "ipv4_bad_total_length", "total length smaller than IHL*4")     \
  X(kIpv4LengthTruncated, "ipv4_length_truncated", "total length runs past the buffer")  \
  X(kIpv6Truncated, "ipv6_truncated", "fewer than 40 bytes after the L2 header")        \
  X(kIpv6BadVersion, "ipv6_bad_version", "EtherType IPv6 but version field is not 6")    \
  X(kIpv6LengthTruncated, "ipv6_length_truncated", "payload length runs past the buffer") \
  X(kIpv6ExtTruncated, "ipv6_ext_truncated", "an extension header runs past the payload") \
  X(kIpv6TooManyExt, "ipv6_too_many_ext", "more extension headers than the parser walks") \
  X(kTcpTruncated, "tcp_truncated", "TCP header (with its options) cut short")           \
  X(kTcpBadOffset, "tcp_bad_offset", "TCP data offset below 5")                          \
  X(kUdpTruncated, "udp_truncated", "fewer than 8 bytes of UDP header")                  \
  X(kSctpTruncated, "sctp_truncated", "fewer than 12 bytes of SCTP common header")       \
  X(kIcmpTruncated, "icmp_truncated", "fewer than 4 bytes of ICMP/ICMPv6 header")        \
  X(kArpTruncated, "arp_truncated", "fewer than 28 bytes of ARP body")                   \
  X(kArpUnsupported, "arp_unsupported", "ARP that is not Ethernet/IPv4 (htype/ptype/len)")

enum class ParseResult : uint8_t {
#define SLUICE_X(name, str, doc) name,
  SLUICE_FLOW_PARSE_RESULTS(SLUICE_X)
#undef SLUICE_X
};

inline constexpr uint32_t kParseResultCount = 0
#define SLUICE_X(name, str, doc) +1
    SLUICE_FLOW_PARSE_RESULTS(SLUICE_X)
#undef SLUICE_X
    ;

// The metric/log name of a result ("ipv4_bad_ihl"); "unknown" for values
// outside the list (only reachable through a corrupt cast).
constexpr std::string_view parseResultName(ParseResult r) {
  constexpr std::string_view kNames[] = {
#define SLUICE_X(name, str, doc) str,
      SLUICE_FLOW_PARSE_RESULTS(SLUICE_X)
#undef SLUICE_X
  };
  const auto i = static_cast<uint32_t>(r);
  return i < kParseResultCount ? kNames[i] : std::string_view("unknown");
}

}  // namespace sluice::flow
