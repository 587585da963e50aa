// Helpers shared by the flow cache tests and benchmarks: keys from frames,
// random keys and masks. Test-only.
#pragma once

#include <cstdint>
#include <random>

#include "dataplane/datapath/flow/flow_key.h"
#include "tests/unit/flow/frame_builder.h"

namespace sluice::flow::testing {

// Key of a UDP/IPv4 packet on in-port `port` (hash computed, no RSS).
inline FlowKey udpKey(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint16_t port = 1) {
  const Frame f = udp4(src, dst, sport, dport);
  FlowKey k;
  extractFlowKey(f.data(), f.size(), port, std::nullopt, k);
  return k;
}

// A key whose match words are random (metadata zero, hash computed).
inline FlowKey randomKey(std::mt19937_64& rng) {
  FlowKey k = zeroKey();
  for (uint32_t i = 0; i < kMatchWords; ++i) k.words()[i] = rng();
  k.hash = hashKey(k);
  return k;
}

// A mask over `words` (a bit set of match words), each chosen word either
// all ones or a random prefix-like pattern, so masks share words and differ
// in bits the way real masks (prefix lengths, exact fields) do.
inline FlowMask randomMask(std::mt19937_64& rng, uint32_t words) {
  FlowMask m = zeroKey();
  for (uint32_t i = 0; i < kMatchWords; ++i) {
    if ((words & (1U << i)) == 0) continue;
    const uint32_t kind = rng() % 3;
    m.words()[i] = kind == 0 ? ~uint64_t{0} : kind == 1 ? (~uint64_t{0} << (rng() % 64)) : (rng() | 1);
  }
  return m;
}

}  // namespace sluice::flow::testing
