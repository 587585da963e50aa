#include "dataplane/core/dataplane_control.h"

#include <absl/strings/str_cat.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "dataplane/core/crash_points.h"
#include "dataplane/core/port_files.h"
#include "dataplane/core/port_opener.h"
#include "dataplane/core/routed_prefix_policy.h"
#include "dataplane/core/rxq_placement.h"
#include "dataplane/core/vhost_socket_timeouts.h"
#include "dataplane/datapath/flow/flow_lookup.h"

namespace sluice {
namespace {

// How often the flow thread drains the PMDs' upcall queues: a new flow's
// packets are forwarded by inline translation until then.
constexpr auto kUpcallPollInterval = std::chrono::milliseconds(1);

// How long AddPort waits, before it takes the locks, for a just-deleted
// port's vhost-user socket on the same path to be let go (unregistered off
// the control path): at most one stalled message holds the library, for at
// most a socket timeout; beyond this the AddPort fails UNAVAILABLE (retry).
constexpr auto kSocketReleaseWait = 2 * kVhostUserSocketTimeout;

std::optional<Ipv6PodCidr> ipv6PodCidrOf(const SluicedConfig& c) {
  if (!c.pod_cidr_v6 || !c.gateway_v6) return std::nullopt;
  return Ipv6PodCidr{*c.pod_cidr_v6, *c.gateway_v6};
}

std::vector<unsigned> socketsOf(const std::vector<PmdContext*>& pmds, const NumaTopology* topology) {
  std::vector<unsigned> out(pmds.size(), 0);
  if (topology != nullptr)
    for (size_t p = 0; p < pmds.size(); ++p) out[p] = topology->lcoreSocket(pmds[p]->lcore);
  return out;
}

// A path that does not exist now cannot tell us later that the pod is gone
// (a runtime creates the netns before ADD); watching it would collect a live
// pod's port. Returns the path to watch (empty: none).
std::string watchedNetns(const std::string& netns, const AttachmentId& who) {
  if (struct stat st {}; !netns.empty() && ::stat(netns.c_str(), &st) != 0) {
    logWarning("netns ", netns, " of ", who.container_id, "/", who.ifname, ": ", std::strerror(errno),
               "; not watched for garbage collection");
    return {};
  }
  return netns;
}

}  // namespace

DataplaneControl::DataplaneControl(const SluicedConfig& config, PortBackend& backend,
                                   std::vector<PmdContext*> pmds, uint64_t tsc_hz, const NumaTopology* topology)
    : config_(config), v6_cidr_(ipv6PodCidrOf(config)), backend_(backend), pmds_(std::move(pmds)),
      topology_(topology), pmd_sockets_(socketsOf(pmds_, topology)), tsc_hz_(tsc_hz),
      tx_flush_interval_us_(config.tx_flush_interval_us), flow_idle_timeout_ms_(config.flow_idle_timeout_ms),
      pmd_settings_{0, config.emc_insert_inv_prob, config.smc_enable, config.upcall_rate, config.upcall_burst,
                    config.pmd_max_sleep_us, config.icmp_error_rate},
      ports_(portTableSize(config.max_ports), config.max_ports), forwarding_(config, ports_.size()),
      publisher_(pmds_), stats_(pmds_, pmd_sockets_, backend, ports_, tsc_hz, started_at_),
      flows_(pmds_, tsc_hz, config.flow_idle_timeout_ms, &flow::readTsc) {
  // Port numbers below the table's size index every PMD's counters and
  // batches: a context sized for fewer is a programming error caught here,
  // not an overrun on a PMD.
  for (const PmdContext* ctx : pmds_)
    if (ctx->portTableSize() < ports_.size()) {
      logError("PMD ", ctx->index, " has per-port tables for ", ctx->portTableSize(), " ports, max-ports needs ",
               ports_.size(), " (PmdContext::sizePortTables)");
      std::abort();
    }
}

DataplaneControl::~DataplaneControl() {
  stopGarbageCollector();
  stopFlowThread();
}

void DataplaneControl::registerModule(ControlModule* module) {
  Change change(*this);
  modules_.push_back(module);
}

void DataplaneControl::unregisterModuleLocked(ControlModule* module) { std::erase(modules_, module); }

void DataplaneControl::setFlowOffload(offload::FlowOffloadSink* sink) {
  Change change(*this);
  flows_.setOffload(sink);
}

void DataplaneControl::start() {
  Change change(*this);
  started_ = true;
  republishLocked();
  if (flows_.hasFlows()) flow_thread_.start(kUpcallPollInterval);
}

void DataplaneControl::stopFlowThread() { flow_thread_.stop(); }

void DataplaneControl::applyLiveSettings(const SluicedConfig& live) {
  Change change(*this);
  tx_flush_interval_us_ = live.tx_flush_interval_us;
  flow_idle_timeout_ms_ = live.flow_idle_timeout_ms;
  flows_.setIdleTimeout(live.flow_idle_timeout_ms);
  pmd_settings_ = {pmd_settings_.generation + 1, live.emc_insert_inv_prob, live.smc_enable, live.upcall_rate,
                   live.upcall_burst, live.pmd_max_sleep_us, live.icmp_error_rate};
  if (checkpoint_ != nullptr) checkpoint_->setFsync(live.checkpoint_fsync);
  gc_thread_.setInterval(std::chrono::milliseconds(live.gc_interval_ms));
  // The same tables under a new version, carrying the new settings.
  if (started_) quiesceLocked();
}

void DataplaneControl::applyQueueStateChanges() {
  Change change(*this);
  if (started_) takeQueueStateChange();
}

void DataplaneControl::takeQueueStateChange() {
  if (!backend_.takeQueueStateChange()) return;
  refreshTxQueues();
  placeAgainOnKnownSockets();
}

void DataplaneControl::placeAgainOnKnownSockets() {
  bool again = false;
  ports_.forEachPort([&](uint16_t, const PortEntry& e) { again |= e.socket_pending && portSocket(e.dpdk); });
  if (again) republishLocked();
}

void DataplaneControl::flowTick() {
  Change change(*this);
  if (flow_thread_.stopRequested()) return;
  // Module upkeep (e.g. neighbors: a changed next-hop MAC changes tunnel
  // templates; offload grace periods).
  bool changed = false;
  for (ControlModule* m : modules_) changed |= m->tick(std::chrono::steady_clock::now());
  if (changed) republishLocked();
  takeQueueStateChange();
  flows_.handleUpcalls(forwarding_.routeTables(modules_), &mu_);
  // Idle megaflows are looked for four times per timeout (so one expires
  // within 1.25 timeouts), at most once a second; the timeout is live.
  const auto expiry_period = std::chrono::milliseconds(std::clamp<uint32_t>(flow_idle_timeout_ms_ / 4, 1, 1000));
  if (auto now = std::chrono::steady_clock::now(); now - last_expiry_ >= expiry_period) {
    flows_.expireIdle();
    last_expiry_ = now;
  }
  flows_.commit(&mu_);
}

SnapshotInputs DataplaneControl::snapshotInputs() const {
  return SnapshotInputs{ports_, forwarding_, tsc_hz_ / 1'000'000 * tx_flush_interval_us_, pmd_settings_, modules_};
}

void DataplaneControl::quiesceLocked() {
  // The same snapshot content under a new version (every port on the PMD it
  // is assigned to): publish returns once every running PMD acknowledged it
  // at its quiescent point.
  publisher_.publish(snapshotInputs(), ports_.assignedRxQueues(pmds_.size()), mu_);
}

void DataplaneControl::republishLocked() {
  if (!started_) return;
  forwarding_.rebuild(ports_, modules_);
  // Megaflows the new tables do not support die now, before any PMD sees the
  // new tables (their packets meanwhile miss and are decided by the old ones).
  flows_.revalidate(forwarding_.routeTables(modules_));
  const PmdRxQueues target = planRxQueues(ports_, stats_.measurePmdLoads(), pmd_sockets_, topology_);
  // Readers see the assignment being made (they may look while PMDs
  // acknowledge).
  ports_.recordPlacement(target);
  publisher_.handOver(snapshotInputs(), target, mu_);
  // Classifiers without the stale megaflows; their slots are recycled.
  flows_.commit(&mu_);
}

void DataplaneControl::refreshTxQueues() {
  std::vector<std::pair<uint16_t, uint16_t>> changed;  // port number, its new tx_usable
  ports_.forEachPod([&](uint16_t n, const PortEntry& e) {
    const uint16_t usable = backend_.enabledTxQueues(e.dpdk);
    if (usable != e.tx_usable) changed.emplace_back(n, usable);
  });
  if (changed.empty()) return;
  for (const auto& [n, usable] : changed)
    logInfo("port ", n, ": the pod enabled ", usable, " of ", ports_.find(n)->dpdk.tx_queues, " tx queues");
  // A PMD still on the previous snapshot may send on a queue the next one
  // gives another PMD, and either may hold it without a lock: with several
  // PMDs, every one first locks its old queue, then its new one, and only
  // then do those that own theirs stop locking. One PMD shares with nobody.
  const bool several = pmds_.size() > 1;
  if (several) {
    for (const auto& [n, usable] : changed) ports_.find(n)->tx_changing = true;
    quiesceLocked();
  }
  for (const auto& [n, usable] : changed) ports_.find(n)->tx_usable = usable;
  if (several) {
    quiesceLocked();
    for (const auto& [n, usable] : changed) ports_.find(n)->tx_changing = false;
  }
  quiesceLocked();
}

FlowTranslation DataplaneControl::translate(const flow::FlowKey& key) {
  MutexLock lock(mu_);
  FlowTranslation out;
  translateFlow(forwarding_.routeTables(modules_), key, out);
  return out;
}

ControlModule* DataplaneControl::holderOf(const AttachmentId& id) const {
  for (ControlModule* m : modules_)
    if (m->holds(id)) return m;
  return nullptr;
}

absl::Status DataplaneControl::addModulePortLocked(uint16_t port_no, const std::string& label, uint16_t dpdk_port,
                                                   rte_spinlock_t* tx_lock, unsigned pmd) {
  if (port_no >= ports_.size() || ports_.find(port_no) != nullptr)
    return absl::AlreadyExistsError(absl::StrCat("port number ", port_no, " is not free for ", label));
  if (pmd >= pmds_.size()) return absl::InvalidArgumentError(absl::StrCat(label, ": no PMD ", pmd));
  PortEntry entry;
  entry.dpdk = CreatedPort{dpdk_port, label, 1};
  entry.pmd = pmd;
  entry.module_label = label;
  entry.module_tx_lock = tx_lock;
  entry.request.attachment = AttachmentId{label, label};
  ports_.insert(port_no, std::move(entry));
  stats_.zeroPort(ports_, port_no);
  for (ControlModule* m : modules_) m->portAdded(port_no, ports_.find(port_no)->request, dpdk_port);
  republishLocked();
  return absl::OkStatus();
}

void DataplaneControl::removeModulePortLocked(uint16_t port_no) {
  const PortEntry* e = ports_.find(port_no);
  if (e == nullptr || e->isPod()) return;
  (void)ports_.take(port_no);
  // Every PMD stops polling and sending to the port before its module closes it.
  republishLocked();
  for (ControlModule* m : modules_) m->portClosing(port_no);
}

std::vector<FlowView> DataplaneControl::listFlows() {
  MutexLock lock(mu_);
  return flows_.list();
}

std::optional<unsigned> DataplaneControl::portSocket(const CreatedPort& port) const {
  if (topology_ == nullptr) return std::nullopt;
  return topology_->portSocket(port);
}

absl::Status DataplaneControl::checkRoutedPrefixes(const PortRequest& req) const {
  if (req.routed_prefixes.empty() && req.routed_prefixes_v6.empty()) return absl::OkStatus();
  if (absl::Status s = checkRoutedPrefixPolicy(config_, req.routed_prefixes, req.routed_prefixes_v6); !s.ok())
    return s;
  if (absl::Status s = ports_.checkRoutedPrefixes(req); !s.ok()) return s;
  for (const ControlModule* m : modules_)
    if (absl::Status s = m->checkRoutedPrefixes(req.routed_prefixes, req.routed_prefixes_v6); !s.ok()) return s;
  return absl::OkStatus();
}

absl::StatusOr<AddPortResult> DataplaneControl::addPort(const RawPortRequest& raw, const std::string& netns) {
  absl::StatusOr<PortRequest> parsed = parsePortRequest(raw, config_.pod_cidr, config_.gateway,
                                                        vdevPolicyFor(config_.state_dir), v6_cidr_, config_.port_mtu);
  if (!parsed.ok()) return parsed.status();
  const PortRequest& req = *parsed;
  if (absl::Status s = checkPortAllowed(req, {config_.allow_vdev_ports, pmds_.size(), config_.max_queues_per_port});
      !s.ok())
    return s;
  if (absl::Status s = validateNetnsPath(netns); !s.ok()) return s;
  // A pod re-added right after its DEL (a runtime's retried ADD) names the
  // same socket, which the deleted port may still hold for a moment.
  if (req.kind == PortKind::kVhostUser) {
    if (auto path = vhostSocketPath(config_.socket_dir, req); path.ok())
      (void)backend_.waitSocketReleased(*path, kSocketReleaseWait);
  }

  Change change(*this);
  if (auto existing = existingAttachment(req)) return std::move(*existing);
  if (absl::Status s = ports_.findCollision(req); !s.ok()) return s;
  if (absl::Status s = checkRoutedPrefixes(req); !s.ok()) return s;
  std::optional<uint16_t> port_no = ports_.freePortNumber();
  if (!port_no)
    return absl::ResourceExhaustedError(absl::StrCat("port table full: all ", config_.max_ports, " ports are in use"));
  const std::string watched = watchedNetns(netns, req.attachment);
  // A vdev standing in for a pod (benchmarks, tests) has no socket.
  auto socket_path = req.kind == PortKind::kDpdkVdev ? absl::StatusOr<std::string>(std::string())
                                                      : vhostSocketPath(config_.socket_dir, req);
  if (!socket_path.ok()) return socket_path.status();
  if (absl::Status s = recordAndCreatePort(*port_no, req, raw, watched, *socket_path); !s.ok()) return s;
  logInfo("port ", *port_no, " added: ", req.attachment.container_id, "/", req.attachment.ifname, " ",
          req.hasIpv4() ? req.ip.toString() : "-", req.ipv6 ? " " + req.ipv6->toString() : "", " ",
          req.mac.toString(), " ", req.vhost_mode == VhostMode::kClient ? "client" : "server", " ",
          ports_.find(*port_no)->socket_path, watched.empty() ? "" : " netns ", watched);
  return AddPortResult{viewOf(*port_no), true};
}

std::optional<absl::StatusOr<AddPortResult>> DataplaneControl::existingAttachment(const PortRequest& req) {
  const AttachmentId& id = req.attachment;
  if (holderOf(id) != nullptr)
    return absl::AlreadyExistsError(
        absl::StrCat("attachment ", id.container_id, "/", id.ifname, " already holds an SR-IOV VF"));
  const std::optional<uint16_t> port_no = ports_.portOf(id);
  if (!port_no) return std::nullopt;
  if (!ports_.find(*port_no)->request.sameParameters(req))
    return absl::AlreadyExistsError(absl::StrCat("attachment ", id.container_id, "/", id.ifname,
                                                 " already exists with different parameters (port ", *port_no, ")"));
  if (checkpoint_dirty_) {
    if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
  }
  return AddPortResult{viewOf(*port_no), false};
}

absl::Status DataplaneControl::recordAndCreatePort(uint16_t port_no, const PortRequest& req,
                                                   const RawPortRequest& raw, const std::string& watched,
                                                   const std::string& socket_path) {
  // The promise is on disk before anything it names is made: sluiced killed
  // before the write leaves nothing, killed after it leaves a record the
  // restart makes whole (subdirectory, socket, DPDK port) and the CNI
  // plugin's retried ADD finds. A vdev is never checkpointed.
  if (req.kind != PortKind::kDpdkVdev) {
    crashPoint(CrashPoint::kAddPortBeforeCheckpoint);
    const CheckpointPort record{port_no, raw, socket_path, watched};
    const bool was_dirty = checkpoint_dirty_;
    if (absl::Status s = writeCheckpointLocked(&record); !s.ok()) {
      checkpoint_dirty_ = was_dirty;  // the file is as it was, and differs from memory only if it did
      return s;
    }
  }
  if (absl::Status s = createPort(port_no, req, raw, watched, socket_path); !s.ok()) {
    // Unrecorded again; should that write fail, the restart retries the port.
    (void)writeCheckpointLocked();
    return s;
  }
  crashPoint(CrashPoint::kAddPortAfterPortOpen);
  republishLocked();
  return absl::OkStatus();
}

absl::Status DataplaneControl::createPort(uint16_t port_no, const PortRequest& req, const RawPortRequest& raw,
                                          const std::string& netns, const std::string& socket_path) {
  // Never two ports on one socket: removing a stale socket would take a live
  // port's away.
  if (req.kind != PortKind::kDpdkVdev) {
    if (absl::Status s = ports_.findSocketCollision(socket_path); !s.ok()) return s;
  }
  absl::StatusOr<OpenedPort> opened = openPort(backend_, config_.socket_dir, port_no, req, socket_path);
  if (!opened.ok()) return opened.status();
  const CreatedPort& created = opened->dpdk;
  PortEntry entry{req, socket_path, created, 0, {}, nullptr, 1, false, raw, netns, {}, nullptr};
  entry.tx_locks = std::make_unique<rte_spinlock_t[]>(created.tx_queues);
  for (uint16_t q = 0; q < created.tx_queues; ++q) rte_spinlock_init(&entry.tx_locks[q]);
  entry.tx_usable = backend_.enabledTxQueues(created);
  entry.socket_dir = std::move(opened->socket_dir);
  ports_.insert(port_no, std::move(entry));
  stats_.zeroPort(ports_, port_no);
  const std::optional<uint16_t> ethdev =
      created.vhost != nullptr ? std::nullopt : std::optional<uint16_t>(created.dpdk_port);
  for (ControlModule* m : modules_) m->portAdded(port_no, req, ethdev);
  return absl::OkStatus();
}

size_t DataplaneControl::collectGarbage() {
  Change change(*this);
  size_t collected = 0;
  // Only pods' ports watch a netns.
  for (uint16_t n : ports_.podNumbers()) {
    const PortEntry& e = *ports_.find(n);
    if (!netnsVanished(e.netns)) continue;
    logInfo("port ", n, " garbage-collected: pod netns ", e.netns, " of ", e.request.attachment.container_id, "/",
            e.request.attachment.ifname, " no longer exists");
    // Counted before the port goes: readers may look while the removal
    // waits for the PMDs, and must not see the port gone but not counted.
    ++gc_collected_;
    ++collected;
    removePort(n);
  }
  size_t by_modules = 0;
  for (ControlModule* m : modules_) by_modules += m->collectGarbage();
  gc_collected_ += by_modules;
  collected += by_modules;
  if (collected > 0 || checkpoint_dirty_) (void)writeCheckpointLocked();
  return collected;
}

void DataplaneControl::startGarbageCollector(std::chrono::milliseconds interval) {
  // Runs even while the interval is 0 (off): gc-interval-ms is live, and a
  // new interval wakes it.
  gc_thread_.start(interval);
}

void DataplaneControl::stopGarbageCollector() { gc_thread_.stop(); }

absl::StatusOr<bool> DataplaneControl::deletePort(const AttachmentId& id) {
  if (absl::Status s = validateAttachment(id); !s.ok()) return s;
  Change change(*this);
  if (ControlModule* holder = holderOf(id); holder != nullptr) return holder->release(id);
  const std::optional<uint16_t> port_no = ports_.portOf(id);
  if (!port_no) {
    if (checkpoint_dirty_) {
      if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
    }
    return false;
  }
  removePort(*port_no);
  // The port is gone either way; a failed write is retried by the next
  // change (and a DEL retried by the runtime finds nothing and retries it).
  // Until then the file names a port that no longer exists, never the
  // reverse: a restart meanwhile brings it back whole, the retried DEL
  // removes it.
  if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
  return true;
}

void DataplaneControl::removePort(uint16_t port_no) {
  PortEntry entry = ports_.take(port_no);
  // Every PMD stops polling and sending to the port before it is closed.
  republishLocked();
  for (ControlModule* m : modules_) m->portClosing(port_no);  // e.g. its offload rules go before the port
  // Returns without waiting on the pod (a vhost-user socket is unregistered
  // on the backend's own thread): the locks held here are every API call's.
  backend_.destroy(entry.dpdk);
  removePortFiles(entry.socket_dir, entry.socket_path, entry.request.vhost_mode == VhostMode::kServer);
  logInfo("port ", port_no, " removed: ", entry.request.attachment.container_id, "/",
          entry.request.attachment.ifname);
}

void DataplaneControl::removeAllPorts() {
  Change change(*this);
  for (uint16_t n : ports_.podNumbers()) removePort(n);
}

std::vector<double> DataplaneControl::measurePmdLoadsLocked() { return stats_.measurePmdLoads(); }

PortView DataplaneControl::viewOf(uint16_t port_no) {
  const PortEntry& e = *ports_.find(port_no);
  return PortView{port_no, e.request, e.socket_path, e.dpdk.dpdk_name, e.pmd, backend_.linkUp(e.dpdk),
                  e.netns, e.queue_pmds, portSocket(e.dpdk)};
}

std::vector<PortView> DataplaneControl::listPorts() {
  MutexLock lock(mu_);
  std::vector<PortView> out;
  for (uint16_t n : ports_.podNumbers()) out.push_back(viewOf(n));
  return out;
}

StatsView DataplaneControl::stats() {
  MutexLock lock(mu_);
  StatsView v = stats_.view(ports_, flows_.counters());
  v.tx_flush_interval_us = tx_flush_interval_us_;
  return v;
}

void DataplaneControl::clearStats() {
  MutexLock lock(mu_);
  stats_.clear(ports_);
}

HealthView DataplaneControl::health() {
  MutexLock lock(mu_);
  HealthView h;
  bool all_running = true;
  for (const PmdContext* pmd : pmds_) all_running &= pmd->mailbox.running.load(std::memory_order_acquire);
  h.ready = started_ && all_running;
  h.uptime_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
  h.ports = static_cast<uint32_t>(ports_.podCount());
  h.max_ports = config_.max_ports;
  h.pmds = static_cast<uint32_t>(pmds_.size());
  h.pod_cidr = config_.pod_cidr;
  h.gateway = config_.gateway;
  h.gateway_mac = config_.gateway_mac;
  h.v6 = v6_cidr_;
  h.restored_ports = restored_ports_;
  h.garbage_collected = gc_collected_;
  for (const PmdContext* pmd : pmds_) {
    h.ipv4_fragmented += pmd->counters.ipv4_fragmented.read();
    h.ipv4_fragments += pmd->counters.ipv4_fragments.read();
  }
  return h;
}

}  // namespace sluice
