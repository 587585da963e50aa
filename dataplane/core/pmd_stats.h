// One PMD's statistics as control reports them: a plain copy of every counter
// of pmd_counters.def, so control can keep a baseline (taken by ClearStats)
// and report the counters' growth since then without ever writing to the
// PMD's own counters.
#pragma once

#include <cstdint>

#include "dataplane/datapath/pmd_counters.h"

namespace sluice {

struct PmdStatsView {
  unsigned index = 0, lcore = 0;
  unsigned numa_socket = 0;  // the socket of the PMD's lcore
#define SLUICE_PMD_COUNTER(field, proto_field, help) uint64_t field = 0;
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  uint64_t megaflows = 0;  // live now (not a counter: never cleared)
};

// Every counter of `counters` as it reads now; index, lcore, socket and megaflows are
// left zero: they are not the PMD's counters to know.
PmdStatsView readPmdStats(const PmdCounters& counters);

// `now` with every counter reduced by its value in `baseline`; index, lcore,
// socket and megaflows are `now`'s.
PmdStatsView subtract(const PmdStatsView& now, const PmdStatsView& baseline);

}  // namespace sluice
