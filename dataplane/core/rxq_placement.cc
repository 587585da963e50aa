#include "dataplane/core/rxq_placement.h"

#include <algorithm>
#include <cmath>
#include <map>

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

}  // namespace sluice
