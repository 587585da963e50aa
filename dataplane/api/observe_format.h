// `sluicectl trace` output: one trace record as text.
#pragma once

#include <string>

#include "sluice/v1/observe.pb.h"

namespace sluice {

// `n`: the record's number in the trace (0 for a TracePacket answer).
std::string formatTraceRecord(const v1::TraceRecord& r, uint32_t n);

}  // namespace sluice
