// Partial offload's control side: the offload thread that turns megaflows
// into NIC rules (match -> MARK(id) + RSS) and removes them again, the mark
// allocator, and the offload statistics. Never runs on a PMD.
//
// Flow: FlowControl (flow thread / API threads, within the control core's
// changes) reports megaflows upcalled from the offload port and megaflows being
// killed (FlowOffloadSink); those calls only queue a request. The offload
// thread takes the queue in batches and, per megaflow:
//   add:    cap check -> translate the match (refused when incomplete, by
//           reason) -> take a mark -> publish mark -> megaflow in the
//           MarkTable -> validate -> create (retried up to kMaxAttempts);
//           a megaflow refused for the cap waits (FIFO, bounded) and is
//           offered again once removals make room;
//   remove: clear the mark's entry (the PMD stops using it at once) ->
//           destroy the rule -> after the provider's sync, a grace period
//           starts (grace_period.h); once every PMD has passed a quiescent
//           point since, no packet marked by the old rule can be between
//           its rx burst and its mark lookup, and the mark returns to the
//           free FIFO (reused last, see mark_table.h).
// A provider that probed "not capable" gets no rule; its megaflows are
// counted as refused "port_not_capable" and the probe's reason is in stats.
//
// Locks: queue_mu_ guards only the request queue (FlowControl never waits on
// the provider); mu_ guards everything else and is held by the offload
// thread while it calls the provider, and by attach/detach/stats/flowState.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dataplane/core/flow_offload_sink.h"
#include "dataplane/modules/offload/grace_period.h"
#include "dataplane/modules/offload/offload_provider.h"
#include "dataplane/datapath/mark_table.h"

namespace sluice::offload {

struct OffloadStatsView {
  std::string provider;            // "rte_flow" or "software"
  bool port_attached = false;
  uint32_t port_no = 0;            // Sluice port number of the offload port
  bool capable = false;            // the probe's answer for that port
  std::string capability_reason;   // the probe's reason
  uint32_t max_flows = 0;
  uint64_t offloaded = 0;          // rules installed now (a gauge)
  uint64_t installed = 0;          // rules created, ever
  uint64_t removed = 0;            // rules destroyed because their megaflow went
  uint64_t retries = 0;            // create attempts after a failed one
  uint64_t cap_retries = 0;        // flows refused for the cap, offered again when room freed
  std::map<std::string, uint64_t> refused;   // not attempted: translation, cap, port
  std::map<std::string, uint64_t> failures;  // attempted and failed: validate/create/destroy
  // A software provider's own work on the PMD since start (see
  // OffloadProvider::selfCost); zero for hardware.
  uint64_t engine_cycles = 0;
  uint64_t engine_packets = 0;
};

class OffloadManager final : public FlowOffloadSink {
 public:
  // Create attempts per megaflow before it is marked failed.
  static constexpr uint32_t kMaxAttempts = 3;

  // max_flows caps the offloaded megaflows; marks are twice that, so a
  // freed mark waits behind at least max_flows others before reuse.
  // `grace`: where grace periods come from; null: pmdGracePeriods(), which
  // the offload module serves with the control core's snapshots.
  OffloadManager(std::unique_ptr<OffloadProvider> provider, uint32_t max_flows,
                 GracePeriodSource* grace = nullptr);
  ~OffloadManager() override;
  OffloadManager(const OffloadManager&) = delete;
  OffloadManager& operator=(const OffloadManager&) = delete;

  MarkTable& marks() { return marks_; }
  PmdGracePeriods& pmdGracePeriods() { return pmd_grace_; }
  OffloadProvider& provider() { return *provider_; }

  // The offload thread. Without it, tests call processPending() themselves.
  void start();
  void stop();
  // Processes every queued request now (caller's thread; only while the
  // thread is not running).
  void processPending();
  // Returns once every request queued before the call has been processed.
  void waitIdle();

  // DataplaneControl, when the offload port appears / goes (after the PMDs
  // stopped polling it): probe once, and remove every rule.
  // tunnelled_only: the port is the overlay's uplink, whose mark branch
  // executes decapsulation hits only; an untunnelled megaflow there (a
  // packet from the external network) is refused as "untunnelled".
  void attachPort(uint16_t port_no, uint16_t dpdk_port, uint16_t rx_queues, bool tunnelled_only = false);
  void detachPort(uint16_t port_no);

  // FlowOffloadSink.
  bool wantsInPort(uint16_t in_port) const override;
  void flowInstalled(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation,
                     const flow::FlowKey& upcall_key, const flow::FlowMask& mask,
                     const flow::MegaflowActions& actions) override;
  void flowRemoved(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) override;
  std::string flowState(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) const override;

  OffloadStatsView stats() const;

 private:
  enum class State : uint8_t { kPending, kOffloaded, kRefused, kFailed };
  struct FlowEntry {
    State state = State::kPending;
    std::string reason;
    uint32_t mark = 0;
    bool has_mark = false;
    RuleHandle rule = 0;
    uint32_t attempts = 0;
    MarkTarget target;
    FlowPattern pattern;
  };
  struct Request {
    bool add = true;
    uint64_t id = 0;
    MarkTarget target;
    flow::FlowKey key;
    flow::FlowMask mask;
    bool tunneled = false;  // the upcall came decapsulated (tunnel metadata in the key)
    bool plain_action = true;  // output or drop: what the PMD's mark branch executes
  };
  static uint64_t flowId(uint32_t pmd, flow::MegaflowIndex index, uint32_t generation) {
    return (static_cast<uint64_t>(pmd) << 56) | (static_cast<uint64_t>(index) << 32) | generation;
  }

  void threadMain();
  // Both with mu_ held.
  bool handleBatch(std::deque<Request>& batch);
  void handleAdd(const Request& r);
  // Takes e (new, or refused for the cap) through the checks and, if they
  // pass, a mark and the provider.
  void offer(const Request& r, FlowEntry& e);
  // Offers flows refused for the cap again while there is room.
  void retryCapRefused();
  void handleRemove(uint64_t id);
  void attempt(uint64_t id, FlowEntry& e);
  void releaseMark(FlowEntry& e);
  // After a successful provider sync: the quarantined marks wait for a grace
  // period. Then: marks whose grace period has passed become free.
  void startGracePeriod();
  void freeMarksPastGrace();
  void enqueue(Request r);

  std::unique_ptr<OffloadProvider> provider_;
  const uint32_t max_flows_;
  MarkTable marks_;

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Request> queue_;
  uint64_t queued_seq_ = 0;     // requests queued, ever (queue_mu_)
  uint64_t processed_seq_ = 0;  // requests processed, ever (queue_mu_)
  std::condition_variable idle_cv_;
  bool stop_ = false;
  std::thread thread_;

  mutable std::mutex mu_;
  std::atomic<uint32_t> port_no_{MarkTable::kNoPort};  // wantsInPort reads it lock-free
  bool tunnelled_only_ = false;  // attachPort's (under mu_)
  std::optional<uint16_t> dpdk_port_;
  Capability capability_;
  std::map<uint64_t, FlowEntry> flows_;
  std::vector<uint64_t> retry_;      // ids of kPending entries whose create failed
  std::deque<Request> cap_waiting_;  // refused for the cap, oldest first (at most max_flows_)
  uint64_t pending_ = 0;             // entries holding a mark, not yet offloaded or failed
  std::deque<uint32_t> free_marks_;  // FIFO: oldest freed first
  std::vector<uint32_t> quarantine_; // freed marks waiting for a provider sync
  struct MarksInGrace {
    uint64_t token = 0;              // the grace period they wait for
    std::vector<uint32_t> marks;     // in the order they were freed
  };
  std::deque<MarksInGrace> in_grace_;  // synced, waiting for the PMDs; oldest first
  PmdGracePeriods pmd_grace_;
  GracePeriodSource* grace_;         // pmd_grace_ unless a test gave another
  OffloadStatsView counters_;
};

}  // namespace sluice::offload
