// The control side of the flow caches: turns upcalls into megaflows,
// revalidates megaflows when the tables change, expires idle ones, and
// lists them (`sluicectl flows`). Control thread only: every method is
// called within the control core's changes, so they never run concurrently.
//
// Per PMD it owns the classifier versions (flow/classifier.h) and the index
// of installed megaflows; the MegaflowTable itself is shared with the PMD,
// following the install/kill/recycle protocol in flow/megaflow.h:
//   - a change (install, kill) goes into `next`, a version level with the
//     published one; a kill also takes effect at once through the megaflow's
//     alive flag (every tier checks it), which is what makes revalidation
//     immediate: the PMD stops using a stale megaflow before the API call
//     that made it stale publishes the new tables;
//   - commit() publishes `next` through the PMD's mailbox, waits until the
//     PMD acknowledged it at its quiescent point, then frees the old version
//     and recycles the killed megaflows' slots (no reader can remain: the
//     classifier that named them is gone, the caches check generation).
//   - versions are double-buffered: the one published before (`spare`) is
//     no PMD's once the PMD acknowledged its successor, so the next version
//     is that one with the last commit's changes replayed, not a copy of all
//     subtables: a commit costs O(changes), not O(megaflows), under the lock
//     that every API call and upcall also takes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "dataplane/core/flow_offload_sink.h"
#include "dataplane/datapath/flow/classifier.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/datapath/pmd_snapshot.h"
#include "dataplane/datapath/upcall_queue.h"

namespace sluice {

// One megaflow as `sluicectl flows` shows it.
struct FlowView {
  unsigned pmd = 0;
  uint32_t index = 0;
  std::string match;    // masked fields, e.g. "eth_type=0x0800,ttl=2+,ipv4_dst=10.0.0.2"
  std::string mask;     // the mask per field, e.g. "eth_type=0xffff,ttl=0xff,ipv4_dst=255.255.255.255"
  std::string actions;  // e.g. "output:1(l3_rewrite)" or "drop:no_route"
  uint64_t packets = 0, bytes = 0;
  double idle_seconds = 0, age_seconds = 0;
  std::string offload;  // partial offload: "yes (mark N)", "no (why)", "failed (why)", "pending", "" (not offered)
};

// Control-side counters per PMD (monotonic; no clearing needed by tests).
struct FlowControlCounters {
  uint64_t megaflows = 0;          // live now
  uint64_t installed = 0;          // megaflows created from upcalls
  uint64_t duplicate_upcalls = 0;  // upcalls for a megaflow that already existed
  uint64_t flow_limit_hits = 0;    // upcalls refused: flow-limit reached
  uint64_t evicted = 0;            // least recently used megaflows removed to make room
  uint64_t revalidated = 0;        // megaflows removed because the tables changed
  uint64_t expired = 0;            // megaflows removed for idleness
};

class FlowControl {
 public:
  using TscFn = uint64_t (*)();
  // A PMD without flow caches (unit tests of the port table) is skipped.
  FlowControl(const std::vector<PmdContext*>& pmds, uint64_t tsc_hz, uint32_t idle_timeout_ms, TscFn tsc);
  FlowControl(const FlowControl&) = delete;
  FlowControl& operator=(const FlowControl&) = delete;

  // A new idle timeout (flow-idle-timeout-ms changed while running): the
  // next expireIdle() uses it.
  void setIdleTimeout(uint32_t idle_timeout_ms) { idle_cycles_ = tsc_hz_ / 1000 * idle_timeout_ms; }

  // Drains every PMD's upcall queue: translates each key with `tables` (the
  // current ones), installs the megaflow unless it exists. A table that is
  // (nearly) full first loses its least recently used megaflows, so that new
  // flows keep being cached when old or hostile ones filled it (the PMD
  // forwards either way; an evicted flow's next packet upcalls again).
  // Call commit() after. `unlocked_while_waiting`: as for commit().
  void handleUpcalls(const RouteTables& tables, Mutex* unlocked_while_waiting = nullptr);
  // Re-translates every megaflow's masked key with `tables`; kills those whose
  // mask or actions changed. Call before the PMDs see the new tables, commit() after.
  void revalidate(const RouteTables& tables);
  // Kills megaflows unused for the idle timeout. Call commit() after.
  void expireIdle();
  // Publishes changed classifier versions, waits for the PMDs, recycles.
  // `unlocked_while_waiting`: a lock the caller holds that readers need; it
  // is let go while PMDs acknowledge (nothing list() reads changes then).
  void commit(Mutex* unlocked_while_waiting = nullptr);

  std::vector<FlowView> list() const;
  std::vector<FlowControlCounters> counters() const;
  bool hasFlows() const;
  // Partial offload: megaflows upcalled from the sink's in-port are offered
  // to it, and every killed megaflow is reported (null: offload off).
  void setOffload(offload::FlowOffloadSink* sink) { offload_ = sink; }

 private:
  // One insert or remove applied to a classifier version.
  struct ClassifierChange {
    bool insert;
    flow::MegaflowIndex megaflow;  // insert only
    flow::FlowMask mask;
    flow::FlowKey key;
  };
  struct PerPmd {
    PmdContext* pmd;
    std::unique_ptr<flow::Classifier> published;  // the version the PMD searches
    std::unique_ptr<flow::Classifier> next;       // changes since; null if none
    std::unique_ptr<flow::Classifier> spare;      // published before; no PMD reads it
    std::vector<ClassifierChange> replay;         // what turned `spare` into `published`
    std::vector<ClassifierChange> changes;        // applied to `next` so far
    std::map<std::string, flow::MegaflowIndex> installed;  // mask+key bytes -> megaflow
    std::vector<flow::MegaflowIndex> killed;      // awaiting commit()
    FlowControlCounters c;
  };

  flow::Classifier& editable(PerPmd& p);
  // Megaflows inserted by a commit that waits for its PMD (the caller's lock
  // let go): the PMD does not search them yet, so list() and counters()
  // show them once it does (a listed megaflow is one packets can hit).
  std::set<flow::MegaflowIndex> notYetSearched(const PerPmd& p) const;
  // Changes to `next` that are remembered for the spare version.
  absl::Status classifierInsert(PerPmd& p, const flow::Megaflow& m, flow::MegaflowIndex i);
  void classifierRemove(PerPmd& p, const flow::Megaflow& m);
  void kill(PerPmd& p, flow::MegaflowIndex i);
  // Publishes p's changes, waits for its PMD, recycles the killed slots.
  // The caller holds `unlocked_while_waiting` when it gives one (the
  // analysis cannot follow a lock that is optional).
  void commit(PerPmd& p, Mutex* unlocked_while_waiting) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // Kills the least recently used megaflows until `free` slots will be free.
  void evictLeastRecentlyUsed(PerPmd& p, uint32_t free);

  std::vector<PerPmd> pmds_;
  uint64_t tsc_hz_;
  uint64_t idle_cycles_;
  TscFn tsc_;
  offload::FlowOffloadSink* offload_ = nullptr;
};

// Text forms used by list() (and its tests).
std::string describeMatch(const flow::FlowKey& key, const flow::FlowMask& mask);
std::string describeMask(const flow::FlowMask& mask);
std::string describeActions(const flow::MegaflowActions& actions);

}  // namespace sluice
