// libFuzzer target for the checkpoint parser (dataplane/core/checkpoint.h):
// sluiced reads the file at every start, and a damaged file must be refused
// with a status, never crash it. Property checked beyond "no crash": what
// parses serialises to text that parses to the same state (restore rewrites
// the checkpoint from what it read).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dataplane/core/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = sluice::parseCheckpoint(text);
  if (!parsed.ok()) return 0;
  const std::string once = sluice::serializeCheckpoint(*parsed);
  auto again = sluice::parseCheckpoint(once);
  if (!again.ok() || sluice::serializeCheckpoint(*again) != once) std::abort();
  return 0;
}
