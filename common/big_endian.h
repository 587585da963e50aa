// Network-order (big-endian) fields read from and written to raw frame
// bytes, whatever their alignment. Any thread; pure.
#pragma once

#include <cstdint>

namespace sluice {

inline uint16_t loadBe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t loadBe32(const uint8_t* p) { return uint32_t{loadBe16(p)} << 16 | loadBe16(p + 2); }
inline void storeBe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void storeBe32(uint8_t* p, uint32_t v) {
  storeBe16(p, static_cast<uint16_t>(v >> 16));
  storeBe16(p + 2, static_cast<uint16_t>(v));
}

}  // namespace sluice
