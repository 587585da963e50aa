#include "dataplane/core/rxq_placement.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/log.h"
#include "dataplane/core/numa_topology.h"
#include "dataplane/core/port_table.h"

namespace sluice {

std::vector<unsigned> placeRxQueues(const std::vector<RxqItem>& items, const std::vector<double>& loads,
                                    std::vector<unsigned> fixed_queues, const std::vector<unsigned>& pmd_sockets) {
  const size_t n_pmds = loads.size();
  const bool numa = pmd_sockets.size() == n_pmds;
  // Whether PMD p may take a queue of a port on `socket`: any PMD when the
  // socket is unknown or has no PMD, else only the socket's own.
  auto eligible = [&](size_t p, std::optional<unsigned> socket) {
    if (!numa || !socket) return true;
    if (pmd_sockets[p] == *socket) return true;
    return std::find(pmd_sockets.begin(), pmd_sockets.end(), *socket) == pmd_sockets.end();
  };
  std::vector<unsigned>& queues = fixed_queues;  // every PMD's queue count as placement goes on
  // Per port: how many of its queues each PMD polls as placement goes on.
  std::map<uint16_t, std::vector<unsigned>> own;
  auto ownOf = [&](uint16_t port_no) -> std::vector<unsigned>& {
    auto [it, added] = own.try_emplace(port_no);
    if (added) it->second.assign(n_pmds, 0);
    return it->second;
  };
  std::vector<unsigned> out(items.size(), 0);
  std::vector<bool> decided(items.size(), false);
  // Queues that keep their PMD first, so that new ones see every queue.
  for (size_t i = 0; i < items.size(); ++i) {
    const RxqItem& q = items[i];
    std::optional<unsigned> stay = q.pinned ? q.pinned : q.current;
    if (!stay || *stay >= n_pmds) continue;
    out[i] = *stay;
    decided[i] = true;
    ++queues[*stay];
    ++ownOf(q.port_no)[*stay];
  }
  std::vector<long> step(n_pmds);
  for (size_t p = 0; p < n_pmds; ++p) step[p] = std::lround(std::floor(loads[p] / kRxqLoadStep));
  for (size_t i = 0; i < items.size(); ++i) {
    if (decided[i]) continue;
    std::vector<unsigned>& mine = ownOf(items[i].port_no);
    const std::optional<unsigned> socket = items[i].socket;
    size_t best = 0;
    while (!eligible(best, socket)) ++best;  // one is: the socket's first PMD
    for (size_t p = best + 1; p < n_pmds; ++p) {
      if (!eligible(p, socket)) continue;
      if (mine[p] != mine[best]) {
        if (mine[p] < mine[best]) best = p;
      } else if (step[p] < step[best] || (step[p] == step[best] && queues[p] < queues[best])) {
        best = p;
      }
    }
    out[i] = static_cast<unsigned>(best);
    ++queues[best];
    ++mine[best];
  }
  return out;
}

namespace {

// A pod port's queues as placement items. Only a port with queues to place
// needs its socket (a vhost-user port's is read from its pod's device). A
// port placed while its socket was unknown is placed again, once, when it
// is known (its pod connected, so its traffic and caches are just
// starting): with PMDs on that socket, those of its queues polled from
// another socket move there.
void addPodQueues(uint16_t n, PortEntry& e, const std::vector<unsigned>& pmd_sockets, const NumaTopology* topology,
                  std::vector<RxqItem>& items) {
  const bool place = !e.placed || e.socket_pending;
  const std::optional<unsigned> socket =
      place && topology != nullptr ? topology->portSocket(e.dpdk) : std::nullopt;
  bool again = false;
  if (e.placed && e.socket_pending && socket) {
    e.socket_pending = false;
    for (unsigned pmd : e.queue_pmds) again |= pmd_sockets[pmd] != *socket;
    if (std::find(pmd_sockets.begin(), pmd_sockets.end(), *socket) == pmd_sockets.end()) again = false;
    if (again)
      logInfo("port ", n, ": its pod connected on NUMA socket ", *socket, "; its rx queues move to that socket's PMDs");
  }
  if (!e.placed) e.socket_pending = topology != nullptr && !socket && !e.request.pmd;
  for (uint16_t q = 0; q < e.dpdk.rx_queues; ++q) {
    const bool stays = e.placed && !(again && pmd_sockets[e.queue_pmds[q]] != *socket);
    items.push_back({n, q, stays ? std::optional<unsigned>(e.queue_pmds[q]) : std::nullopt, e.request.pmd, socket});
  }
}

}  // namespace

PmdRxQueues planRxQueues(PortTable& ports, const std::vector<double>& loads, const std::vector<unsigned>& pmd_sockets,
                         const NumaTopology* topology) {
  PmdRxQueues target(loads.size());
  std::vector<RxqItem> pod_queues;
  std::vector<unsigned> module_queues(loads.size(), 0);
  ports.forEachPort([&](uint16_t n, PortEntry& e) {
    if (!e.isPod()) {
      target[e.pmd].push_back({n, 0});  // a module's port stays where the module put it
      ++module_queues[e.pmd];
      return;
    }
    addPodQueues(n, e, pmd_sockets, topology, pod_queues);
  });
  const std::vector<unsigned> placed =
      placeRxQueues(pod_queues, loads, module_queues, topology != nullptr ? pmd_sockets : std::vector<unsigned>{});
  for (size_t i = 0; i < pod_queues.size(); ++i) {
    const RxqItem& q = pod_queues[i];
    target[placed[i]].push_back({q.port_no, q.queue});
    // Every packet of a queue polled from another socket crosses the
    // interconnect: worth a line when it is decided.
    if (!q.current && q.socket && pmd_sockets[placed[i]] != *q.socket)
      logInfo("port ", q.port_no, " rx queue ", q.queue, ": polled by PMD ", placed[i], " on NUMA socket ",
              pmd_sockets[placed[i]], ", across from the port's socket ", *q.socket,
              q.pinned && *q.pinned == placed[i] ? " (pinned there)" : " (no PMD on the port's socket)");
  }
  return target;
}

}  // namespace sluice
