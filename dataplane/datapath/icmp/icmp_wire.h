// The Internet checksum (RFC 1071) over raw frame bytes, shared by the ICMP
// messages the PMD builds in place (errors, echo replies). Any thread; pure.
#pragma once

#include <cstdint>

#include "common/big_endian.h"

namespace sluice::icmp::wire {

// One's complement sum of bytes, added to `sum`, folded to 16 bits.
inline uint32_t addBytes(uint32_t sum, const uint8_t* p, uint32_t len) {
  uint64_t s = sum;
  for (; len >= 2; p += 2, len -= 2) s += loadBe16(p);
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
