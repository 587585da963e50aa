// libFuzzer target for flow key extraction, the first code to touch bytes a
// pod or the wire controls. Beyond "no crash, no read past len" (ASan sees
// reads past the exactly-sized input), it checks the extractor's contract:
// the result is a listed reason, offsets stay inside the frame, a failed
// parse carries no hash, extraction is deterministic and the burst form
// agrees with the single-packet form.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "dataplane/datapath/flow/flow_key.h"

using sluice::flow::extractFlowKey;
using sluice::flow::extractFlowKeys;
using sluice::flow::FlowKey;
using sluice::flow::hashKey;
using sluice::flow::kParseResultCount;
using sluice::flow::PacketRef;
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
  return 0;
}
