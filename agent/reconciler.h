// The reconcile loop (the agent's main thread): whenever the NodeCache
// changes, a NotReady Node's grace period ends, or the resync interval
// passes, it publishes this node's VTEP on its own Node, plans
// (reconcile_plan.h) against its copy of sluiced's table and applies the
// plan through sluice.v1.RemoteNodes, then reports its state to sluiced.
//   - Events that arrive together are one pass and one plan: the loop takes
//     a snapshot of everything the watch delivered while the last pass ran,
//     and the plan goes to sluiced as ApplyNodes batches of at most
//     `max_batch` changes (one checkpoint write and one republish each in
//     sluiced), not a call per node.
//   - It keeps its own copy of sluiced's table (what the last ListNodes
//     said, plus what its own batches changed), so a pass costs the changes,
//     not a read of the whole table. The copy is read again (ListNodes) at
//     start, every resync interval, after any failed call, and when a reply
//     names another sluiced instance (sluiced restarted: its table is what
//     its checkpoint restored); a pass that finds sluiced without a
//     controller report or after an error counts a resync.
//   - While the API view is not in sync (before the first list, or with
//     the API unreachable) the table is left alone: sluiced forwards on its
//     last table rather than on a guess.
//   - Failed calls to sluiced are retried after a capped backoff.
//   - Every `prefixes_interval` it reads the local ports from sluiced and
//     publishes their routed prefixes on its own Node
//     (sluice.dev/routed-prefixes, prefix_publish.h), which every other
//     node's controller sends to its sluiced with this node.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

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
  size_t max_batch = 2000;  // changes per ApplyNodes
  // How often the local ports' routed prefixes are read from sluiced (and
  // published on this node's own Node when they changed): how long a pod's
  // new or released prefix takes to reach the other nodes, at most, plus
  // their watch's delay.
  std::chrono::milliseconds prefixes_interval{1000};
  // Take other nodes' VTEPs that are none of their InternalIPs (an underlay
  // network of its own); by default such a node is left out.
  bool allow_vtep_outside_internal_ips = false;
  // Other nodes' routed prefixes are routed only inside these ranges and
  // outside the cluster's pod CIDRs (reconcile_plan.h).
  PrefixRanges routed_prefix_ranges;
  PrefixRanges cluster_pod_cidrs;
};

class Reconciler {
 public:
  Reconciler(const ReconcileSettings& settings, NodeCache& cache, SluicedClient& sluiced, KubeClient& kube,
             std::atomic<bool>& stop);
  void run();

 private:
  // One pass; false when sluiced could not be reached.
  bool pass(const NodeCache::Snapshot& snap);
  // Reads sluiced's table into held_ (false: unreachable).
  bool list();
  void publishOwnVtep(const NodeCache::Snapshot& snap, const v1::Overlay& overlay);
  // Publishes the local ports' routed prefixes (prefix_publish.h) on this
  // node's own Node.
  void publishOwnPrefixes(const NodeCache::Snapshot& snap);
  void apply(const Plan& plan);
  void report(const NodeCache::Snapshot& snap);
  // A reply's sluiced instance: another one than the listed table's means
  // a restarted sluiced, whose table is read again.
  void checkInstance(const std::string& instance);
  void logOnce(const std::string& key, const std::string& message);
  std::string ownNodeStatusPath() const;

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
  std::optional<nlohmann::json> patched_prefixes_;  // the routed-prefixes patch last written, likewise
  std::chrono::steady_clock::time_point next_prefixes_{};  // when the local ports are read next
  // sluiced's table as this loop knows it (every source), by name; none:
  // read it (ListNodes) before the next plan.
  std::optional<std::map<std::string, TableNode>> held_;
  v1::Overlay overlay_;      // from the last ListNodes
  std::string instance_;     // the sluiced process held_ was read from
  std::chrono::steady_clock::time_point next_list_{};
};

}  // namespace sluice::agent
