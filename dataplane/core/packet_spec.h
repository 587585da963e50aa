// The packet of a "what would happen" trace (`sluicectl trace --packet`),
// given by its header fields or as a whole frame in hex, turned into the
// frame bytes the PMD would have received. Untrusted input (it comes over
// the API): every malformed spec is an InvalidArgument naming what is wrong.
//
//   in_port=1,src=10.244.0.10,dst=10.244.0.11,proto=udp,sport=1000,dport=2000,ttl=64
//   in_port=1,hex=02000000000102000000000208004500...
//
// Keys: in_port (required), src, dst (IPv4, default 0.0.0.0), proto (tcp,
// udp, icmp or 0-255, default udp), sport, dport (0-65535, default 0), ttl
// (0-255, default 64), eth_src (MAC, default the in_port's pod's MAC, so that
// source validation passes it: see eth_src_from_port), eth_dst (MAC, default
// 02:00:00:00:00:00),
// len (IPv4 total length to pad to, 28-1500) ; or in_port and hex alone (14 to
// 9216 bytes, an even number of hex digits).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {

struct PacketSpec {
  uint16_t in_port = 0;
  std::vector<uint8_t> frame;
  // eth_src was not given (fields, not hex): the caller writes the in_port's
  // MAC into frame bytes 6..11 (02:00:00:00:00:00 is there until then).
  bool eth_src_from_port = false;
};

absl::StatusOr<PacketSpec> parsePacketSpec(std::string_view text);

}  // namespace sluice
