// What the node controller knows from the API, shared by the watch thread
// (which writes it) and the reconcile loop (which reads snapshots of it):
// the Nodes by name, the resourceVersion, whether the view is in sync, the
// last error, the counters, and the set of things already logged. One mutex
// guards it all; a change bumps a generation and wakes the reconciler.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "agent/node_parser.h"

namespace sluice::agent {

enum class AgentCounter {
#define X(name, what) k_##name,
#include "agent/agent_counters.def"
#undef X
  kCount
};
const char* agentCounterName(AgentCounter c);

class NodeCache {
 public:
  struct Snapshot {
    std::map<std::string, KubeNode> nodes;
    std::string resource_version;
    bool synced = false;
    std::string last_error;
    std::map<std::string, uint64_t> counters;  // the fixed ones and node_<problem>
    uint64_t generation = 0;
  };

  // A full list: the Nodes are exactly these now.
  void replaceAll(std::map<std::string, KubeNode> nodes, const std::string& resource_version);
  void upsert(KubeNode node, const std::string& resource_version);
  void erase(const std::string& name, const std::string& resource_version);
  void setResourceVersion(const std::string& resource_version);
  // Synced: a list was read and a watch is open (or about to be reopened
  // after the server ended it); false while the API cannot be reached.
  void setSynced(bool synced);
  void setError(const std::string& error);  // empty: clears
  void count(AgentCounter c, uint64_t n = 1);
  // Counts and logs each distinct problem of a Node once (per node, kind
  // and detail); forgotten when the Node is deleted.
  void noteProblems(const KubeNode& node);
  // True the first time `key` is seen: the caller logs then, not again.
  bool firstTime(const std::string& key);

  Snapshot snapshot() const;
  // Waits until the generation passes `seen` or `until` comes.
  void waitChange(uint64_t seen, std::chrono::steady_clock::time_point until) const;
  // Wakes a waiter without a change (stopping).
  void wake() { changed_.notify_all(); }

 private:
  void bumpLocked();
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, KubeNode> nodes_;
  std::string resource_version_;
  bool synced_ = false;
  std::string last_error_;
  std::array<uint64_t, static_cast<size_t>(AgentCounter::kCount)> counters_{};
  std::map<std::string, uint64_t> problem_counts_;
  // Bounded: a server sending ever new garbage must not grow it without end
  // (past the bound, new problems are counted but no longer logged).
  static constexpr size_t kMaxLogged = 65536;
  std::set<std::string> logged_;
  uint64_t generation_ = 0;
};

}  // namespace sluice::agent
