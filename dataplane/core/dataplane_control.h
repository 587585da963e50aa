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
// writer lock, so a slow PMD delays changes, never readers.
//
// Changes reach PMDs as immutable snapshots (pmd_snapshot.h): a call that
// changes the port set returns only after every running PMD has acknowledged
// the new snapshot, so a removed port is closed only once no PMD can touch it.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dataplane/config/config.h"
#include "dataplane/core/checkpoint.h"
#include "dataplane/core/control_module.h"
#include "dataplane/core/flow_control.h"
#include "dataplane/core/numa_topology.h"
#include "dataplane/core/pmd_stats.h"
#include "dataplane/core/pod_socket_dir.h"
#include "dataplane/core/port_backend.h"
#include "dataplane/core/port_request.h"
#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/flow_translate.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/datapath/pmd_counters.h"
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

struct PortStatsView {
  uint16_t port_no = 0;
  AttachmentId attachment;
  uint64_t rx_packets = 0, tx_packets = 0, tx_dropped = 0, rx_dropped = 0;
  uint64_t rx_bytes = 0, tx_bytes = 0;  // as the port's driver counts them
};

// One rx queue of a port, and the packets it brought (summed over the PMDs
// that polled it since the counters were cleared).
struct RxQueueStatsView {
  uint16_t port_no = 0;
  uint16_t queue = 0;
  unsigned pmd = 0;  // the PMD polling it now
  uint64_t packets = 0;
};

struct StatsView {
  uint64_t tsc_hz = 0;
  std::vector<PmdStatsView> pmds;
  std::vector<PortStatsView> ports;
  std::vector<RxQueueStatsView> rx_queues;  // every port's (modules' first), in port and queue order
  std::array<uint64_t, kDropReasonCount> drops{};
  double seconds_since_clear = 0;
  uint32_t tx_flush_interval_us = 0;
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
  void registerModule(ControlModule* module);
  void unregisterModuleLocked(ControlModule* module);
  void setFlowOffload(offload::FlowOffloadSink* sink);

  // Publishes the first snapshot; call before launching the PMDs.
  void start();
  // `netns`: the pod's netns path (CNI_NETNS); watched for garbage
  // collection if it exists now. With a checkpoint store set, the new port
  // is on disk before this returns (else the port is undone, INTERNAL).
  absl::StatusOr<AddPortResult> addPort(const RawPortRequest& raw, const std::string& netns = {});
  // Returns whether an attachment was removed (false: unknown attachment,
  // not an error); a module's attachment (an SR-IOV VF) is released by it.
  absl::StatusOr<bool> deletePort(const AttachmentId& id);
  // The pods' ports (a module's own ports, such as the uplink, are not
  // attachments and are not listed).
  std::vector<PortView> listPorts();
  StatsView stats();
  void clearStats();
  HealthView health();
  // Removes every pod's port (daemon shutdown): sockets closed and unlinked.
  void removeAllPorts();
  // Every megaflow of every PMD (`sluicectl flows`).
  std::vector<FlowView> listFlows();
  // What the tables in force decide for a packet with this key (how a miss
  // is translated: the uncached decision; `sluicectl trace --packet`).
  FlowTranslation translate(const flow::FlowKey& key);
  // Stops the flow thread (upcalls, expiry, module ticks); before the PMDs stop.
  void stopFlowThread();

  // Checkpointing (checkpoint.h): with a store, every change is written to
  // it before the call returns. Without one (unit tests), nothing is.
  // removeAllPorts (shutdown) never writes: the ports are to come back.
  void setCheckpointStore(CheckpointStore* store);
  // Re-creates checkpointed ports with their port numbers and sockets (call
  // once, before the API serves), after handing every module its section.
  // A record that is invalid under the current configuration, collides, or
  // whose port DPDK refuses is logged and dropped; one whose pod netns
  // vanished is garbage-collected. The checkpoint is then rewritten with
  // what was restored (sections of unregistered modules kept as they were).
  RestoreSummary restore(const CheckpointState& state);
  // Removes every attachment (port, or a module's) whose watched netns path
  // no longer exists; returns how many. Run by the collector thread every
  // `interval` (and callable directly).
  size_t collectGarbage();
  void startGarbageCollector(std::chrono::milliseconds interval);
  void stopGarbageCollector();

  // ---- For modules ----
  // A change: the writer lock for its whole length, and the table lock,
  // which publishing lets go while PMDs acknowledge. Lock order: writer,
  // then tables. Every *Locked function below needs one.
  class Change {
   public:
    explicit Change(DataplaneControl& control)
        : control_(control), writer_(control.change_mu_), tables_(control.mu_) {
      control_.change_tables_lock_ = &tables_;
    }
    ~Change() { control_.change_tables_lock_ = nullptr; }
    Change(const Change&) = delete;
    Change& operator=(const Change&) = delete;

   private:
    DataplaneControl& control_;
    std::unique_lock<std::mutex> writer_;
    std::unique_lock<std::mutex> tables_;
  };
  // A read: the table lock only (never waits for PMDs).
  [[nodiscard]] std::unique_lock<std::mutex> read() { return std::unique_lock(mu_); }

  // The configuration sluiced started with (its restart-only keys hold for
  // the whole run; live ones may have changed since: applyLiveSettings).
  const SluicedConfig& config() const { return config_; }
  // The keys config_keys.def marks live, from `live`: the PMDs' settings
  // (tx-flush-interval, EMC, SMC, upcall budget) reach them in a snapshot of
  // the same tables, the idle timeout the flow thread, the interval the
  // garbage collector, checkpoint-fsync the next checkpoint write. Returns
  // once every running PMD runs the new settings.
  void applyLiveSettings(const SluicedConfig& live);
  // Moves the PMDs' tx onto the queues each pod enabled, when the backend
  // says that may have changed. The flow thread does it every tick; a
  // control without megaflows (no flow thread: tests) calls it itself.
  void applyQueueStateChanges();
  // New tables for the PMDs: routes rebuilt, megaflows revalidated, rx
  // queues reassigned, a snapshot published and acknowledged by every PMD.
  void republishLocked();
  // Each PMD's busy share of its cycles since the previous call (the rx
  // queue placement's measure; a PMD that ran too briefly since keeps its
  // previous share).
  std::vector<double> measurePmdLoadsLocked();
  // The same tables under a new version: returns once every running PMD has
  // passed a quiescent point (what a grace period needs).
  void quiesceLocked();
  // Writes the checkpoint (no-op without a store) with every port and every
  // module's section, plus `pending` (a port about to be made); on failure
  // the state is marked dirty and the next change retries.
  absl::Status writeCheckpointLocked(const CheckpointPort* pending = nullptr);
  // Whether the file differs from the tables (a write failed; the next
  // change retries it). A module that undoes what a failed write recorded
  // sets it back.
  bool checkpointDirtyLocked() const { return checkpoint_dirty_; }
  void setCheckpointDirtyLocked(bool dirty) { checkpoint_dirty_ = dirty; }
  // The port of a pod's attachment, if it has one.
  std::optional<uint16_t> portOfLocked(const AttachmentId& id) const;
  // A port a module opens itself (the overlay's uplink): in the port table
  // at `port_no` (which pods never get), polled by PMD `pmd` only, sent to
  // by every PMD under `tx_lock` (which the module may share with its own
  // sends), labelled `label` in statistics. Not an attachment: not listed,
  // checkpointed or collected; it stays until removeModulePortLocked.
  absl::Status addModulePortLocked(uint16_t port_no, const std::string& label, uint16_t dpdk_port,
                                   rte_spinlock_t* tx_lock, unsigned pmd);
  void removeModulePortLocked(uint16_t port_no);
  // Every local port's routed prefixes (what a remote node's CIDRs and
  // published prefixes must not overlap).
  std::vector<Ipv4Cidr> routedPrefixesLocked() const;
  std::vector<Ipv6Cidr> routedPrefixes6Locked() const;

 private:
  struct PortEntry {
    PortRequest request;
    std::string socket_path;
    CreatedPort dpdk;
    unsigned pmd = 0;  // the PMD polling rx queue 0 (a module's port: its only one)
    // A pod port's: the PMD polling each rx queue, by queue id (once placed).
    std::vector<unsigned> queue_pmds;
    // A pod port's: one lock per tx queue (taken only by PMDs that share
    // the queue, see publishLocked).
    std::unique_ptr<rte_spinlock_t[]> tx_locks;
    // The tx queues the PMDs send on: 0..tx_usable-1, those the pod enabled
    // (PortBackend::enabledTxQueues) as last read.
    uint16_t tx_usable = 1;
    // While the PMDs change over to another tx_usable: every PMD takes its
    // queue's lock, whichever snapshot it runs (refreshTxQueuesLocked).
    bool tx_changing = false;
    RawPortRequest raw;  // as requested: what the checkpoint records
    std::string netns;   // watched netns path (empty: none)
    // A module's own port (see addModulePortLocked): its label, fixed PMD
    // and the module's tx lock. Empty label: a pod's port.
    std::string module_label;
    rte_spinlock_t* module_tx_lock = nullptr;
    bool placed = false;  // `queue_pmds` was decided (rxq_placement.h); a new port's is not yet
    // Placed while its NUMA socket was unknown (a vhost-user port before its
    // pod connected), not pinned: placed once more when the socket is known.
    bool socket_pending = false;
    // A pod port with a socket_subdir: that directory, held open; the
    // socket is reached only through it (pod_socket_dir.h).
    PodSocketDir socket_dir{};
    bool isPod() const { return module_label.empty(); }
  };
  // Raw counter sums over all PMDs; statistics report raw minus baseline.
  struct Totals {
    std::vector<PmdStatsView> pmds;
    // By port number, port_table_ of each.
    std::vector<PortStatsView> ports;
    std::vector<std::array<uint64_t, kMaxQueuesPerPort>> rx_queues;
    std::array<uint64_t, kDropReasonCount> drops{};
  };

  // Each PMD's rx queues: (port number, queue id) pairs.
  using PmdRxQueues = std::vector<std::vector<std::pair<uint16_t, uint16_t>>>;
  void publishLocked(const PmdRxQueues& rx_queues_per_pmd, const std::shared_ptr<const ForwardingTable>& fib);
  // Every port's rx queues on the PMDs they are assigned to now.
  PmdRxQueues assignedRxQueuesLocked() const;
  // Reads which tx queues each pod enabled (after the backend said that may
  // have changed) and moves the PMDs' tx onto them.
  void refreshTxQueuesLocked();
  // After the backend said pods' queues may have changed (a pod connected):
  // republishes if a port placed while its NUMA socket was unknown now has
  // one, so that placement moves its queues to that socket's PMDs.
  void placeAgainOnKnownSocketsLocked();
  std::optional<uint16_t> freePortNumberLocked() const;
  // The NUMA socket of a port (none: unknown, or no topology).
  std::optional<unsigned> portSocketLocked(const CreatedPort& port) const;
  // Starts a reused port number's counters from zero (for the new port).
  void zeroPortCountersLocked(uint16_t port_no);
  PortView viewLocked(uint16_t port_no);
  Totals readTotals() const;
  // Adds port `port_no`'s counters summed over the PMDs to `port` and
  // `rx_queues`, and sets its byte counts from the driver (a port in the table).
  void readPortTotals(uint16_t port_no, PortStatsView& port, std::array<uint64_t, kMaxQueuesPerPort>& rx_queues) const;
  void removePortLocked(uint16_t port_no);
  // Creates the DPDK port and the table entry for a validated request at a
  // free `port_no` on `socket_path` (empty for a vdev; a restored port keeps
  // its checkpointed one) (no republish, no checkpoint).
  absl::Status createPortLocked(uint16_t port_no, const PortRequest& req, const RawPortRequest& raw,
                                const std::string& netns, const std::string& socket_path);
  RouteTables routeTablesLocked() const;
  ControlModule* holderOfLocked(const AttachmentId& id) const;
  // FailedPrecondition when `req`'s routed prefixes overlap another port's
  // prefixes or addresses, or a module refuses them.
  absl::Status checkRoutedPrefixesLocked(const PortRequest& req) const;
  // The flow thread: installs upcalled megaflows every millisecond, expires
  // idle ones and ticks the modules, each as a change like any other.
  void flowThreadMain();

  const SluicedConfig config_;
  // How many entries every per-port table has (portTableSize of max-ports):
  // ports_, the snapshots' tables, the PMDs' batches and counters.
  const uint16_t port_table_;
  // The node's IPv6 pod network from config_ (pod-cidr-v6, gateway-v6): as
  // requests are checked against it, and as the fast path reads it.
  const std::optional<Ipv6PodCidr> v6_cidr_;
  const Ipv6PodNet v6_net_;
  PortBackend& backend_;
  const std::vector<PmdContext*> pmds_;
  const NumaTopology* const topology_;
  // Each PMD's NUMA socket (from its lcore); all 0 without a topology.
  const std::vector<unsigned> pmd_sockets_;
  struct PmdLoadSample {
    uint64_t busy = 0, total = 0;  // cycles
    double share = 0;              // busy / total over the window that ended here
  };
  std::vector<PmdLoadSample> pmd_load_;  // one per PMD, as measurePmdLoadsLocked last read
  const uint64_t tsc_hz_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  // The live settings now in force (applyLiveSettings; guarded by mu_, and
  // changed only within a change). The PMDs get theirs in every snapshot.
  uint32_t tx_flush_interval_us_;
  uint32_t flow_idle_timeout_ms_;
  PmdSettings pmd_settings_;

  std::mutex change_mu_;  // the writer lock (see Change)
  // The current change's table lock (guarded by change_mu_).
  std::unique_lock<std::mutex>* change_tables_lock_ = nullptr;
  std::mutex mu_;  // the table lock: every member below unless said otherwise

  std::vector<ControlModule*> modules_;  // registered before start(); changed only within a change
  std::vector<std::optional<PortEntry>> ports_;  // indexed by port number, port_table_ of them
  std::map<AttachmentId, uint16_t> by_attachment_;
  uint64_t version_ = 0;
  // What each PMD currently runs; kept alive here until replaced and
  // acknowledged (guarded by change_mu_: only changes read or replace it).
  std::vector<std::shared_ptr<const PmdSnapshot>> live_;
  bool started_ = false;
  Totals baseline_;
  // The forwarding table of the latest snapshot (what upcalls translate with).
  std::shared_ptr<const ForwardingTable> fib_ = std::make_shared<const ForwardingTable>();
  // The IPv6 /128 pod routes of the latest snapshot, likewise.
  std::shared_ptr<const Ipv6ForwardingTable> fib6_ = std::make_shared<const Ipv6ForwardingTable>();
  // Each port's MTU by port number (0: a module's port, unchecked), made with
  // fib_: translation copies the out port's into an output action.
  std::vector<uint16_t> port_mtus_;
  // Every port's allowed sources in the latest snapshot, likewise.
  std::shared_ptr<const SourceTable> sources_ = std::make_shared<const SourceTable>();
  // Every port's routed prefixes in the latest snapshot, likewise.
  std::shared_ptr<const RoutedPrefixTable> prefixes_ = std::make_shared<const RoutedPrefixTable>();
  FlowControl flows_;
  std::thread flow_thread_;
  std::condition_variable flow_cv_;
  bool flow_stop_ = false;
  std::chrono::steady_clock::time_point cleared_at_ = started_at_;

  // Checkpoint: the store (null: none), and the sections of modules that
  // are not registered, kept as loaded.
  CheckpointStore* checkpoint_ = nullptr;
  std::map<std::string, nlohmann::json> unclaimed_sections_;
  bool checkpoint_dirty_ = false;
  uint32_t restored_ports_ = 0;
  uint64_t gc_collected_ = 0;
  std::thread gc_thread_;
  std::condition_variable gc_cv_;
  bool gc_stop_ = false;
  std::chrono::milliseconds gc_interval_{0};  // 0: no periodic collection
  uint64_t gc_interval_changes_ = 0;          // wakes the collector to take a new interval
};

}  // namespace sluice
