// The fast path's drop reasons as an enum, with their metric names. Generated
// from drop_reasons.def so the enum, the strings and the counters cannot drift.
// Used by PMD threads (to count) and by control/API (to report).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice {

enum class DropReason : uint8_t {
#define SLUICE_DROP_REASON(name, metric, help) name,
#include "dataplane/datapath/drop_reasons.def"
#undef SLUICE_DROP_REASON
};

inline constexpr size_t kDropReasonCount = 0
#define SLUICE_DROP_REASON(name, metric, help) +1
#include "dataplane/datapath/drop_reasons.def"
#undef SLUICE_DROP_REASON
    ;

inline constexpr std::array<std::string_view, kDropReasonCount> kDropReasonNames = {
#define SLUICE_DROP_REASON(name, metric, help) metric,
#include "dataplane/datapath/drop_reasons.def"
#undef SLUICE_DROP_REASON
};

inline constexpr std::array<std::string_view, kDropReasonCount> kDropReasonHelp = {
#define SLUICE_DROP_REASON(name, metric, help) help,
#include "dataplane/datapath/drop_reasons.def"
#undef SLUICE_DROP_REASON
};

constexpr std::string_view dropReasonName(DropReason r) {
  return kDropReasonNames[static_cast<size_t>(r)];
}

}  // namespace sluice
