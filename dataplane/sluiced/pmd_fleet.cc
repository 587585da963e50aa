#include "dataplane/sluiced/pmd_fleet.h"

#include <absl/strings/str_cat.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>

#include <atomic>

#include "dataplane/datapath/tsan_dpdk.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<PmdContext>> PmdFleet::makeContext(const SluicedConfig& config, unsigned lcore,
                                                                  uint32_t index) {
  auto ctx = std::make_unique<PmdContext>();
  ctx->lcore = lcore;
  ctx->index = index;
  ctx->sizePortTables(config.max_ports);
  ctx->megaflows = std::make_unique<flow::MegaflowTable>(config.flow_limit);
  flow::FlowLookupConfig fc;
  fc.emc.entries = config.emc_entries;
  fc.emc.insert_inv_prob = config.emc_insert_inv_prob;
  fc.emc.seed = 0x5eed + lcore;  // distinct insertion coin flips per PMD
  fc.smc.enabled = config.smc_enable;
  auto lookup = flow::FlowLookup::create(fc, *ctx->megaflows);
  if (!lookup.ok()) return absl::Status(lookup.status().code(), absl::StrCat("flow caches: ", lookup.status().message()));
  ctx->lookup = std::move(*lookup);
  ctx->gate.tsc_hz = rte_get_tsc_hz();
  ctx->gate.rate_per_sec = config.upcall_rate;
  ctx->gate.burst = config.upcall_burst;
  ctx->max_sleep_us = config.pmd_max_sleep_us;
  ctx->icmp_errors = {rte_get_tsc_hz(), config.icmp_error_rate};
  return ctx;
}

absl::StatusOr<std::unique_ptr<PmdFleet>> PmdFleet::make(const SluicedConfig& config, const EalSession& eal,
                                                         FeatureSet& features) {
  std::unique_ptr<PmdFleet> fleet(new PmdFleet());
  for (unsigned lcore : config.pmd_cores) {
    auto ctx = makeContext(config, lcore, static_cast<uint32_t>(fleet->contexts_.size()));
    if (!ctx.ok()) return ctx.status();
    fleet->contexts_.push_back(ctx->get());
    fleet->owned_contexts_.push_back(*std::move(ctx));
    fleet->lcores_.push_back(lcore);
  }
  givePmdsTheirPools(fleet->contexts_, eal.topology(), eal.pools());
  if (absl::Status s = features.preparePmds(fleet->contexts_); !s.ok()) return s;
  for (PmdContext* ctx : fleet->contexts_) fleet->pmds_.push_back(std::make_unique<Pmd>(*ctx));
  return fleet;
}

PmdFleet::~PmdFleet() { stop(); }

std::vector<PmdMailbox*> PmdFleet::mailboxes() const {
  std::vector<PmdMailbox*> mailboxes;
  for (PmdContext* ctx : contexts_) mailboxes.push_back(&ctx->mailbox);
  return mailboxes;
}

absl::Status PmdFleet::launch() {
  launched_ = true;
  for (size_t i = 0; i < pmds_.size(); ++i) {
    tsanRelease(pmds_[i].get());  // Pmd::launch acquires it on the lcore
    if (int rc = rte_eal_remote_launch(Pmd::launch, pmds_[i].get(), lcores_[i]); rc != 0) {
      stop();
      return absl::InternalError(absl::StrCat("launching the PMD on lcore ", lcores_[i], ": ", rte_strerror(-rc)));
    }
  }
  return absl::OkStatus();
}

void PmdFleet::stop() {
  if (!launched_) return;
  launched_ = false;
  for (PmdContext* ctx : contexts_) ctx->mailbox.stop.store(true, std::memory_order_relaxed);
  rte_eal_mp_wait_lcore();
  // A PMD's last act is storing `running` false (release); loading it
  // (acquire) orders all its work before what is freed after this, in our
  // own code, where ThreadSanitizer sees it (it cannot see inside DPDK's
  // wait).
  for (PmdContext* ctx : contexts_)
    while (ctx->mailbox.running.load(std::memory_order_acquire)) {
    }
}

}  // namespace sluice
