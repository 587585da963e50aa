// The offload thread and mark allocator (see offload_manager.h). Control path.
#include "dataplane/modules/offload/offload_manager.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

#include <chrono>

#include "common/log.h"
#include "dataplane/modules/offload/match_translate.h"

namespace sluice::offload {
namespace {

// The refusal reason of a megaflow over the cap (retried when room frees).
constexpr std::string_view kRefuseCap = "cap";

// How often the thread looks at failed creates again.
constexpr auto kRetryInterval = std::chrono::milliseconds(10);

std::string failureName(const char* op, const absl::Status& s) {
  return absl::StrCat(op, "_", absl::AsciiStrToLower(absl::StatusCodeToString(s.code())));
}

}  // namespace

OffloadManager::OffloadManager(std::unique_ptr<OffloadProvider> provider, uint32_t max_flows,
                               GracePeriodSource* grace)
    : provider_(std::move(provider)),
      max_flows_(max_flows),
      marks_(2 * max_flows),
      grace_(grace != nullptr ? grace : &pmd_grace_) {
  for (uint32_t m = 0; m < marks_.capacity(); ++m) free_marks_.push_back(m);
  counters_.provider = provider_->name();
  counters_.max_flows = max_flows;
}

OffloadManager::~OffloadManager() { stop(); }

void OffloadManager::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { threadMain(); });
}

void OffloadManager::stop() {
  {
    std::lock_guard lock(queue_mu_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OffloadManager::enqueue(Request r) {
  {
    std::lock_guard lock(queue_mu_);
    queue_.push_back(std::move(r));
    ++queued_seq_;
  }
  queue_cv_.notify_one();
}

bool OffloadManager::wantsInPort(uint16_t in_port) const {
  return port_no_.load(std::memory_order_relaxed) == in_port;
}

void OffloadManager::flowInstalled(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation,
                                   const flow::FlowKey& upcall_key, const flow::FlowMask& mask,
                                   const flow::MegaflowActions& actions) {
  Request r;
  r.add = true;
  r.id = flowId(pmd, index, generation);
  r.target = {pmd, index, generation};
  r.key = flow::applyMask(upcall_key, mask);
  // The rule is per port: the in-port is implied, as OVS's per-port rules.
  r.key.in_port = upcall_key.in_port;
  r.mask = mask;
  // A decapsulated packet: the rule matches the outer headers too, and
  // translateMatch needs our VTEP and the VNI even where the mask leaves
  // them out (see match_translate.h).
  r.tunneled = upcall_key.tun_vni != 0;
  if (r.tunneled) {
    r.key.tun_dst = upcall_key.tun_dst;
    r.key.tun_vni = upcall_key.tun_vni;
  }
  r.plain_action = actions.kind == flow::MegaflowActions::Kind::kOutput ||
                   actions.kind == flow::MegaflowActions::Kind::kDrop;
  enqueue(std::move(r));
}

void OffloadManager::flowRemoved(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) {
  Request r;
  r.add = false;
  r.id = flowId(pmd, index, generation);
  enqueue(std::move(r));
}

void OffloadManager::processPending() {
  std::deque<Request> batch;
  {
    std::lock_guard lock(queue_mu_);
    batch.swap(queue_);
  }
  {
    std::lock_guard lock(mu_);
    handleBatch(batch);
  }
  std::lock_guard lock(queue_mu_);
  processed_seq_ += batch.size();
  idle_cv_.notify_all();
}

void OffloadManager::waitIdle() {
  std::unique_lock lock(queue_mu_);
  const uint64_t target = queued_seq_;
  if (!thread_.joinable()) {
    lock.unlock();
    processPending();
    return;
  }
  queue_cv_.notify_one();
  idle_cv_.wait(lock, [&] { return processed_seq_ >= target; });
}

void OffloadManager::threadMain() {
  std::unique_lock lock(queue_mu_);
  while (!stop_) {
    queue_cv_.wait_for(lock, kRetryInterval, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    std::deque<Request> batch;
    batch.swap(queue_);
    lock.unlock();
    {
      std::lock_guard state(mu_);
      handleBatch(batch);
    }
    lock.lock();
    processed_seq_ += batch.size();
    idle_cv_.notify_all();
  }
}

bool OffloadManager::handleBatch(std::deque<Request>& batch) {
  bool changed = !quarantine_.empty();
  // Failed creates of earlier rounds, once more each round until kMaxAttempts.
  std::vector<uint64_t> retry;
  retry.swap(retry_);
  for (const Request& r : batch) {
    if (r.add) handleAdd(r);
    else handleRemove(r.id);
    changed = true;
  }
  for (uint64_t id : retry) {
    auto it = flows_.find(id);
    if (it == flows_.end() || it->second.state != State::kPending) continue;
    ++counters_.retries;
    attempt(id, it->second);
    changed = true;
  }
  // Room freed by removals (or failures) goes to flows refused for the cap.
  if (!cap_waiting_.empty() && counters_.offloaded + pending_ < max_flows_) {
    retryCapRefused();
    changed = true;
  }
  if (changed && provider_->sync()) startGracePeriod();
  // Looked at every round, with or without requests: grace periods end on
  // the PMDs' schedule.
  freeMarksPastGrace();
  return changed;
}

void OffloadManager::handleAdd(const Request& r) {
  if (flows_.contains(r.id)) return;  // repeated report of the same megaflow
  FlowEntry& e = flows_[r.id];
  e.target = r.target;
  offer(r, e);
}

void OffloadManager::retryCapRefused() {
  while (!cap_waiting_.empty() && counters_.offloaded + pending_ < max_flows_) {
    Request r = std::move(cap_waiting_.front());
    cap_waiting_.pop_front();
    auto it = flows_.find(r.id);
    // Gone meanwhile (removed, or the port detached): nothing to retry.
    if (it == flows_.end() || it->second.state != State::kRefused || it->second.reason != kRefuseCap) continue;
    ++counters_.cap_retries;
    offer(r, it->second);
  }
}

void OffloadManager::offer(const Request& r, FlowEntry& e) {
  auto refuse = [&](std::string reason) {
    e.state = State::kRefused;
    ++counters_.refused[reason];
    e.reason = std::move(reason);
  };
  if (!dpdk_port_) return refuse("port_gone");
  if (!capability_.supported) return refuse("port_not_capable");
  if (counters_.offloaded + pending_ >= max_flows_) {
    // Offered again when a rule goes (oldest first); bounded, so a flood of
    // megaflows cannot grow the backlog without limit.
    if (cap_waiting_.size() >= max_flows_) cap_waiting_.pop_front();
    cap_waiting_.push_back(r);
    return refuse(std::string(kRefuseCap));
  }
  // VXLAN encap needs the inner flow hash, which a marked packet does not
  // carry: the mark branch executes output and drop only (a decap megaflow
  // is one of those: decapsulated traffic is never encapsulated again).
  if (!r.plain_action) return refuse("action");
  // The uplink's mark branch would take any marked frame for VXLAN to pop:
  // the external network's plain packets stay with the normal pipeline.
  if (tunnelled_only_ && !r.tunneled) return refuse("untunnelled");
  MatchTranslation t = translateMatch(r.key, r.mask, static_cast<uint16_t>(port_no_.load()), provider_->caps());
  if (!t.ok) return refuse(std::string(t.refusal));
  if (free_marks_.empty()) return refuse("no_free_mark");
  e.pattern = t.pattern;
  e.mark = free_marks_.front();
  free_marks_.pop_front();
  e.has_mark = true;
  ++pending_;
  // The entry before the rule: a packet can carry the mark only once the
  // rule exists, and must then find its megaflow.
  marks_.set(e.mark, e.target);
  if (absl::Status s = provider_->validate(*dpdk_port_, e.pattern, e.mark); !s.ok()) {
    releaseMark(e);
    --pending_;
    e.state = State::kFailed;
    e.reason = failureName("validate", s);
    ++counters_.failures[e.reason];
    logDebug("offload: validate refused ", e.pattern.describe(), ": ", s.message());
    return;
  }
  attempt(r.id, e);
}

void OffloadManager::attempt(uint64_t id, FlowEntry& e) {
  ++e.attempts;
  auto rule = provider_->create(*dpdk_port_, e.pattern, e.mark);
  if (rule.ok()) {
    e.rule = *rule;
    --pending_;
    e.state = State::kOffloaded;
    e.reason.clear();
    ++counters_.offloaded;
    ++counters_.installed;
    return;
  }
  const std::string why = failureName("create", rule.status());
  if (e.attempts < kMaxAttempts) {
    retry_.push_back(id);
    return;
  }
  releaseMark(e);
  --pending_;
  e.state = State::kFailed;
  e.reason = why;
  ++counters_.failures[why];
  logWarning("offload: creating the rule for ", e.pattern.describe(), " failed ", e.attempts,
             " times: ", rule.status().message());
}

void OffloadManager::releaseMark(FlowEntry& e) {
  if (!e.has_mark) return;
  marks_.clear(e.mark);
  quarantine_.push_back(e.mark);
  e.has_mark = false;
}

void OffloadManager::startGracePeriod() {
  if (quarantine_.empty()) return;
  // Requested only now, after the sync: a packet the software engine marked
  // just before it may still be in a PMD's burst, so the PMDs' quiescent
  // points must come after the sync, not merely after the clear.
  in_grace_.push_back({grace_->request(), std::move(quarantine_)});
  quarantine_.clear();
}

void OffloadManager::freeMarksPastGrace() {
  while (!in_grace_.empty() && grace_->passed(in_grace_.front().token)) {
    for (uint32_t m : in_grace_.front().marks) free_marks_.push_back(m);
    in_grace_.pop_front();
  }
}

void OffloadManager::handleRemove(uint64_t id) {
  auto it = flows_.find(id);
  if (it == flows_.end()) return;
  FlowEntry& e = it->second;
  if (e.state == State::kOffloaded) {
    // The PMD stops honouring the mark before the rule goes.
    marks_.clear(e.mark);
    if (dpdk_port_) {
      if (absl::Status s = provider_->destroy(*dpdk_port_, e.rule); !s.ok()) {
        ++counters_.failures[failureName("destroy", s)];
        logWarning("offload: destroying the rule for ", e.pattern.describe(), ": ", s.message());
        // The rule may still mark: its mark is never reused.
        e.has_mark = false;
      }
    }
    --counters_.offloaded;
    ++counters_.removed;
  } else if (e.state == State::kPending && e.has_mark) {
    --pending_;
  }
  releaseMark(e);
  flows_.erase(it);
}

void OffloadManager::attachPort(uint16_t port_no, uint16_t dpdk_port, uint16_t rx_queues, bool tunnelled_only) {
  std::lock_guard lock(mu_);
  capability_ = provider_->probe(dpdk_port, rx_queues);
  dpdk_port_ = dpdk_port;
  counters_.port_attached = true;
  counters_.port_no = port_no;
  counters_.capable = capability_.supported;
  counters_.capability_reason = capability_.reason;
  if (capability_.supported) {
    logInfo("offload: port ", port_no, " (DPDK port ", dpdk_port, ") offloads megaflows through ",
            provider_->name(), ": ", capability_.reason);
  } else {
    logWarning("offload: port ", port_no, " (DPDK port ", dpdk_port, ") cannot mark packets through ",
               provider_->name(), ": ", capability_.reason, "; nothing will be offloaded");
  }
  marks_.setPort(port_no);
  tunnelled_only_ = tunnelled_only;
  port_no_.store(port_no, std::memory_order_relaxed);
}

void OffloadManager::detachPort(uint16_t port_no) {
  std::lock_guard lock(mu_);
  if (port_no_.load() != port_no) return;
  port_no_.store(MarkTable::kNoPort, std::memory_order_relaxed);
  marks_.setPort(MarkTable::kNoPort);
  for (auto& [id, e] : flows_) {
    if (e.state == State::kOffloaded) {
      --counters_.offloaded;
      ++counters_.removed;
    }
    releaseMark(e);
  }
  flows_.clear();
  retry_.clear();
  cap_waiting_.clear();
  pending_ = 0;
  if (dpdk_port_) provider_->detach(*dpdk_port_);
  dpdk_port_.reset();
  counters_.port_attached = false;
  if (provider_->sync()) startGracePeriod();
  freeMarksPastGrace();
}

std::string OffloadManager::flowState(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) const {
  std::lock_guard lock(mu_);
  auto it = flows_.find(flowId(pmd, index, generation));
  if (it == flows_.end()) return "";
  const FlowEntry& e = it->second;
  switch (e.state) {
    case State::kOffloaded: return absl::StrCat("yes (mark ", e.mark, ")");
    case State::kPending: return "pending";
    case State::kRefused: return absl::StrCat("no (", e.reason, ")");
    case State::kFailed: return absl::StrCat("failed (", e.reason, ")");
  }
  return "";
}

OffloadStatsView OffloadManager::stats() const {
  std::lock_guard lock(mu_);
  OffloadStatsView v = counters_;
  provider_->selfCost(&v.engine_cycles, &v.engine_packets);
  return v;
}

}  // namespace sluice::offload
