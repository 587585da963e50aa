// Big-endian field access and the Internet checksum (RFC 1071) over raw
// frame bytes, shared by the ICMP messages the PMD builds in place (errors,
// echo replies). Any thread; pure.
#pragma once

#include <cstdint>

namespace sluice::icmp::wire {

inline uint16_t load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t load32(const uint8_t* p) { return uint32_t{load16(p)} << 16 | load16(p + 2); }
inline void store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// One's complement sum of bytes, added to `sum`, folded to 16 bits.
inline uint32_t addBytes(uint32_t sum, const uint8_t* p, uint32_t len) {
  uint64_t s = sum;
  for (; len >= 2; p += 2, len -= 2) s += load16(p);
  if (len != 0) s += uint32_t{p[0]} << 8;
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint32_t>(s);
}

// The checksum field's value for a sum.
inline uint16_t finish(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace sluice::icmp::wire
