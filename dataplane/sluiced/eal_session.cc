#include "dataplane/sluiced/eal_session.h"

#include <absl/strings/str_cat.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/log.h"
#include "dataplane/datapath/tsan_dpdk.h"

namespace sluice {
namespace {

std::vector<std::string> ealArguments(const SluicedConfig& c, const LcorePlacement& placement) {
  std::vector<std::string> args = {"sluiced"};
  args.insert(args.end(), {"--lcores", placement.ealLcores(), "--main-lcore", std::to_string(c.main_core)});
  std::istringstream extra(c.eal_args);
  for (std::string word; extra >> word;) args.push_back(word);
  // DPDK's own messages: keep them to warnings unless we are debugging.
  args.push_back(c.log_level == "debug" ? "--log-level=8" : "--log-level=5");
  return args;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EalSession>> EalSession::start(const SluicedConfig& config,
                                                              const LcorePlacement& placement) {
  std::vector<std::string> eal_args = ealArguments(config, placement);
  std::vector<char*> eal_argv;
  for (std::string& a : eal_args) eal_argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0)
    return absl::InternalError(absl::StrCat("EAL initialisation failed: ", rte_strerror(rte_errno)));
  std::unique_ptr<EalSession> session(new EalSession());
  if (absl::Status s = session->makePools(config); !s.ok()) return s;
  return session;
}

// One pool of `mbufs` buffers per NUMA socket the PMDs run on, in that
// socket's memory (one socket: the one pool). Cache of 256 per lcore:
// DPDK's recommended ceiling, amortises the ring. DPDK's default ops, or
// (built with TSan) ops that state its hand-overs.
absl::Status EalSession::makePools(const SluicedConfig& config) {
  const std::vector<unsigned> pmd_sockets = pmdSockets(config.pmd_cores, topology_);
  absl::StatusOr<MbufPools> pools = MbufPools::create(
      pmd_sockets,
      [&](unsigned socket) {
        return rte_pktmbuf_pool_create_by_ops(absl::StrCat("sluice_mbufs_s", socket).c_str(), config.mbufs, 256, 0,
                                              static_cast<uint16_t>(config.mbuf_size + RTE_PKTMBUF_HEADROOM),
                                              static_cast<int>(socket), handoverPoolOps());
      },
      rte_mempool_free);
  if (!pools.ok())
    return absl::Status(pools.status().code(),
                        absl::StrCat(pools.status().message(), " (", config.mbufs, " mbufs per socket)"));
  pools_ = *std::move(pools);
  if (pools_->bySocket().size() > 1) {
    std::string sockets;
    for (size_t p = 0; p < pmd_sockets.size(); ++p)
      sockets += absl::StrCat(p == 0 ? "" : ", ", "PMD ", p, " on ", pmd_sockets[p]);
    logInfo("NUMA: ", pools_->bySocket().size(), " mbuf pools of ", config.mbufs, " mbufs, one per socket (", sockets,
            ")");
  }
  return absl::OkStatus();
}

EalSession::~EalSession() {
  if (pools_)
    for (const auto& [socket, pool] : pools_->bySocket()) rte_mempool_free(pool);
  rte_eal_cleanup();
}

}  // namespace sluice
