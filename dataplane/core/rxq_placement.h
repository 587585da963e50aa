// Which PMD polls each rx queue of the pod ports.
//
// A queue stays on its PMD while others come and go: moving a queue costs a
// hand-over (published twice, every PMD waited for) and the new PMD's caches
// start cold, and a busy queue must never move because an unrelated pod was
// added or deleted. The queues of a port whose request names a PMD (pinned)
// all go there. A new queue goes first to a PMD polling the fewest of its own
// port's queues, so that a multi-queue port spreads over the PMDs (the reason
// it has several queues); among those, to the PMD that measured least busy
// since the previous placement; PMDs within one load step of each other count
// as equally busy (measurement noise must not decide), and among those the
// one polling the fewest queues wins, then the lowest index. On an idle node
// that spreads single-queue ports round-robin, as ports are added, and each
// multi-queue port's queues round-robin over the PMDs.
//
// NUMA: a new queue of a port on socket s goes to the PMDs of socket s only
// (by the rule above among them), when socket s has any: a PMD on another
// socket would reach the port's memory across the interconnect for every
// packet. A port whose socket is unknown (a vhost-user port before its pod
// connected), or whose socket has no PMD, is placed over every PMD. A pin
// still wins, on whichever socket its PMD is.
//
// placeRxQueues is pure: tests drive it directly. planRxQueues gathers its
// input from the port table (the control thread measures the loads from the
// PMD counters) and returns every port's queues by PMD.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace sluice {

class PortTable;
class NumaTopology;

// Each PMD's rx queues: (port number, queue id) pairs.
using PmdRxQueues = std::vector<std::vector<std::pair<uint16_t, uint16_t>>>;

// Loads closer than this (a share of a PMD's cycles) are a tie.
inline constexpr double kRxqLoadStep = 0.05;

// One rx queue of a pod port.
struct RxqItem {
  uint16_t port_no = 0;
  uint16_t queue = 0;               // rx queue id on that port
  std::optional<unsigned> current;  // the PMD polling it now; none: a new queue
  std::optional<unsigned> pinned;   // the PMD its port's request names (valid index)
  std::optional<unsigned> socket;   // the NUMA socket the port is on; none: unknown (any PMD)
};

// One PMD index per queue, in `queues`' order. `loads[p]`: the share of PMD
// p's cycles it spent on received packets (0..1) over the last measurement;
// `fixed_queues[p]`: queues already on p that this placement does not move
// (a module's own ports); `pmd_sockets[p]`: PMD p's NUMA socket. All three
// sized to the PMD count (at least one); `pmd_sockets` may be empty: every
// PMD on one socket.
std::vector<unsigned> placeRxQueues(const std::vector<RxqItem>& queues, const std::vector<double>& loads,
                                    std::vector<unsigned> fixed_queues,
                                    const std::vector<unsigned>& pmd_sockets = {});

// Where every port's rx queues go now: a module's port stays on its PMD; a
// pod port's placed queues stay, its new ones are placed (placeRxQueues),
// and a port placed while its NUMA socket was unknown is placed once more
// when it is known (its pod connected). Updates the ports' socket_pending
// marks; `recordPlacement` records the result. `loads` and `pmd_sockets`:
// one per PMD; `topology` null: one socket, ports' unknown.
PmdRxQueues planRxQueues(PortTable& ports, const std::vector<double>& loads,
                         const std::vector<unsigned>& pmd_sockets, const NumaTopology* topology);

}  // namespace sluice
