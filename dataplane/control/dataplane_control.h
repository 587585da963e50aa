// The control path's owner of every mutable table: ports, their numbers and
// PMD assignment, the forwarding table, and the statistics baselines. The gRPC
// service and sluicectl see the node only through these typed functions
// (STYLE §12). Thread-safe: API threads call in concurrently; one mutex
// serialises changes (control-path only; PMDs never take it).
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

#include "dataplane/control/checkpoint.h"
#include "dataplane/control/config.h"
#include "dataplane/control/flow_control.h"
#include "dataplane/control/offload/offload_manager.h"
#include "dataplane/control/pmd_stats.h"
#include "dataplane/control/port_backend.h"
#include "dataplane/control/port_request.h"
#include "dataplane/control/sriov/sriov_control.h"
#include "dataplane/control/vxlan/overlay_control.h"
#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/pmd_counters.h"
#include "dataplane/datapath/pmd_snapshot.h"

namespace sluice {

// What control needs to reach one PMD (owned by the daemon's main).
struct PmdHandle {
  unsigned lcore = 0;
  PmdMailbox* mailbox = nullptr;
  PmdCounters* counters = nullptr;
  // The PMD's flow caches' shared parts (null: no flow caches, as in unit
  // tests of the port table).
  flow::MegaflowTable* megaflows = nullptr;
  UpcallQueue* upcalls = nullptr;
};

struct PortView {
  uint16_t port_no = 0;
  PortRequest request;
  std::string socket_path;
  std::string dpdk_name;
  unsigned pmd = 0;
  bool link_up = false;
  std::string netns;  // watched for garbage collection; empty: not watched
  // SR-IOV VFs only (port_no 0, no socket, no PMD): the VF and its settings.
  std::optional<sriov::VfAttachment> vf = std::nullopt;
};

struct PortStatsView {
  uint16_t port_no = 0;
  AttachmentId attachment;
  uint64_t rx_packets = 0, tx_packets = 0, tx_dropped = 0, rx_dropped = 0;
};

struct StatsView {
  uint64_t tsc_hz = 0;
  std::vector<PmdStatsView> pmds;
  std::vector<PortStatsView> ports;
  std::array<uint64_t, kDropReasonCount> drops{};
  double seconds_since_clear = 0;
  uint32_t tx_flush_interval_us = 0;
  std::optional<offload::OffloadStatsView> offload;  // partial offload; empty when off
  std::vector<RemoteNodeView> tunnels;  // VXLAN overlay: per remote node (tunnel) counters
};

struct HealthView {
  bool ready = false;
  double uptime_seconds = 0;
  uint32_t ports = 0, max_ports = 0, pmds = 0;
  Ipv4Cidr pod_cidr;
  Ipv4Address gateway;
  MacAddress gateway_mac;
  uint32_t overlay_mtu = 0;  // largest inner IPv4 packet over the VXLAN overlay; 0: no overlay
  uint32_t restored_ports = 0;    // restored from the checkpoint at start
  uint64_t garbage_collected = 0; // attachments removed since start: pod netns vanished
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
  DataplaneControl(const SluicedConfig& config, PortBackend& backend, std::vector<PmdHandle> pmds,
                   uint64_t tsc_hz);
  ~DataplaneControl();
  DataplaneControl(const DataplaneControl&) = delete;
  DataplaneControl& operator=(const DataplaneControl&) = delete;

  // Publishes the first (empty) snapshot; call before launching the PMDs.
  void start();
  // `netns`: the pod's netns path (CNI_NETNS); watched for garbage
  // collection if it exists now. With a checkpoint store set, the new port
  // is on disk before this returns (else the port is undone, INTERNAL).
  absl::StatusOr<AddPortResult> addPort(const RawPortRequest& raw, const std::string& netns = {});
  // Returns whether a port was removed (false: unknown attachment, not an error).
  absl::StatusOr<bool> deletePort(const AttachmentId& id);
  std::vector<PortView> listPorts();
  // SR-IOV (sriov/dataplane_control_sriov.cc). With a SriovControl set
  // (before start(); null: no pools), addVf hands out a VF; VF attachments
  // share the attachment namespace with ports (an attachment is one or the
  // other), take no port number, are removed by deletePort and listed by
  // listPorts after the ports.
  void setSriov(sriov::SriovControl* sriov);
  // `netns`: the pod's netns path; the VF is collected once it is gone.
  absl::StatusOr<AddPortResult> addVf(const RawPortRequest& raw, const sriov::VfRequest& vf,
                                      const std::string& netns = {});
  std::vector<sriov::VfPool::Slot> listVfs();
  StatsView stats();
  void clearStats();
  HealthView health();
  // Removes every port (daemon shutdown): sockets closed and unlinked.
  void removeAllPorts();
  // Every megaflow of every PMD (`sluicectl flows`).
  std::vector<FlowView> listFlows();
  // Stops the flow thread (upcalls, expiry); before the PMDs stop.
  void stopFlowThread();
  // Partial offload (before start()): the configured offload port is attached
  // to it when added and detached when removed; megaflows go through it.
  void setOffload(offload::OffloadManager* offload);

  // The VXLAN overlay (before start(); vxlan/dataplane_control_overlay.cc):
  // its uplink is polled by PMD 0 and sent to by all, its tables published
  // in every snapshot and consulted by every translation. Without one, the
  // node calls fail with FAILED_PRECONDITION.
  void setOverlay(OverlayControl* overlay);
  absl::StatusOr<bool> addNode(const RemoteNodeConfig& node);
  absl::StatusOr<bool> deleteNode(const std::string& name);
  absl::StatusOr<std::vector<RemoteNodeView>> listNodes();
  std::optional<OverlayView> overlayView();
  uint32_t overlayMtu();

  // Checkpointing (checkpoint.h): with a store, every port change is written
  // to it before the call returns. Without one (unit tests), nothing is.
  // removeAllPorts (shutdown) never writes: the ports are to come back.
  void setCheckpointStore(CheckpointStore* store);
  // Re-creates checkpointed ports with their port numbers and sockets (call
  // once, before the API serves). A record that is invalid under the current
  // configuration, collides, or whose port DPDK refuses is logged and dropped;
  // one whose pod netns vanished is garbage-collected. The checkpoint is then
  // rewritten with what was restored (the "vfs" section kept as it was).
  RestoreSummary restore(const CheckpointState& state);
  // Removes every port whose watched netns path no longer exists; returns how
  // many. Run by the collector thread every `interval` (and callable directly).
  size_t collectGarbage();
  void startGarbageCollector(std::chrono::milliseconds interval);
  void stopGarbageCollector();

 private:
  struct PortEntry {
    PortRequest request;
    std::string socket_path;
    CreatedPort dpdk;
    unsigned pmd = 0;
    // Shared tx queue lock when there are more PMDs than tx queues.
    std::unique_ptr<rte_spinlock_t> tx_lock;
    RawPortRequest raw;  // as requested: what the checkpoint records
    std::string netns;   // watched netns path (empty: none)
  };
  // Raw counter sums over all PMDs; statistics report raw minus baseline.
  struct Totals {
    std::vector<PmdStatsView> pmds;
    std::array<PortStatsView, kMaxPorts> ports{};
    std::array<uint64_t, kDropReasonCount> drops{};
  };

  void republishLocked();
  // Partial offload: a grace period the offload thread asked for (freed
  // marks wait for every PMD to pass a quiescent point), from the flow thread.
  void serveOffloadGracePeriodLocked();
  void publishLocked(const std::vector<std::vector<uint16_t>>& rx_ports_per_pmd,
                     const std::shared_ptr<const ForwardingTable>& fib);
  std::optional<uint16_t> freePortNumberLocked() const;
  PortView viewLocked(uint16_t port_no);
  Totals readTotals() const;
  void removePortLocked(uint16_t port_no);
  // Creates the DPDK port and the table entry for a validated request at a
  // free `port_no` on `socket_path` (empty for a vdev; a restored port keeps
  // its checkpointed one) (no republish, no checkpoint).
  absl::Status createPortLocked(uint16_t port_no, const PortRequest& req, const RawPortRequest& raw,
                                const std::string& netns, const std::string& socket_path);
  // Writes the checkpoint (no-op without a store) with every port, plus
  // `pending` (a port about to be made); on failure the state is marked
  // dirty and the next change retries.
  absl::Status writeCheckpointLocked(const CheckpointPort* pending = nullptr);
  RouteTables routeTablesLocked() const {
    return {fib_.get(), config_.gateway.networkOrder(), overlay_ != nullptr ? overlay_->tables().get() : nullptr,
            overlay_ != nullptr ? overlay_->uplinkPort() : uint16_t{0}};
  }
  // The overlay's part of PMD p's snapshot and of the statistics.
  void fillOverlayLocked(PmdSnapshot& snap, size_t p) const;
  void overlayStatsLocked(StatsView& v, const Totals& now) const;
  // The flow thread: installs upcalled megaflows every millisecond and
  // expires idle ones, under mu_ like every other table change.
  void flowThreadMain();

  const SluicedConfig config_;
  PortBackend& backend_;
  const std::vector<PmdHandle> pmds_;
  const uint64_t tsc_hz_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();

  std::mutex mu_;
  std::array<std::optional<PortEntry>, kMaxPorts> ports_;  // indexed by port number
  std::map<AttachmentId, uint16_t> by_attachment_;
  sriov::SriovControl* sriov_ = nullptr;  // SR-IOV VF attachments (guarded by mu_); null: none
  void appendVfViewsLocked(std::vector<PortView>& out) const;
  // deletePort of a VF attachment: reset, back in the pool, checkpointed.
  absl::StatusOr<bool> deleteVfLocked(const AttachmentId& id);
  // restore(): the checkpoint's "vfs" records claim their VFs again.
  void restoreVfsLocked();
  // collectGarbage(): VF attachments whose watched netns vanished; how many.
  size_t collectVfGarbageLocked();
  uint64_t version_ = 0;
  // What each PMD currently runs; kept alive here until replaced and acknowledged.
  std::vector<std::shared_ptr<const PmdSnapshot>> live_;
  bool started_ = false;
  Totals baseline_;
  // The forwarding table of the latest snapshot (what upcalls translate with).
  std::shared_ptr<const ForwardingTable> fib_ = std::make_shared<const ForwardingTable>();
  FlowControl flows_;
  OverlayControl* overlay_ = nullptr;  // VXLAN overlay; null without an uplink
  std::thread flow_thread_;
  std::condition_variable flow_cv_;
  bool flow_stop_ = false;  // guarded by mu_
  std::chrono::steady_clock::time_point cleared_at_ = started_at_;
  offload::OffloadManager* offload_ = nullptr;  // not owned; null: offload off

  // Checkpoint (guarded by mu_). `checkpoint_vfs_` is the checkpoint's "vfs"
  // section: the SR-IOV VF pool keeps its allocation records there (JSON
  // objects of its own schema) and calls writeCheckpointLocked() after
  // changing them; restore() loads it back from the file.
  CheckpointStore* checkpoint_ = nullptr;
  nlohmann::json checkpoint_vfs_ = nlohmann::json::array();
  bool checkpoint_dirty_ = false;
  uint32_t restored_ports_ = 0;
  uint64_t gc_collected_ = 0;
  std::thread gc_thread_;
  std::condition_variable gc_cv_;
  bool gc_stop_ = false;  // guarded by mu_
};

}  // namespace sluice
