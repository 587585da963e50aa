#include "dataplane/core/pmd_stats.h"

namespace sluice {

PmdStatsView readPmdStats(const PmdCounters& counters) {
  PmdStatsView v;
#define SLUICE_PMD_COUNTER(field, proto_field, help) v.field = counters.field.read();
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  return v;
}

PmdStatsView subtract(const PmdStatsView& now, const PmdStatsView& baseline) {
  PmdStatsView v = now;
#define SLUICE_PMD_COUNTER(field, proto_field, help) v.field -= baseline.field;
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  return v;
}

}  // namespace sluice
