#include "dataplane/core/rxq_placement.h"

#include <cmath>

namespace sluice {

std::vector<unsigned> placeRxQueues(const std::vector<RxqPort>& ports, const std::vector<double>& loads,
                                    std::vector<unsigned> fixed_queues) {
  const size_t n_pmds = loads.size();
  std::vector<unsigned>& queues = fixed_queues;  // every PMD's queue count as placement goes on
  std::vector<unsigned> out(ports.size(), 0);
  std::vector<bool> decided(ports.size(), false);
  // Ports that keep their PMD first, so that new ones see every queue.
  for (size_t i = 0; i < ports.size(); ++i) {
    const RxqPort& p = ports[i];
    std::optional<unsigned> stay = p.pinned ? p.pinned : p.current;
    if (!stay || *stay >= n_pmds) continue;
    out[i] = *stay;
    decided[i] = true;
    ++queues[*stay];
  }
  std::vector<long> step(n_pmds);
  for (size_t q = 0; q < n_pmds; ++q) step[q] = std::lround(std::floor(loads[q] / kRxqLoadStep));
  for (size_t i = 0; i < ports.size(); ++i) {
    if (decided[i]) continue;
    size_t best = 0;
    for (size_t q = 1; q < n_pmds; ++q)
      if (step[q] < step[best] || (step[q] == step[best] && queues[q] < queues[best])) best = q;
    out[i] = static_cast<unsigned>(best);
    ++queues[best];
  }
  return out;
}

}  // namespace sluice
