// The control core: the port table (pods' ports and modules' own ports such
// as the uplink), the forwarding table, the PMD snapshots and the statistics
// baselines. Features (the VXLAN overlay, SR-IOV VFs, partial offload) are
// modules (control_module.h) registered at start. The gRPC service and
// sluicectl see the node only through typed functions of the core and the
// modules.
//
// Every change has one shape: open a Change (writer and table locks) →
// change the tables → revalidate megaflows and publish a snapshot →
// checkpoint → reply. Thread-safe: API threads call in concurrently (control
// path only; PMDs never take these locks). The writer lock makes changes one
// at a time, for their whole length; the table lock guards the tables and is
// what readers (listings, statistics, health) take. A change holds both,
// except while it waits for PMDs to acknowledge a snapshot: then only the
// writer lock, so a slow PMD delays changes, never readers. The compiler
// checks these rules (clang's -Wthread-safety): members say which lock
// guards them, and functions which locks they need.
//
// The state lives in parts that own it: the port table (port_table.h), the
// forwarding tables (forwarding_state.h), the PMD snapshots
// (snapshot_publisher.h), the statistics baselines (stats_baseline.h); this
// class holds them, and the sequences that change them together.
//
// Changes reach PMDs as immutable snapshots (pmd_snapshot.h): a call that
// changes the port set returns only after every running PMD has acknowledged
// the new snapshot, so a removed port is closed only once no PMD can touch it.
#pragma once

#include <absl/status/statusor.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "dataplane/config/config.h"
#include "dataplane/core/checkpoint.h"
#include "dataplane/core/control_module.h"
#include "dataplane/core/flow_control.h"
#include "dataplane/core/forwarding_state.h"
#include "dataplane/core/numa_topology.h"
#include "dataplane/core/periodic_thread.h"
#include "dataplane/core/port_backend.h"
#include "dataplane/core/port_request.h"
#include "dataplane/core/port_table.h"
#include "dataplane/core/snapshot_publisher.h"
#include "dataplane/core/stats_baseline.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

struct PortView {
  uint16_t port_no = 0;
  PortRequest request;
  std::string socket_path;
  std::string dpdk_name;
  unsigned pmd = 0;
  bool link_up = false;
  std::string netns;  // watched for garbage collection; empty: not watched
  std::vector<unsigned> queue_pmds;  // the PMD polling each rx queue, by queue id (pmd is queue 0's)
  std::optional<unsigned> numa_socket;  // the NUMA socket the port is on; none: unknown
};

struct HealthView {
  bool ready = false;
  double uptime_seconds = 0;
  uint32_t ports = 0, max_ports = 0, pmds = 0;
  Ipv4Cidr pod_cidr;
  Ipv4Address gateway;
  MacAddress gateway_mac;
  std::optional<Ipv6PodCidr> v6;  // pod-cidr-v6 and gateway-v6, when set
  uint32_t restored_ports = 0;    // restored from the checkpoint at start
  uint64_t garbage_collected = 0; // attachments removed since start: pod netns vanished
  uint64_t ipv4_fragmented = 0;    // IPv4 datagrams fragmented since start, every PMD
  uint64_t ipv4_fragments = 0;     // the fragments made of them
};

struct RestoreSummary {
  unsigned restored = 0;           // ports re-created with their number and socket
  unsigned dropped = 0;            // records that could not be restored (logged)
  unsigned garbage_collected = 0;  // records whose pod netns vanished meanwhile
};

struct AddPortResult {
  PortView port;
  bool created = false;
};

class DataplaneControl {
 public:
  // `pmds`: every PMD's context (owned by the daemon's main, outliving this).
  // `topology` (outliving this): which NUMA socket each PMD and port is on,
  // for rx queue placement and statistics; null: one socket, ports' unknown.
  DataplaneControl(const SluicedConfig& config, PortBackend& backend, std::vector<PmdContext*> pmds,
                   uint64_t tsc_hz, const NumaTopology* topology = nullptr);
  ~DataplaneControl();
  DataplaneControl(const DataplaneControl&) = delete;
  DataplaneControl& operator=(const DataplaneControl&) = delete;

  // Registration, before start(): feature modules (control_module.h), in
  // the order their hooks run, and where megaflows are offered for offload.
  void registerModule(ControlModule* module) ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  void unregisterModuleLocked(ControlModule* module) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  void setFlowOffload(offload::FlowOffloadSink* sink) ABSL_LOCKS_EXCLUDED(change_mu_, mu_);

  // Publishes the first snapshot; call before launching the PMDs.
  void start() ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // `netns`: the pod's netns path (CNI_NETNS); watched for garbage
  // collection if it exists now. With a checkpoint store set, the new port
  // is on disk before this returns (else the port is undone, INTERNAL).
  absl::StatusOr<AddPortResult> addPort(const RawPortRequest& raw, const std::string& netns = {})
      ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // Returns whether an attachment was removed (false: unknown attachment,
  // not an error); a module's attachment (an SR-IOV VF) is released by it.
  absl::StatusOr<bool> deletePort(const AttachmentId& id) ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // The pods' ports (a module's own ports, such as the uplink, are not
  // attachments and are not listed).
  std::vector<PortView> listPorts() ABSL_LOCKS_EXCLUDED(mu_);
  StatsView stats() ABSL_LOCKS_EXCLUDED(mu_);
  void clearStats() ABSL_LOCKS_EXCLUDED(mu_);
  HealthView health() ABSL_LOCKS_EXCLUDED(mu_);
  // Removes every pod's port (daemon shutdown): sockets closed and unlinked.
  void removeAllPorts() ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // Every megaflow of every PMD (`sluicectl flows`).
  std::vector<FlowView> listFlows() ABSL_LOCKS_EXCLUDED(mu_);
  // What the tables in force decide for a packet with this key (how a miss
  // is translated: the uncached decision; `sluicectl trace --packet`).
  FlowTranslation translate(const flow::FlowKey& key) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the flow thread (upcalls, expiry, module ticks); before the PMDs stop.
  void stopFlowThread() ABSL_LOCKS_EXCLUDED(change_mu_, mu_);

  // Checkpointing (checkpoint.h): with a store, every change is written to
  // it before the call returns. Without one (unit tests), nothing is.
  // removeAllPorts (shutdown) never writes: the ports are to come back.
  void setCheckpointStore(CheckpointStore* store) ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // Re-creates checkpointed ports with their port numbers and sockets (call
  // once, before the API serves), after handing every module its section.
  // A record that is invalid under the current configuration, collides, or
  // whose port DPDK refuses is logged and dropped; one whose pod netns
  // vanished is garbage-collected. The checkpoint is then rewritten with
  // what was restored (sections of unregistered modules kept as they were).
  // (restore.cc)
  RestoreSummary restore(const CheckpointState& state) ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // Removes every attachment (port, or a module's) whose watched netns path
  // no longer exists; returns how many. Run by the collector thread every
  // `interval` (and callable directly).
  size_t collectGarbage() ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  void startGarbageCollector(std::chrono::milliseconds interval);
  void stopGarbageCollector();

  // ---- For modules ----
  // A change: the writer lock for its whole length, and the table lock,
  // which publishing lets go while PMDs acknowledge. Lock order: writer,
  // then tables. Every *Locked function below needs both, except the
  // readers that say they need the table lock only.
  class ABSL_SCOPED_LOCKABLE Change {
   public:
    explicit Change(DataplaneControl& control) ABSL_EXCLUSIVE_LOCK_FUNCTION(control.change_mu_, control.mu_)
        : control_(control) {
      control_.change_mu_.lock();
      control_.mu_.lock();
    }
    ~Change() ABSL_UNLOCK_FUNCTION() {
      control_.mu_.unlock();
      control_.change_mu_.unlock();
    }
    Change(const Change&) = delete;
    Change& operator=(const Change&) = delete;

   private:
    DataplaneControl& control_;
  };
  // A read: the table lock only (never waits for PMDs).
  [[nodiscard]] std::unique_lock<Mutex> read() ABSL_LOCKS_EXCLUDED(mu_) { return std::unique_lock(mu_); }
  // For a module's hook, which the core calls within a change: tells the
  // compiler (which cannot follow the virtual call) that the change's locks
  // are held, and checks it in debug builds.
  void assertInChange() const ABSL_ASSERT_EXCLUSIVE_LOCK(change_mu_, mu_) {
    change_mu_.assertHeld();
    mu_.assertHeld();
  }

  // The configuration sluiced started with (its restart-only keys hold for
  // the whole run; live ones may have changed since: applyLiveSettings).
  const SluicedConfig& config() const { return config_; }
  // The keys config_keys.def marks live, from `live`: the PMDs' settings
  // (tx-flush-interval, EMC, SMC, upcall budget) reach them in a snapshot of
  // the same tables, the idle timeout the flow thread, the interval the
  // garbage collector, checkpoint-fsync the next checkpoint write. Returns
  // once every running PMD runs the new settings.
  void applyLiveSettings(const SluicedConfig& live) ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // Moves the PMDs' tx onto the queues each pod enabled, when the backend
  // says that may have changed. The flow thread does it every tick; a
  // control without megaflows (no flow thread: tests) calls it itself.
  void applyQueueStateChanges() ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // New tables for the PMDs: routes rebuilt, megaflows revalidated, rx
  // queues reassigned, a snapshot published and acknowledged by every PMD.
  void republishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Each PMD's busy share of its cycles since the previous call (the rx
  // queue placement's measure; a PMD that ran too briefly since keeps its
  // previous share).
  std::vector<double> measurePmdLoadsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same tables under a new version: returns once every running PMD has
  // passed a quiescent point (what a grace period needs).
  void quiesceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Writes the checkpoint (no-op without a store) with every port and every
  // module's section, plus `pending` (a port about to be made); on failure
  // the state is marked dirty and the next change retries.
  absl::Status writeCheckpointLocked(const CheckpointPort* pending = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Whether the file differs from the tables (a write failed; the next
  // change retries it). A module that undoes what a failed write recorded
  // sets it back.
  bool checkpointDirtyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return checkpoint_dirty_; }
  void setCheckpointDirtyLocked(bool dirty) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_) {
    checkpoint_dirty_ = dirty;
  }
  // The port of a pod's attachment, if it has one.
  std::optional<uint16_t> portOfLocked(const AttachmentId& id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ports_.portOf(id);
  }
  // A port a module opens itself (the overlay's uplink): in the port table
  // at `port_no` (which pods never get), polled by PMD `pmd` only, sent to
  // by every PMD under `tx_lock` (which the module may share with its own
  // sends), labelled `label` in statistics. Not an attachment: not listed,
  // checkpointed or collected; it stays until removeModulePortLocked.
  absl::Status addModulePortLocked(uint16_t port_no, const std::string& label, uint16_t dpdk_port,
                                   rte_spinlock_t* tx_lock, unsigned pmd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  void removeModulePortLocked(uint16_t port_no) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Every local port's routed prefixes (what a remote node's CIDRs and
  // published prefixes must not overlap).
  std::vector<Ipv4Cidr> routedPrefixesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ports_.routedPrefixes();
  }
  std::vector<Ipv6Cidr> routedPrefixes6Locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ports_.routedPrefixes6();
  }

 private:
  // What every snapshot is made of now.
  SnapshotInputs snapshotInputs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads which tx queues each pod enabled (after the backend said that may
  // have changed) and moves the PMDs' tx onto them.
  void refreshTxQueues() ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // After the backend said pods' queues may have changed (a pod connected):
  // republishes if a port placed while its NUMA socket was unknown now has
  // one, so that placement moves its queues to that socket's PMDs.
  void placeAgainOnKnownSockets() ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Both, when the backend says pods' queues may have changed.
  void takeQueueStateChange() ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // The NUMA socket of a port (none: unknown, or no topology).
  std::optional<unsigned> portSocket(const CreatedPort& port) const;
  PortView viewOf(uint16_t port_no) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An attachment already there: the same port again (created false), or
  // AlreadyExists when the parameters differ or a module holds it.
  std::optional<absl::StatusOr<AddPortResult>> existingAttachment(const PortRequest& req)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Checkpoints (unless a vdev), then opens the port for `req` at `port_no`
  // and republishes.
  absl::Status recordAndCreatePort(uint16_t port_no, const PortRequest& req, const RawPortRequest& raw,
                                   const std::string& watched, const std::string& socket_path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  void removePort(uint16_t port_no) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  // Creates the DPDK port and the table entry for a validated request at a
  // free `port_no` on `socket_path` (empty for a vdev; a restored port keeps
  // its checkpointed one) (no republish, no checkpoint).
  absl::Status createPort(uint16_t port_no, const PortRequest& req, const RawPortRequest& raw,
                          const std::string& netns, const std::string& socket_path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  ControlModule* holderOf(const AttachmentId& id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FailedPrecondition when `req`'s routed prefixes overlap another port's
  // prefixes or addresses, or a module refuses them.
  absl::Status checkRoutedPrefixes(const PortRequest& req) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The flow thread's work, every millisecond: installs upcalled megaflows,
  // expires idle ones and ticks the modules, each as a change like any other.
  void flowTick() ABSL_LOCKS_EXCLUDED(change_mu_, mu_);
  // Restore's steps (restore.cc).
  void restoreSections(const CheckpointState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  void restorePort(CheckpointPort rec, RestoreSummary& summary) ABSL_EXCLUSIVE_LOCKS_REQUIRED(change_mu_, mu_);
  absl::StatusOr<PortRequest> checkRestored(const CheckpointPort& rec, const std::string& who) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SluicedConfig config_;
  // The node's IPv6 pod network from config_ (pod-cidr-v6, gateway-v6), as
  // requests are checked against it.
  const std::optional<Ipv6PodCidr> v6_cidr_;
  PortBackend& backend_;
  const std::vector<PmdContext*> pmds_;
  const NumaTopology* const topology_;
  // Each PMD's NUMA socket (from its lcore); all 0 without a topology.
  const std::vector<unsigned> pmd_sockets_;
  const uint64_t tsc_hz_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();

  Mutex change_mu_;                           // the writer lock (see Change)
  Mutex mu_ ABSL_ACQUIRED_AFTER(change_mu_);  // the table lock

  // The live settings now in force (applyLiveSettings). The PMDs get theirs
  // in every snapshot.
  uint32_t tx_flush_interval_us_ ABSL_GUARDED_BY(mu_);
  uint32_t flow_idle_timeout_ms_ ABSL_GUARDED_BY(mu_);
  PmdSettings pmd_settings_ ABSL_GUARDED_BY(mu_);

  std::vector<ControlModule*> modules_ ABSL_GUARDED_BY(mu_);  // registered before start(); changed only within a change
  PortTable ports_ ABSL_GUARDED_BY(mu_);
  ForwardingState forwarding_ ABSL_GUARDED_BY(mu_);  // the latest snapshot's (what upcalls translate with)
  // Only changes publish: the writer lock guards it, and it lets go of the
  // table lock while PMDs acknowledge.
  SnapshotPublisher publisher_ ABSL_GUARDED_BY(change_mu_);
  StatsBaseline stats_ ABSL_GUARDED_BY(mu_);
  FlowControl flows_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // When the flow thread last looked for idle megaflows.
  std::chrono::steady_clock::time_point last_expiry_ ABSL_GUARDED_BY(change_mu_) = started_at_;

  // Checkpoint: the store (null: none), and the sections of modules that
  // are not registered, kept as loaded.
  CheckpointStore* checkpoint_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, nlohmann::json> unclaimed_sections_ ABSL_GUARDED_BY(mu_);
  bool checkpoint_dirty_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t restored_ports_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t gc_collected_ ABSL_GUARDED_BY(mu_) = 0;

  // Last, so that they stop (and join) before anything their work touches
  // goes: the flow thread's and the garbage collector's.
  PeriodicThread flow_thread_{[this] { flowTick(); }};
  PeriodicThread gc_thread_{[this] { collectGarbage(); }};
};

}  // namespace sluice
