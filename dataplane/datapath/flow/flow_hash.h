// Hashing of flow-key words for the caches and the classifier's subtables.
// CRC32-C instructions (SSE4.2) do the mixing: one instruction per 64-bit word,
// the same primitive DPDK's rte_hash_crc uses, but called directly so this
// code needs neither EAL nor DPDK's run-time CPU dispatch. A final avalanche
// step spreads the CRC's linear structure over all bits, because tables index
// with the low bits and the SMC takes its signature from the high ones.
// Pure functions; called on PMD lcores (per packet) and on the control thread.
#pragma once

#include <nmmintrin.h>

#include <cstdint>

namespace sluice::flow {

// murmur3's 32-bit finaliser: every input bit affects every output bit.
inline uint32_t hashFinish(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

// Hashes n words. Two independent CRC chains (even and odd words) halve the
// dependency chain: crc32 has a 3-cycle latency but issues every cycle.
inline uint32_t hashWords(const uint64_t* w, uint32_t n, uint32_t basis) {
  uint64_t a = basis;
  uint64_t b = ~basis;
  uint32_t i = 0;
  for (; i + 1 < n; i += 2) {
    a = _mm_crc32_u64(a, w[i]);
    b = _mm_crc32_u64(b, w[i + 1]);
  }
  if (i < n) {
    a = _mm_crc32_u64(a, w[i]);
  }
  return hashFinish(static_cast<uint32_t>(a) ^ (static_cast<uint32_t>(b) * 0x9e3779b1U) ^ n);
}

}  // namespace sluice::flow
