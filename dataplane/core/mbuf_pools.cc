#include "dataplane/core/mbuf_pools.h"

#include <absl/strings/str_cat.h>
#include <rte_errno.h>

namespace sluice {

absl::StatusOr<MbufPools> MbufPools::create(const std::vector<unsigned>& pmd_sockets, Make make, Free free) {
  if (pmd_sockets.empty()) return absl::InvalidArgumentError("mbuf pools: no PMD");
  std::map<unsigned, rte_mempool*> pools;
  for (unsigned socket : pmd_sockets) {
    if (pools.contains(socket)) continue;
    rte_mempool* pool = make(socket);
    if (pool == nullptr) {
      const int error = rte_errno;
      for (auto& [s, p] : pools) free(p);
      return absl::ResourceExhaustedError(
          absl::StrCat("creating the mbuf pool of NUMA socket ", socket, ": ", rte_strerror(error)));
    }
    pools[socket] = pool;
  }
  rte_mempool* home = pools.at(pmd_sockets.front());
  return MbufPools(std::move(pools), home);
}

rte_mempool* MbufPools::forSocket(std::optional<unsigned> socket) const {
  if (!socket) return home_;
  auto it = pools_.find(*socket);
  return it == pools_.end() ? home_ : it->second;
}

std::vector<unsigned> pmdSockets(const std::vector<unsigned>& pmd_lcores, const NumaTopology& topology) {
  std::vector<unsigned> out;
  out.reserve(pmd_lcores.size());
  for (unsigned lcore : pmd_lcores) out.push_back(topology.lcoreSocket(lcore));
  return out;
}

void givePmdsTheirPools(const std::vector<PmdContext*>& pmds, const NumaTopology& topology, const MbufPools& pools) {
  for (PmdContext* pmd : pmds) {
    rte_mempool* pool = pools.forSocket(topology.lcoreSocket(pmd->lcore));
    pmd->fragment_pool = pool;  // IPv4 fragments (rare), direct and indirect alike
    pmd->packet_pool = pool;    // what vhost-user ports receive is copied into it
  }
}

}  // namespace sluice
