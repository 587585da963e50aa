// One mbuf pool per NUMA socket that has PMDs, and which pool each user
// takes: a PMD its own socket's (the buffers it allocates, IPv4 fragments and
// the copies of what vhost-user pods send, stay in its socket's memory), an
// ethdev's rx queues the pool of the socket the port is on, where placement
// puts its PMDs (rxq_placement.h). On a
// machine of one socket this is the one pool sluiced always had.
// Made and freed by sluiced's main thread; read-only while PMDs run.
#pragma once

#include <absl/functional/function_ref.h>
#include <absl/status/statusor.h>
#include <rte_mempool.h>

#include <map>
#include <optional>
#include <vector>

#include "dataplane/core/numa_topology.h"
#include "dataplane/datapath/pmd_context.h"

namespace sluice {

class MbufPools {
 public:
  // Makes a pool on `socket`; null on failure (rte_errno says why).
  using Make = absl::FunctionRef<rte_mempool*(unsigned socket)>;
  // Frees a pool made by Make (rte_mempool_free; tests pass their own).
  using Free = absl::FunctionRef<void(rte_mempool*)>;

  // A pool for every socket of `pmd_sockets` (each PMD's socket, in PMD
  // order; at least one). On failure the pools made so far are freed and
  // the error names the socket. The pools are the caller's to free (each of
  // bySocket(), after the PMDs and ports are gone, before EAL is).
  static absl::StatusOr<MbufPools> create(const std::vector<unsigned>& pmd_sockets, Make make, Free free);

  // The pool of `socket`; a socket without PMDs, or an unknown one, gets
  // the home pool (its buffers cross sockets either way).
  rte_mempool* forSocket(std::optional<unsigned> socket) const;
  // The pool of PMD 0's socket: for ports a feature opens, which PMD 0 polls.
  rte_mempool* home() const { return home_; }
  // Every pool by socket.
  const std::map<unsigned, rte_mempool*>& bySocket() const { return pools_; }

 private:
  MbufPools(std::map<unsigned, rte_mempool*> pools, rte_mempool* home) : pools_(std::move(pools)), home_(home) {}
  std::map<unsigned, rte_mempool*> pools_;
  rte_mempool* home_ = nullptr;
};

// Each PMD's socket, from its lcore, in `pmds`' order.
std::vector<unsigned> pmdSockets(const std::vector<unsigned>& pmd_lcores, const NumaTopology& topology);

// Gives every PMD the pool of its lcore's socket (PmdContext's fragment_pool
// and packet_pool).
void givePmdsTheirPools(const std::vector<PmdContext*>& pmds, const NumaTopology& topology, const MbufPools& pools);

}  // namespace sluice
