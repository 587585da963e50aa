// The reconcile loop (the agent's main thread): whenever the NodeCache
// changes, a NotReady Node's grace period ends, or the resync interval
// passes, it reads sluiced's table and overlay, publishes this node's VTEP
// on its own Node, plans (reconcile_plan.h) and applies the plan through
// sluice.v1.RemoteNodes, then reports its state to sluiced.
//   - Every pass compares the whole table, so a sluiced that restarted (its
//     checkpoint restored some nodes, or none) is brought back in line by
//     the next pass; a pass that finds sluiced without a controller report
//     (it restarted) counts a resync and runs at once.
//   - While the API view is not in sync (before the first list, or with
//     the API unreachable) the table is left alone: sluiced forwards on its
//     last table rather than on a guess.
//   - Failed calls to sluiced are retried after a capped backoff.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "agent/backoff.h"
#include "agent/kube_client.h"
#include "agent/node_cache.h"
#include "agent/reconcile_plan.h"
#include "agent/sluiced_client.h"

namespace sluice::agent {

struct ReconcileSettings {
  std::string own_name;
  std::chrono::seconds not_ready_grace{300};
  std::chrono::seconds resync_interval{30};
  Backoff::Duration backoff_initial{500};
  Backoff::Duration backoff_cap{30000};
};

class Reconciler {
 public:
  Reconciler(const ReconcileSettings& settings, NodeCache& cache, SluicedClient& sluiced, KubeClient& kube,
             std::atomic<bool>& stop);
  void run();

 private:
  // One pass; false when sluiced could not be reached.
  bool pass(const NodeCache::Snapshot& snap);
  void publishOwnVtep(const NodeCache::Snapshot& snap, const v1::Overlay& overlay);
  void apply(const Plan& plan);
  void report(const NodeCache::Snapshot& snap);
  void logOnce(const std::string& key, const std::string& message);

  ReconcileSettings settings_;
  NodeCache& cache_;
  SluicedClient& sluiced_;
  KubeClient& kube_;
  std::atomic<bool>& stop_;
  Backoff backoff_;
  std::optional<std::chrono::system_clock::time_point> next_expiry_;
  std::map<std::string, uint64_t> gauges_;  // from the last plan: nodes_desired, skipped_<reason>, ...
  std::string last_error_;                  // of the last pass toward sluiced (empty: fine)
  std::string patched_value_;               // the own annotation last written (not written twice)
};

}  // namespace sluice::agent
