// Which PMD polls each pod port's rx queue.
//
// A port stays on its PMD while others come and go: moving a queue costs a
// hand-over (published twice, every PMD waited for) and the new PMD's caches
// start cold, and a busy queue must never move because an unrelated pod was
// added or deleted. A port whose request names a PMD (pinned) goes there. A
// new port goes to the PMD that measured least busy since the previous
// placement; PMDs within one load step of each other count as equally busy
// (measurement noise must not decide), and among those the one polling the
// fewest queues wins, then the lowest index. On an idle node that spreads
// ports round-robin, as ports are added.
//
// Pure: the control thread measures the loads (PMD counters) and applies the
// result; tests drive it directly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace sluice {

// Loads closer than this (a share of a PMD's cycles) are a tie.
inline constexpr double kRxqLoadStep = 0.05;

struct RxqPort {
  uint16_t port_no = 0;
  std::optional<unsigned> current;  // the PMD polling it now; none: a new port
  std::optional<unsigned> pinned;   // the PMD its request names (valid index)
};

// One PMD index per port, in `ports`' order. `loads[p]`: the share of PMD
// p's cycles it spent on received packets (0..1) over the last measurement;
// `fixed_queues[p]`: queues already on p that this placement does not move
// (a module's own ports). Both sized to the PMD count (at least one).
std::vector<unsigned> placeRxQueues(const std::vector<RxqPort>& ports, const std::vector<double>& loads,
                                    std::vector<unsigned> fixed_queues);

}  // namespace sluice
