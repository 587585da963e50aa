#include "agent/node_cache.h"

#include <absl/strings/str_cat.h>

#include "common/log.h"

namespace sluice::agent {

const char* agentCounterName(AgentCounter c) {
  switch (c) {
#define X(name, what) \
  case AgentCounter::k_##name: return #name;
#include "agent/agent_counters.def"
#undef X
    case AgentCounter::kCount: break;
  }
  return "unknown";
}

void NodeCache::bumpLocked() {
  ++generation_;
  changed_.notify_all();
}

void NodeCache::replaceAll(std::map<std::string, KubeNode> nodes, const std::string& rv) {
  std::lock_guard lock(mutex_);
  nodes_ = std::move(nodes);
  resource_version_ = rv;
  bumpLocked();
}

void NodeCache::upsert(KubeNode node, const std::string& rv) {
  std::lock_guard lock(mutex_);
  const std::string name = node.name;
  nodes_[name] = std::move(node);
  if (!rv.empty()) resource_version_ = rv;
  bumpLocked();
}

void NodeCache::erase(const std::string& name, const std::string& rv) {
  std::lock_guard lock(mutex_);
  nodes_.erase(name);
  if (!rv.empty()) resource_version_ = rv;
  // A Node of that name made again later is a new one: its problems are
  // logged again.
  const std::string prefix = absl::StrCat("node\x1f", name, "\x1f");
  for (auto it = logged_.lower_bound(prefix); it != logged_.end() && it->rfind(prefix, 0) == 0;)
    it = logged_.erase(it);
  bumpLocked();
}

void NodeCache::setResourceVersion(const std::string& rv) {
  std::lock_guard lock(mutex_);
  resource_version_ = rv;
}

void NodeCache::setSynced(bool synced) {
  std::lock_guard lock(mutex_);
  if (synced_ == synced) return;
  synced_ = synced;
  bumpLocked();
}

void NodeCache::setError(const std::string& error) {
  std::lock_guard lock(mutex_);
  last_error_ = error;
}

void NodeCache::count(AgentCounter c, uint64_t n) {
  std::lock_guard lock(mutex_);
  counters_[static_cast<size_t>(c)] += n;
}

void NodeCache::noteProblems(const KubeNode& node) {
  std::lock_guard lock(mutex_);
  for (const auto& [problem, detail] : node.problems) {
    const std::string key = absl::StrCat("node\x1f", node.name, "\x1f", nodeProblemName(problem), "\x1f", detail);
    if (logged_.contains(key)) continue;
    ++counters_[static_cast<size_t>(AgentCounter::k_node_problems)];
    ++problem_counts_[absl::StrCat("node_", nodeProblemName(problem))];
    if (logged_.size() >= kMaxLogged) continue;
    logged_.insert(key);
    // A Node without the annotation is normal (it does not run Sluice).
    if (problem == NodeProblem::kNoAnnotation) logInfo("node ", node.name, ": ", detail, " (skipped)");
    else logWarning("node ", node.name, ": ", detail);
  }
}

bool NodeCache::firstTime(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (logged_.size() >= kMaxLogged) return false;
  return logged_.insert(key).second;
}

NodeCache::Snapshot NodeCache::snapshot() const {
  std::lock_guard lock(mutex_);
  Snapshot s;
  s.nodes = nodes_;
  s.resource_version = resource_version_;
  s.synced = synced_;
  s.last_error = last_error_;
  for (size_t i = 0; i < counters_.size(); ++i)
    s.counters[agentCounterName(static_cast<AgentCounter>(i))] = counters_[i];
  for (const auto& [name, n] : problem_counts_) s.counters[name] = n;
  s.generation = generation_;
  return s;
}

void NodeCache::waitChange(uint64_t seen, std::chrono::steady_clock::time_point until) const {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, until, [&] { return generation_ != seen; });
}

}  // namespace sluice::agent
