// sluiced's PMDs: one context per configured PMD lcore (its flow caches
// sized and allocated here, before it runs: the fast path never
// allocates), the part of each context the features fill in, and the Pmd
// that runs on it. Launched once everything they read is in place; stopped
// and waited for explicitly, or when the fleet goes. Main thread only.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <memory>
#include <vector>

#include "dataplane/config/config.h"
#include "dataplane/datapath/pmd.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/sluiced/eal_session.h"
#include "dataplane/sluiced/feature_set.h"

namespace sluice {

class PmdFleet {
 public:
  // The contexts, each given its NUMA socket's pool and the features' parts,
  // then a Pmd on each. Nothing runs yet.
  static absl::StatusOr<std::unique_ptr<PmdFleet>> make(const SluicedConfig& config, const EalSession& eal,
                                                        FeatureSet& features);
  // Stops the PMDs if they still run.
  ~PmdFleet();
  PmdFleet(const PmdFleet&) = delete;
  PmdFleet& operator=(const PmdFleet&) = delete;

  // Each PMD's context, in pmd-cores order.
  const std::vector<PmdContext*>& contexts() const { return contexts_; }
  // Each PMD's mailbox, in the same order.
  std::vector<PmdMailbox*> mailboxes() const;
  size_t size() const { return pmds_.size(); }

  // Runs each PMD on its lcore. If one cannot be launched, those that were
  // are stopped again and the error names the lcore.
  absl::Status launch();
  // Asks every PMD to stop and waits until each has. Idempotent.
  void stop();

 private:
  PmdFleet() = default;
  static absl::StatusOr<std::unique_ptr<PmdContext>> makeContext(const SluicedConfig& config, unsigned lcore,
                                                                 uint32_t index);

  std::vector<std::unique_ptr<PmdContext>> owned_contexts_;
  std::vector<PmdContext*> contexts_;  // owned_contexts_, as control and the features take them
  std::vector<std::unique_ptr<Pmd>> pmds_;
  std::vector<unsigned> lcores_;  // each PMD's lcore
  bool launched_ = false;         // launch() was called and stop() has not been since
};

}  // namespace sluice
