// libFuzzer target for flow key extraction, the first code to touch bytes a
// pod or the wire controls. Beyond "no crash, no read past len" (ASan sees
// reads past the exactly-sized input), it checks the extractor's contract:
// the result is a listed reason, offsets stay inside the frame, a failed
// parse carries no hash, extraction is deterministic, the burst form
// agrees with the single-packet form, and the run form never puts two
// packets with different keys in one run (the PMD decides once per run);
// the frame cut into a chained mbuf's first segment parses to the same key
// or fails, never to another key.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dataplane/datapath/flow/flow_key.h"

using sluice::flow::extractFlowKey;
using sluice::flow::extractFlowKeyRuns;
using sluice::flow::extractFlowKeys;
using sluice::flow::keysEqual;
using sluice::flow::FlowKey;
using sluice::flow::hashKey;
using sluice::flow::kParseResultCount;
using sluice::flow::PacketRef;
using sluice::flow::PacketRun;
using sluice::flow::ParseResult;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;  // no frame is longer; offsets are 16-bit
  const auto len = static_cast<uint32_t>(size);
  FlowKey a;
  const ParseResult r = extractFlowKey(data, len, 5, std::nullopt, a);
  if (static_cast<uint32_t>(r) >= kParseResultCount) abort();
  if (a.parse_result != static_cast<uint8_t>(r)) abort();
  if (a.in_port != 5) abort();
  if (r != ParseResult::kOk && a.hash != 0) abort();
  if (r == ParseResult::kOk && a.hash != hashKey(a)) abort();
  if (a.l3_ofs > len || a.l4_ofs > len) abort();
  if (a.l4_ofs != 0 && a.l4_ofs <= a.l3_ofs) abort();

  FlowKey b;
  PacketRef p{data, len, 0, false};
  if (extractFlowKeys(&p, 1, 5, &b) != (r == ParseResult::kOk ? 1U : 0U)) abort();
  if (std::memcmp(&a, &b, sizeof(FlowKey)) != 0) abort();

  // Runs: the input, then variants that differ in one byte of the first 48
  // (the last input byte says which and how), then the input again.
  std::vector<uint8_t> v1(data, data + size), v2(data, data + size);
  if (size > 0) {
    v1[data[size - 1] % 48 % size] ^= 0x01;
    v2[(data[size - 1] / 2 + 18) % size] ^= 0x80;
  }
  const PacketRef burst[4] = {p, {v1.data(), len, 0, false}, {v2.data(), len, 0, false}, p};
  FlowKey keys[4];
  PacketRun runs[4];
  const uint32_t n_runs = extractFlowKeyRuns(burst, 4, 5, 0, keys, runs);
  uint32_t covered = 0;
  for (uint32_t k = 0; k < n_runs; ++k) {
    if (runs[k].first != covered || runs[k].count == 0) abort();
    for (uint32_t i = runs[k].first; i < runs[k].first + runs[k].count; ++i) {
      FlowKey single;
      extractFlowKey(burst[i].data, burst[i].len, 5, std::nullopt, single);
      if (single.parse_result != keys[k].parse_result || !keysEqual(single, keys[k]) || single.hash != keys[k].hash)
        abort();
    }
    covered += runs[k].count;
  }
  if (covered != 4) abort();

  // The same frame as a chained mbuf: a first segment of a length the last
  // two input bytes choose (an exact heap copy: ASan sees a read past it),
  // the whole length as frame_len. A key parsed so must be the contiguous
  // frame's key exactly; it may fail where that succeeds (headers split).
  if (size >= 2) {
    const uint32_t split = (data[size - 2] | uint32_t{data[size - 1]} << 8) % (len + 1);
    std::vector<uint8_t> head(data, data + split);
    PacketRef chained{head.data(), split, 0, false};
    chained.frame_len = len;
    FlowKey c;
    extractFlowKeys(&chained, 1, 5, &c);
    if (c.parse_result == static_cast<uint8_t>(ParseResult::kOk) &&
        (r != ParseResult::kOk || std::memcmp(&a, &c, sizeof(FlowKey)) != 0))
      abort();
    if (split == len && std::memcmp(&a, &c, sizeof(FlowKey)) != 0) abort();
  }
  return 0;
}
