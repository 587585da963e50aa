#include "dataplane/core/dataplane_control.h"

#include <absl/strings/str_cat.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/cidr_overlap.h"
#include "common/log.h"
#include "common/socket_name.h"
#include "dataplane/core/crash_points.h"
#include "dataplane/core/rxq_placement.h"
#include "dataplane/core/routed_prefix_policy.h"
#include "dataplane/core/socket_owner.h"
#include "dataplane/core/vhost_socket_timeouts.h"
#include "dataplane/datapath/flow/flow_lookup.h"

namespace sluice {
namespace {

// How often control re-checks a PMD's acknowledgement. PMDs acknowledge at
// their next loop iteration (microseconds), so this bounds added latency of
// port changes, not correctness.
constexpr auto kAckPollInterval = std::chrono::microseconds(20);

// How often the flow thread drains the PMDs' upcall queues: a new flow's
// packets are forwarded by inline translation until then.
constexpr auto kUpcallPollInterval = std::chrono::milliseconds(1);

// How long AddPort waits, before it takes the locks, for a just-deleted
// port's vhost-user socket on the same path to be let go (unregistered off
// the control path): at most one stalled message holds the library, for at
// most a socket timeout; beyond this the AddPort fails UNAVAILABLE (retry).
constexpr auto kSocketReleaseWait = 2 * kVhostUserSocketTimeout;

rte_ether_addr toEther(const MacAddress& mac) {
  rte_ether_addr a;
  std::memcpy(a.addr_bytes, mac.bytes.data(), 6);
  return a;
}

std::optional<Ipv6PodCidr> ipv6PodCidrOf(const SluicedConfig& c) {
  if (!c.pod_cidr_v6 || !c.gateway_v6) return std::nullopt;
  return Ipv6PodCidr{*c.pod_cidr_v6, *c.gateway_v6};
}

// The fast path's view of the node's IPv6 network; the gateway's link-local
// address is the one its MAC gives (what a pod's neighbor discovery may ask for).
Ipv6PodNet ipv6PodNetOf(const SluicedConfig& c) {
  Ipv6PodNet net;
  if (!c.pod_cidr_v6 || !c.gateway_v6) return net;
  net.enabled = true;
  net.prefix_len = c.pod_cidr_v6->prefix_len;
  std::memcpy(net.net, c.pod_cidr_v6->network.bytes.data(), 16);
  std::memcpy(net.gateway, c.gateway_v6->bytes.data(), 16);
  std::memcpy(net.gateway_link_local, linkLocalFromMac(c.gateway_mac).bytes.data(), 16);
  net.router_lifetime_s = c.ipv6_router_lifetime_s;
  return net;
}

// What a pod's port may send with (source_check.h).
PortSources portSourcesOf(const PortRequest& pod) {
  PortSources s;
  s.checked = pod.source_validation;
  std::memcpy(s.mac, pod.mac.bytes.data(), 6);
  s.has_ipv4 = pod.hasIpv4();
  s.ipv4_be = pod.ip.networkOrder();
  s.has_ipv6 = pod.ipv6.has_value();
  if (pod.ipv6) std::memcpy(s.ipv6, pod.ipv6->bytes.data(), 16);
  std::memcpy(s.link_local, linkLocalFromMac(pod.mac).bytes.data(), 16);
  return s;
}

std::vector<unsigned> socketsOf(const std::vector<PmdContext*>& pmds, const NumaTopology* topology) {
  std::vector<unsigned> out(pmds.size(), 0);
  if (topology != nullptr)
    for (size_t p = 0; p < pmds.size(); ++p) out[p] = topology->lcoreSocket(pmds[p]->lcore);
  return out;
}

}  // namespace

DataplaneControl::DataplaneControl(const SluicedConfig& config, PortBackend& backend,
                                   std::vector<PmdContext*> pmds, uint64_t tsc_hz, const NumaTopology* topology)
    : config_(config), port_table_(portTableSize(config.max_ports)), v6_cidr_(ipv6PodCidrOf(config)),
      v6_net_(ipv6PodNetOf(config)),
      backend_(backend), pmds_(std::move(pmds)), topology_(topology), pmd_sockets_(socketsOf(pmds_, topology)),
      tsc_hz_(tsc_hz),
      tx_flush_interval_us_(config.tx_flush_interval_us), flow_idle_timeout_ms_(config.flow_idle_timeout_ms),
      pmd_settings_{0, config.emc_insert_inv_prob, config.smc_enable, config.upcall_rate, config.upcall_burst,
                    config.pmd_max_sleep_us, config.icmp_error_rate},
      ports_(port_table_), port_mtus_(port_table_),
      flows_(pmds_, tsc_hz, config.flow_idle_timeout_ms, &flow::readTsc) {
  // Port numbers below port_table_ index every PMD's counters and batches:
  // a context sized for fewer is a programming error caught here, not an
  // overrun on a PMD.
  for (const PmdContext* ctx : pmds_)
    if (ctx->portTableSize() < port_table_) {
      logError("PMD ", ctx->index, " has per-port tables for ", ctx->portTableSize(), " ports, max-ports needs ",
               port_table_, " (PmdContext::sizePortTables)");
      std::abort();
    }
  live_.resize(pmds_.size());
  baseline_ = readTotals();
}

DataplaneControl::~DataplaneControl() {
  stopGarbageCollector();
  stopFlowThread();
}

void DataplaneControl::registerModule(ControlModule* module) {
  Change change(*this);
  modules_.push_back(module);
}

void DataplaneControl::unregisterModuleLocked(ControlModule* module) {
  std::erase(modules_, module);
}

void DataplaneControl::setFlowOffload(offload::FlowOffloadSink* sink) {
  Change change(*this);
  flows_.setOffload(sink);
}

void DataplaneControl::start() {
  Change change(*this);
  started_ = true;
  republishLocked();
  if (flows_.hasFlows() && !flow_thread_.joinable()) flow_thread_ = std::thread([this] { flowThreadMain(); });
}

void DataplaneControl::stopFlowThread() {
  {
    std::lock_guard lock(mu_);
    flow_stop_ = true;
  }
  flow_cv_.notify_all();
  if (flow_thread_.joinable()) flow_thread_.join();
}

void DataplaneControl::applyLiveSettings(const SluicedConfig& live) {
  Change change(*this);
  tx_flush_interval_us_ = live.tx_flush_interval_us;
  flow_idle_timeout_ms_ = live.flow_idle_timeout_ms;
  flows_.setIdleTimeout(live.flow_idle_timeout_ms);
  pmd_settings_ = {pmd_settings_.generation + 1, live.emc_insert_inv_prob, live.smc_enable, live.upcall_rate,
                   live.upcall_burst, live.pmd_max_sleep_us, live.icmp_error_rate};
  if (checkpoint_ != nullptr) checkpoint_->setFsync(live.checkpoint_fsync);
  if (gc_interval_ != std::chrono::milliseconds(live.gc_interval_ms)) {
    gc_interval_ = std::chrono::milliseconds(live.gc_interval_ms);
    ++gc_interval_changes_;
    gc_cv_.notify_all();
  }
  // The same tables under a new version, carrying the new settings.
  if (started_) quiesceLocked();
}

void DataplaneControl::applyQueueStateChanges() {
  Change change(*this);
  if (started_ && backend_.takeQueueStateChange()) {
    refreshTxQueuesLocked();
    placeAgainOnKnownSocketsLocked();
  }
}

void DataplaneControl::placeAgainOnKnownSocketsLocked() {
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (ports_[n] && ports_[n]->socket_pending && portSocketLocked(ports_[n]->dpdk)) {
      republishLocked();
      return;
    }
  }
}

void DataplaneControl::flowThreadMain() {
  auto last_expiry = std::chrono::steady_clock::now();
  for (;;) {
    {
      // Upcalls wait at most this long (their packets are forwarded meanwhile).
      std::unique_lock lock(mu_);
      if (flow_cv_.wait_for(lock, kUpcallPollInterval, [this] { return flow_stop_; })) break;
    }
    Change change(*this);
    if (flow_stop_) break;
    // Module upkeep (e.g. neighbors: a changed next-hop MAC changes tunnel
    // templates; offload grace periods).
    bool changed = false;
    for (ControlModule* m : modules_) changed |= m->tick(std::chrono::steady_clock::now());
    if (changed) republishLocked();
    if (backend_.takeQueueStateChange()) {
      refreshTxQueuesLocked();
      placeAgainOnKnownSocketsLocked();
    }
    flows_.handleUpcalls(routeTablesLocked(), change_tables_lock_);
    // Idle megaflows are looked for four times per timeout (so one expires
    // within 1.25 timeouts), at most once a second; the timeout is live.
    const auto expiry_period =
        std::chrono::milliseconds(std::clamp<uint32_t>(flow_idle_timeout_ms_ / 4, 1, 1000));
    if (auto now = std::chrono::steady_clock::now(); now - last_expiry >= expiry_period) {
      flows_.expireIdle();
      last_expiry = now;
    }
    flows_.commit(change_tables_lock_);
  }
}

void DataplaneControl::quiesceLocked() {
  // The same snapshot content under a new version (every port on the PMD it
  // is assigned to): publishLocked returns once every running PMD
  // acknowledged it at its quiescent point.
  publishLocked(assignedRxQueuesLocked(), fib_);
}

void DataplaneControl::refreshTxQueuesLocked() {
  std::vector<std::pair<uint16_t, uint16_t>> changed;  // port number, its new tx_usable
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (!ports_[n] || !ports_[n]->isPod()) continue;
    const uint16_t usable = backend_.enabledTxQueues(ports_[n]->dpdk);
    if (usable != ports_[n]->tx_usable) changed.emplace_back(n, usable);
  }
  if (changed.empty()) return;
  for (const auto& [n, usable] : changed)
    logInfo("port ", n, ": the pod enabled ", usable, " of ", ports_[n]->dpdk.tx_queues, " tx queues");
  // A PMD still on the previous snapshot may send on a queue the next one
  // gives another PMD, and either may hold it without a lock: with several
  // PMDs, every one first locks its old queue, then its new one, and only
  // then do those that own theirs stop locking. One PMD shares with nobody.
  const bool several = pmds_.size() > 1;
  if (several) {
    for (const auto& [n, usable] : changed) ports_[n]->tx_changing = true;
    quiesceLocked();
  }
  for (const auto& [n, usable] : changed) ports_[n]->tx_usable = usable;
  if (several) {
    quiesceLocked();
    for (const auto& [n, usable] : changed) ports_[n]->tx_changing = false;
  }
  quiesceLocked();
}

DataplaneControl::PmdRxQueues DataplaneControl::assignedRxQueuesLocked() const {
  PmdRxQueues rx(pmds_.size());
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (!ports_[n]) continue;
    if (!ports_[n]->isPod()) {
      rx[ports_[n]->pmd].push_back({n, 0});
      continue;
    }
    // A pod port not placed yet is polled by nobody until republishLocked places it.
    for (uint16_t q = 0; q < ports_[n]->queue_pmds.size(); ++q) rx[ports_[n]->queue_pmds[q]].push_back({n, q});
  }
  return rx;
}

RouteTables DataplaneControl::routeTablesLocked() const {
  // The overlay's fields are the overlay module's to fill.
  RouteTables tables{.fib = fib_.get(),
                     .gateway_ip_be = config_.gateway.networkOrder(),
                     .fib6 = fib6_.get(),
                     .v6 = &v6_net_,
                     .port_mtus = port_mtus_.data(),
                     .pod_net_be = config_.pod_cidr.network.networkOrder(),
                     .pod_mask_be = Ipv4Address{config_.pod_cidr.mask()}.networkOrder(),
                     .sources = sources_.get(),
                     .prefixes = prefixes_.get()};
  for (const ControlModule* m : modules_) m->fillRouteTables(tables);
  return tables;
}

FlowTranslation DataplaneControl::translate(const flow::FlowKey& key) {
  std::lock_guard lock(mu_);
  FlowTranslation out;
  translateFlow(routeTablesLocked(), key, out);
  return out;
}

ControlModule* DataplaneControl::holderOfLocked(const AttachmentId& id) const {
  for (ControlModule* m : modules_)
    if (m->holds(id)) return m;
  return nullptr;
}

std::optional<uint16_t> DataplaneControl::portOfLocked(const AttachmentId& id) const {
  auto it = by_attachment_.find(id);
  if (it == by_attachment_.end()) return std::nullopt;
  return it->second;
}

absl::Status DataplaneControl::addModulePortLocked(uint16_t port_no, const std::string& label, uint16_t dpdk_port,
                                                   rte_spinlock_t* tx_lock, unsigned pmd) {
  if (port_no >= port_table_ || ports_[port_no])
    return absl::AlreadyExistsError(absl::StrCat("port number ", port_no, " is not free for ", label));
  if (pmd >= pmds_.size()) return absl::InvalidArgumentError(absl::StrCat(label, ": no PMD ", pmd));
  PortEntry entry;
  entry.dpdk = CreatedPort{dpdk_port, label, 1};
  entry.pmd = pmd;
  entry.module_label = label;
  entry.module_tx_lock = tx_lock;
  entry.request.attachment = AttachmentId{label, label};
  ports_[port_no] = std::move(entry);
  zeroPortCountersLocked(port_no);
  for (ControlModule* m : modules_) m->portAdded(port_no, ports_[port_no]->request, dpdk_port);
  republishLocked();
  return absl::OkStatus();
}

void DataplaneControl::removeModulePortLocked(uint16_t port_no) {
  if (port_no >= port_table_ || !ports_[port_no] || ports_[port_no]->isPod()) return;
  ports_[port_no].reset();
  // Every PMD stops polling and sending to the port before its module closes it.
  republishLocked();
  for (ControlModule* m : modules_) m->portClosing(port_no);
}

std::vector<FlowView> DataplaneControl::listFlows() {
  std::lock_guard lock(mu_);
  return flows_.list();
}

void DataplaneControl::zeroPortCountersLocked(uint16_t port_no) {
  // This port's counters only: reading every port's (and every connected
  // pod's byte counts from its driver) would make each AddPort cost the
  // whole table.
  baseline_.ports[port_no] = {};
  baseline_.rx_queues[port_no] = {};
  readPortTotals(port_no, baseline_.ports[port_no], baseline_.rx_queues[port_no]);
}

std::optional<unsigned> DataplaneControl::portSocketLocked(const CreatedPort& port) const {
  if (topology_ == nullptr) return std::nullopt;
  return topology_->portSocket(port);
}

std::optional<uint16_t> DataplaneControl::freePortNumberLocked() const {
  // Lowest free number: keeps numbers small and dense, and reuses them.
  for (uint16_t n = 0; n < config_.max_ports; ++n)
    if (!ports_[n]) return n;
  return std::nullopt;
}

absl::Status DataplaneControl::checkRoutedPrefixesLocked(const PortRequest& req) const {
  if (req.routed_prefixes.empty() && req.routed_prefixes_v6.empty()) return absl::OkStatus();
  if (absl::Status s = checkRoutedPrefixPolicy(config_, req.routed_prefixes, req.routed_prefixes_v6); !s.ok())
    return s;
  auto refused = [](const std::string& prefix, const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", prefix, " ", why));
  };
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (!ports_[n] || !ports_[n]->isPod() ) continue;
    const PortRequest& other = ports_[n]->request;
    for (const Ipv4Cidr& c : req.routed_prefixes) {
      if (other.hasIpv4() && c.contains(other.ip))
        return refused(c.toString(), absl::StrCat("holds port ", n, "'s address ", other.ip.toString()));
      for (const Ipv4Cidr& o : other.routed_prefixes)
        if (cidrsOverlap(c, o))
          return refused(c.toString(), absl::StrCat("overlaps ", o.toString(), ", routed to port ", n));
    }
    for (const Ipv6Cidr& c : req.routed_prefixes_v6) {
      if (other.ipv6 && c.contains(*other.ipv6))
        return refused(c.toString(), absl::StrCat("holds port ", n, "'s address ", other.ipv6->toString()));
      for (const Ipv6Cidr& o : other.routed_prefixes_v6)
        if (cidrsOverlap(c, o))
          return refused(c.toString(), absl::StrCat("overlaps ", o.toString(), ", routed to port ", n));
    }
  }
  for (const ControlModule* m : modules_)
    if (absl::Status s = m->checkRoutedPrefixes(req.routed_prefixes, req.routed_prefixes_v6); !s.ok()) return s;
  return absl::OkStatus();
}

std::vector<Ipv4Cidr> DataplaneControl::routedPrefixesLocked() const {
  std::vector<Ipv4Cidr> out;
  for (const auto& p : ports_)
    if (p && p->isPod()) out.insert(out.end(), p->request.routed_prefixes.begin(), p->request.routed_prefixes.end());
  return out;
}

std::vector<Ipv6Cidr> DataplaneControl::routedPrefixes6Locked() const {
  std::vector<Ipv6Cidr> out;
  for (const auto& p : ports_)
    if (p && p->isPod())
      out.insert(out.end(), p->request.routed_prefixes_v6.begin(), p->request.routed_prefixes_v6.end());
  return out;
}

absl::StatusOr<AddPortResult> DataplaneControl::addPort(const RawPortRequest& raw, const std::string& netns) {
  auto parsed =
      parsePortRequest(raw, config_.pod_cidr, config_.gateway, vdevPolicyFor(config_.state_dir), v6_cidr_,
                       config_.port_mtu);
  if (!parsed.ok()) return parsed.status();
  const PortRequest& req = *parsed;
  if (req.kind == PortKind::kSriovVf)
    return absl::UnimplementedError("type: SR-IOV VF ports are not supported by this sluiced yet");
  if (req.kind == PortKind::kDpdkVdev && !config_.allow_vdev_ports)
    return absl::FailedPreconditionError("type: DPDK vdev ports need sluiced's allow-vdev-ports (benchmarks, tests)");
  if (req.pmd && *req.pmd >= pmds_.size())
    return absl::InvalidArgumentError(absl::StrCat("pmd: there is no PMD ", *req.pmd, " (this sluiced runs ",
                                                   pmds_.size(), ", 0..", pmds_.size() - 1, ")"));
  if (req.queues > config_.max_queues_per_port)
    return absl::InvalidArgumentError(absl::StrCat("queues: ", req.queues, " is more than this node allows (",
                                                   "max-queues-per-port ", config_.max_queues_per_port, ")"));
  // Only ever stat()ed, never opened: an absolute path is all it must be.
  if (!netns.empty() && (netns[0] != '/' || netns.size() >= 4096 || netns.find('\0') != std::string::npos))
    return absl::InvalidArgumentError("netns: must be an absolute path");
  // A pod re-added right after its DEL (a runtime's retried ADD) names the
  // same socket, which the deleted port may still hold for a moment.
  if (req.kind == PortKind::kVhostUser) {
    if (auto path = vhostSocketPath(config_.socket_dir, req); path.ok())
      (void)backend_.waitSocketReleased(*path, kSocketReleaseWait);
  }

  Change change(*this);
  if (holderOfLocked(req.attachment) != nullptr)
    return absl::AlreadyExistsError(absl::StrCat("attachment ", req.attachment.container_id, "/",
                                                 req.attachment.ifname, " already holds an SR-IOV VF"));
  if (auto it = by_attachment_.find(req.attachment); it != by_attachment_.end()) {
    if (ports_[it->second]->request.sameParameters(req)) {
      if (checkpoint_dirty_) {
        if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
      }
      return AddPortResult{viewLocked(it->second), false};
    }
    return absl::AlreadyExistsError(
        absl::StrCat("attachment ", req.attachment.container_id, "/", req.attachment.ifname,
                     " already exists with different parameters (port ", it->second, ")"));
  }
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (!ports_[n] || !ports_[n]->isPod()) continue;
    if (req.hasIpv4() && ports_[n]->request.ip == req.ip)
      return absl::AlreadyExistsError(absl::StrCat("ip: ", req.ip.toString(), " belongs to port ", n));
    if (req.ipv6 && ports_[n]->request.ipv6 == req.ipv6)
      return absl::AlreadyExistsError(absl::StrCat("ipv6: ", req.ipv6->toString(), " belongs to port ", n));
    if (ports_[n]->request.mac == req.mac)
      return absl::AlreadyExistsError(absl::StrCat("mac: ", req.mac.toString(), " belongs to port ", n));
  }
  if (absl::Status s = checkRoutedPrefixesLocked(req); !s.ok()) return s;
  std::optional<uint16_t> port_no = freePortNumberLocked();
  if (!port_no)
    return absl::ResourceExhaustedError(
        absl::StrCat("port table full: all ", config_.max_ports, " ports are in use"));

  // A path that does not exist now cannot tell us later that the pod is gone
  // (a runtime creates the netns before ADD); watching it would collect a
  // live pod's port.
  std::string watched = netns;
  if (struct stat st {}; !watched.empty() && ::stat(watched.c_str(), &st) != 0) {
    logWarning("netns ", watched, " of ", req.attachment.container_id, "/", req.attachment.ifname, ": ",
               std::strerror(errno), "; not watched for garbage collection");
    watched.clear();
  }
  // A vdev standing in for a pod (benchmarks, tests) has no socket.
  auto socket_path = req.kind == PortKind::kDpdkVdev ? absl::StatusOr<std::string>(std::string())
                                                      : vhostSocketPath(config_.socket_dir, req);
  if (!socket_path.ok()) return socket_path.status();
  // The promise is on disk before anything it names is made: sluiced killed
  // before the write leaves nothing, killed after it leaves a record the
  // restart makes whole (subdirectory, socket, DPDK port) and the CNI
  // plugin's retried ADD finds. A vdev is never checkpointed.
  if (req.kind != PortKind::kDpdkVdev) {
    crashPoint(CrashPoint::kAddPortBeforeCheckpoint);
    const CheckpointPort record{*port_no, raw, *socket_path, watched};
    const bool was_dirty = checkpoint_dirty_;
    if (absl::Status s = writeCheckpointLocked(&record); !s.ok()) {
      checkpoint_dirty_ = was_dirty;  // the file is as it was, and differs from memory only if it did
      return s;
    }
  }
  if (absl::Status s = createPortLocked(*port_no, req, raw, watched, *socket_path); !s.ok()) {
    // Unrecorded again; should that write fail, the restart retries the port.
    (void)writeCheckpointLocked();
    return s;
  }
  crashPoint(CrashPoint::kAddPortAfterPortOpen);
  republishLocked();
  const PortEntry& e = *ports_[*port_no];
  logInfo("port ", *port_no, " added: ", req.attachment.container_id, "/", req.attachment.ifname, " ",
          req.hasIpv4() ? req.ip.toString() : "-", req.ipv6 ? " " + req.ipv6->toString() : "", " ",
          req.mac.toString(), " ", req.vhost_mode == VhostMode::kClient ? "client" : "server",
          " ", e.socket_path, watched.empty() ? "" : " netns ", watched);
  return AddPortResult{viewLocked(*port_no), true};
}

absl::Status DataplaneControl::createPortLocked(uint16_t port_no, const PortRequest& req, const RawPortRequest& raw,
                                                const std::string& netns, const std::string& socket_path) {
  const bool vdev = req.kind == PortKind::kDpdkVdev;
  // Never two ports on one socket: the unlink below would take a live
  // port's socket away.
  for (uint16_t n = 0; n < port_table_ && !vdev; ++n)
    if (ports_[n] && ports_[n]->isPod() && ports_[n]->socket_path == socket_path)
      return absl::AlreadyExistsError(absl::StrCat("socket ", socket_path, " belongs to port ", n));
  // A pod directory is reached only through a descriptor (a pod that
  // mounts the socket dir may have swapped it for a symlink), and DPDK is
  // given the socket's path through that descriptor.
  PodSocketDir pod_dir;
  std::string open_path = socket_path;  // the path the backend binds or connects to
  const std::string socket_file = socket_path.substr(socket_path.rfind('/') + 1);
  if (!req.socket_subdir.empty() && !vdev) {
    const bool pod_volume_link =
        req.socket_subdir == podSocketLinkName(req.attachment.container_id, req.attachment.ifname);
    absl::StatusOr<PodSocketDir> opened =
        PodSocketDir::open(config_.socket_dir, req.socket_subdir, pod_volume_link, PodSocketDir::Create::kIfMissing);
    if (!opened.ok()) return opened.status();
    pod_dir = std::move(*opened);
    open_path = pod_dir.pathOf(socket_file);
  }
  // Removes the directory again if this call made it.
  auto undoSubdir = [&pod_dir] {
    if (pod_dir.made()) pod_dir.closeAndRemoveIfEmpty();
  };
  bool client = req.vhost_mode == VhostMode::kClient;
  // A server socket left by a sluiced that died would make bind() fail; the
  // path is ours (validated to lie in the socket directory), and in a pod
  // directory only a socket is removed, through its descriptor.
  if (!client && !vdev) {
    if (pod_dir.isOpen()) {
      pod_dir.removeSocket(socket_file);
    } else {
      ::unlink(socket_path.c_str());
    }
  }
  crashPoint(CrashPoint::kAddPortBeforePortOpen);
  auto created = vdev ? backend_.createVdev(port_no, req.devargs)
                      : backend_.createVhostUser(port_no, open_path, client, static_cast<uint16_t>(req.queues));
  if (!created.ok()) {
    undoSubdir();
    return created.status();
  }
  // The socket was made just now, as root: the group the request named gets
  // it again every time (AddPort and restore alike), so that a non-root pod
  // can connect after sluiced restarted as before.
  if (!client && !vdev && req.socket_group) {
    if (absl::Status s = setSocketGroupAndMode(open_path, *req.socket_group, 0660); !s.ok()) {
      backend_.destroy(*created);
      undoSubdir();
      return absl::Status(s.code(), absl::StrCat("socket_group: ", s.message()));
    }
  }

  // The driver enforces the MTU too where it can (a NIC's ethdev); the fast
  // path enforces it on every packet routed to the port either way.
  // A vhost-user port cannot: it has no MTU operation, and vhost-user passes the
  // MTU from the front-end (the pod) to sluiced, never the other way.
  if (absl::Status s = backend_.setMtu(*created, req.mtu); !s.ok()) {
    if (absl::IsUnimplemented(s)) {
      logDebug("port ", port_no, ": ", s.message(), "; MTU ", req.mtu, " is enforced by the fast path alone");
    } else {
      logWarning("port ", port_no, ": ", s.message(), "; MTU ", req.mtu, " is enforced by the fast path alone");
    }
  }

  PortEntry entry{req, socket_path, *created, 0, {}, nullptr, 1, false, raw, netns, {}, nullptr};
  entry.tx_locks = std::make_unique<rte_spinlock_t[]>(created->tx_queues);
  for (uint16_t q = 0; q < created->tx_queues; ++q) rte_spinlock_init(&entry.tx_locks[q]);
  entry.tx_usable = backend_.enabledTxQueues(*created);
  entry.socket_dir = std::move(pod_dir);
  ports_[port_no] = std::move(entry);
  by_attachment_[req.attachment] = port_no;
  zeroPortCountersLocked(port_no);
  const std::optional<uint16_t> ethdev =
      created->vhost != nullptr ? std::nullopt : std::optional<uint16_t>(created->dpdk_port);
  for (ControlModule* m : modules_) m->portAdded(port_no, req, ethdev);
  return absl::OkStatus();
}

absl::Status DataplaneControl::writeCheckpointLocked(const CheckpointPort* pending) {
  if (checkpoint_ == nullptr) return absl::OkStatus();
  CheckpointState state;
  for (uint16_t n = 0; n < port_table_; ++n) {
    // A vdev port stands in for a pod in benchmarks and tests (a pcap file,
    // net_null): nothing outside sluiced holds it, so nothing to restore.
    if (!ports_[n] || !ports_[n]->isPod() || ports_[n]->request.kind == PortKind::kDpdkVdev) continue;
    const PortEntry& e = *ports_[n];
    state.ports.push_back({n, e.raw, e.socket_path, e.netns});
  }
  if (pending != nullptr) state.ports.push_back(*pending);
  state.sections = unclaimed_sections_;
  for (const ControlModule* m : modules_)
    if (!m->checkpointSection().empty()) state.sections[std::string(m->checkpointSection())] = m->checkpointRecords();
  absl::Status s = checkpoint_->save(state);
  checkpoint_dirty_ = !s.ok();
  // Too large to be read back at the next start: the caller's change is what
  // must not happen (RESOURCE_EXHAUSTED), the directory is fine.
  if (absl::IsResourceExhausted(s)) {
    logError(s.message());
    return s;
  }
  if (!s.ok()) {
    const std::string why = absl::StrCat("state directory ", checkpoint_->dir(), " cannot be written: ", s.message());
    logError(why);
    return absl::InternalError(why);
  }
  return absl::OkStatus();
}

void DataplaneControl::setCheckpointStore(CheckpointStore* store) {
  Change change(*this);
  checkpoint_ = store;
}

RestoreSummary DataplaneControl::restore(const CheckpointState& state) {
  Change change(*this);
  RestoreSummary summary;
  // Each module takes its section back; the others' are kept as they were
  // (a later sluiced with that module configured again takes them back).
  unclaimed_sections_ = state.sections;
  for (ControlModule* m : modules_) {
    const std::string section(m->checkpointSection());
    if (section.empty()) continue;
    auto it = unclaimed_sections_.find(section);
    m->restore(it != unclaimed_sections_.end() ? it->second : nlohmann::json::array());
    if (it != unclaimed_sections_.end()) unclaimed_sections_.erase(it);
  }
  // A port checkpointed at a number a module's own port has now (the
  // overlay's uplink, configured since) must not come back there: the PMD
  // would take the pod's traffic for the underlay's and the pod's output
  // would leave unencapsulated onto it. Such ports come back last, at the
  // lowest number left free (a pod knows its socket, never its port number).
  auto held_by_module = [this](uint16_t n) { return n < port_table_ && ports_[n] && !ports_[n]->isPod(); };
  std::vector<const CheckpointPort*> in_order;
  for (const CheckpointPort& rec : state.ports)
    if (!held_by_module(rec.port_no)) in_order.push_back(&rec);
  for (const CheckpointPort& rec : state.ports)
    if (held_by_module(rec.port_no)) in_order.push_back(&rec);
  for (const CheckpointPort* saved : in_order) {
    CheckpointPort rec = *saved;
    if (held_by_module(rec.port_no)) {
      const std::optional<uint16_t> free = freePortNumberLocked();
      logWarning("checkpointed port ", rec.port_no, " (", rec.request.container_id, "/", rec.request.ifname,
                 ") has the ", ports_[rec.port_no]->module_label, "'s number now; ",
                 free ? absl::StrCat("restored as port ", *free) : std::string("no other number is free"));
      if (!free) {
        ++summary.dropped;
        continue;
      }
      rec.port_no = *free;
    }
    const std::string who = absl::StrCat("checkpointed port ", rec.port_no, " (", rec.request.container_id, "/",
                                         rec.request.ifname, ")");
    auto drop = [&](const std::string& why) {
      logError(who, " not restored: ", why);
      ++summary.dropped;
    };
    auto req = parsePortRequest(rec.request, config_.pod_cidr, config_.gateway, {}, v6_cidr_, config_.port_mtu);
    if (!req.ok()) {
      drop(std::string(req.status().message()));
      continue;
    }
    // Restarted with fewer PMDs: the port comes back, placed by sluiced.
    if (req->pmd && *req->pmd >= pmds_.size()) {
      logWarning(who, ": pinned to PMD ", *req->pmd, ", which this sluiced does not run; placed instead");
      req->pmd.reset();
    }
    // Restarted with a lower max-queues-per-port: the port comes back with
    // as many queues as the node now allows.
    if (req->queues > config_.max_queues_per_port) {
      logWarning(who, ": ", req->queues, " queues, more than max-queues-per-port ", config_.max_queues_per_port,
                 "; opened with ", config_.max_queues_per_port);
      req->queues = config_.max_queues_per_port;
    }
    if (req->kind != PortKind::kVhostUser) {
      drop("not a vhost-user port");
      continue;
    }
    if (rec.port_no >= config_.max_ports) {
      drop(absl::StrCat("port number beyond max-ports ", config_.max_ports));
      continue;
    }
    if (ports_[rec.port_no]) {
      drop("port number taken twice in the checkpoint");
      continue;
    }
    bool collides = by_attachment_.contains(req->attachment);
    for (uint16_t n = 0; n < port_table_; ++n)
      collides |= ports_[n] && ports_[n]->isPod() &&
                  ((req->hasIpv4() && ports_[n]->request.ip == req->ip) ||
                   (req->ipv6 && ports_[n]->request.ipv6 == req->ipv6) || ports_[n]->request.mac == req->mac);
    if (collides) {
      drop("its attachment, IP, IPv6 or MAC is already restored for another port");
      continue;
    }
    if (absl::Status s = checkRoutedPrefixesLocked(*req); !s.ok()) {
      drop(std::string(s.message()));
      continue;
    }
    if (!vhostSocketPathMatches(config_.socket_dir, *req, rec.socket_path)) {
      drop(absl::StrCat("its socket ", rec.socket_path, " is not where socket-dir ", config_.socket_dir,
                        " puts it now"));
      continue;
    }
    if (struct stat st {}; !rec.netns.empty() && ::stat(rec.netns.c_str(), &st) != 0 && errno == ENOENT) {
      // The pod went away while we were down: nothing to restore.
      logInfo(who, " garbage-collected: pod netns ", rec.netns, " no longer exists");
      const bool server = req->vhost_mode == VhostMode::kServer;
      if (req->socket_subdir.empty()) {
        if (server) ::unlink(rec.socket_path.c_str());
      } else if (absl::StatusOr<PodSocketDir> dir = PodSocketDir::open(
                     config_.socket_dir, req->socket_subdir,
                     req->socket_subdir == podSocketLinkName(req->attachment.container_id, req->attachment.ifname),
                     PodSocketDir::Create::kNever);
                 dir.ok()) {
        if (server) dir->removeSocket(rec.socket_path.substr(rec.socket_path.rfind('/') + 1));
        dir->closeAndRemoveIfEmpty();  // only if empty
      }
      ++summary.garbage_collected;
      continue;
    }
    if (absl::Status s = createPortLocked(rec.port_no, *req, rec.request, rec.netns, rec.socket_path); !s.ok()) {
      drop(std::string(s.message()));
      continue;
    }
    ++summary.restored;
    logInfo("port ", rec.port_no, " restored: ", rec.request.container_id, "/", rec.request.ifname, " ",
            rec.request.ip, " ", req->vhost_mode == VhostMode::kClient ? "client" : "server", " ", rec.socket_path);
  }
  restored_ports_ = summary.restored;
  gc_collected_ += summary.garbage_collected;
  republishLocked();
  // Whatever could not be restored is forgotten now, on disk too.
  if (!writeCheckpointLocked().ok())
    logError("the restored ports keep working; AddPort and DeletePort fail until the state directory can be written");
  return summary;
}

size_t DataplaneControl::collectGarbage() {
  Change change(*this);
  size_t collected = 0;
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (!ports_[n] || ports_[n]->netns.empty()) continue;
    struct stat st {};
    // Only "no such file" proves the pod gone; any other error proves nothing.
    if (::stat(ports_[n]->netns.c_str(), &st) == 0 || errno != ENOENT) continue;
    logInfo("port ", n, " garbage-collected: pod netns ", ports_[n]->netns, " of ",
            ports_[n]->request.attachment.container_id, "/", ports_[n]->request.attachment.ifname,
            " no longer exists");
    // Counted before the port goes: readers may look while the removal
    // waits for the PMDs, and must not see the port gone but not counted.
    ++gc_collected_;
    ++collected;
    removePortLocked(n);
  }
  const size_t by_modules = [this] {
    size_t n = 0;
    for (ControlModule* m : modules_) n += m->collectGarbage();
    return n;
  }();
  gc_collected_ += by_modules;
  collected += by_modules;
  if (collected > 0 || checkpoint_dirty_) (void)writeCheckpointLocked();
  return collected;
}

void DataplaneControl::startGarbageCollector(std::chrono::milliseconds interval) {
  std::lock_guard lock(mu_);
  if (gc_thread_.joinable()) return;
  gc_interval_ = interval;
  gc_stop_ = false;
  // Runs even while the interval is 0 (off): gc-interval-ms is live, and a
  // new interval wakes it.
  gc_thread_ = std::thread([this] {
    std::unique_lock gc_lock(mu_);
    while (!gc_stop_) {
      const uint64_t seen = gc_interval_changes_;
      auto woken = [this, seen] { return gc_stop_ || gc_interval_changes_ != seen; };
      if (gc_interval_.count() == 0) {
        gc_cv_.wait(gc_lock, woken);
        continue;
      }
      if (gc_cv_.wait_for(gc_lock, gc_interval_, woken)) continue;
      gc_lock.unlock();
      collectGarbage();
      gc_lock.lock();
    }
  });
}

void DataplaneControl::stopGarbageCollector() {
  {
    std::lock_guard lock(mu_);
    gc_stop_ = true;
  }
  gc_cv_.notify_all();
  if (gc_thread_.joinable()) gc_thread_.join();
}

absl::StatusOr<bool> DataplaneControl::deletePort(const AttachmentId& id) {
  if (absl::Status s = validateAttachment(id); !s.ok()) return s;
  Change change(*this);
  if (ControlModule* holder = holderOfLocked(id); holder != nullptr) return holder->release(id);
  auto it = by_attachment_.find(id);
  if (it == by_attachment_.end()) {
    if (checkpoint_dirty_) {
      if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
    }
    return false;
  }
  removePortLocked(it->second);
  // The port is gone either way; a failed write is retried by the next
  // change (and a DEL retried by the runtime finds nothing and retries it).
  // Until then the file names a port that no longer exists, never the
  // reverse: a restart meanwhile brings it back whole, the retried DEL
  // removes it.
  if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
  return true;
}

void DataplaneControl::removePortLocked(uint16_t port_no) {
  PortEntry entry = std::move(*ports_[port_no]);
  ports_[port_no].reset();
  by_attachment_.erase(entry.request.attachment);
  // Every PMD stops polling and sending to the port before it is closed.
  republishLocked();
  for (ControlModule* m : modules_) m->portClosing(port_no);  // e.g. its offload rules go before the port
  // Returns without waiting on the pod (a vhost-user socket is unregistered
  // on the backend's own thread): the locks held here are every API call's.
  backend_.destroy(entry.dpdk);
  if (entry.request.vhost_mode == VhostMode::kServer && !entry.socket_path.empty()) {
    if (entry.socket_dir.isOpen()) {
      entry.socket_dir.removeSocket(entry.socket_path.substr(entry.socket_path.rfind('/') + 1));
    } else {
      ::unlink(entry.socket_path.c_str());
    }
  }
  entry.socket_dir.closeAndRemoveIfEmpty();  // only if empty
  logInfo("port ", port_no, " removed: ", entry.request.attachment.container_id, "/",
          entry.request.attachment.ifname);
}

void DataplaneControl::removeAllPorts() {
  Change change(*this);
  for (uint16_t n = 0; n < port_table_; ++n)
    if (ports_[n] && ports_[n]->isPod()) removePortLocked(n);
}

std::vector<double> DataplaneControl::measurePmdLoadsLocked() {
  // A window shorter than this says nothing about a PMD's load.
  const uint64_t min_window = tsc_hz_ / 100;
  pmd_load_.resize(pmds_.size());
  std::vector<double> shares(pmds_.size());
  for (size_t p = 0; p < pmds_.size(); ++p) {
    const PmdCounters& c = pmds_[p]->counters;
    const uint64_t busy = c.busy_cycles.read();
    const uint64_t total = busy + c.idle_cycles.read() + c.sleep_cycles.read();
    PmdLoadSample& s = pmd_load_[p];
    if (total - s.total >= std::max<uint64_t>(min_window, 1)) {
      s.share = static_cast<double>(busy - s.busy) / static_cast<double>(total - s.total);
      s.busy = busy;
      s.total = total;
    }
    shares[p] = s.share;
  }
  return shares;
}

void DataplaneControl::republishLocked() {
  if (!started_) return;
  std::vector<ForwardingTable::Entry> routes;
  std::vector<Ipv6ForwardingTable::Entry> routes6;
  PmdRxQueues target(pmds_.size());
  auto sources = std::make_shared<SourceTable>();  // a module's port (the uplink) is not checked
  sources->ports.assign(port_table_, PortSources{});
  std::vector<RoutedPrefix> prefixes;
  std::vector<RoutedPrefix6> prefixes6;
  std::vector<RxqItem> pod_queues;
  std::vector<unsigned> module_queues(pmds_.size(), 0);
  for (uint16_t n = 0; n < port_table_; ++n) {
    if (!ports_[n]) continue;
    if (!ports_[n]->isPod()) {
      target[ports_[n]->pmd].push_back({n, 0});  // a module's port stays where the module put it
      ++module_queues[ports_[n]->pmd];
      continue;
    }
    const PortRequest& pod = ports_[n]->request;
    if (pod.hasIpv4()) routes.push_back({pod.ip, n, pod.mac});
    if (pod.ipv6) routes6.push_back({*pod.ipv6, n, pod.mac});
    sources->ports[n] = portSourcesOf(pod);
    for (const Ipv4Cidr& c : pod.routed_prefixes)
      prefixes.push_back({c.network.networkOrder(), Ipv4Address{c.mask()}.networkOrder(), n});
    for (const Ipv6Cidr& c : pod.routed_prefixes_v6) prefixes6.push_back({c.network.bytes, c.prefix_len, n});
    PortEntry& e = *ports_[n];
    // Only a port with queues to place needs its socket (a vhost-user port's
    // is read from its pod's device). A port placed while its socket was
    // unknown is placed again, once, when it is known (its pod connected,
    // so its traffic and caches are just starting): with PMDs on that
    // socket, those of its queues polled from another socket move there.
    const bool place = !e.placed || e.socket_pending;
    const std::optional<unsigned> socket = place ? portSocketLocked(e.dpdk) : std::nullopt;
    bool again = false;
    if (e.placed && e.socket_pending && socket) {
      e.socket_pending = false;
      for (unsigned pmd : e.queue_pmds) again |= pmd_sockets_[pmd] != *socket;
      if (std::find(pmd_sockets_.begin(), pmd_sockets_.end(), *socket) == pmd_sockets_.end()) again = false;
      if (again)
        logInfo("port ", n, ": its pod connected on NUMA socket ", *socket,
                "; its rx queues move to that socket's PMDs");
    }
    if (!e.placed) e.socket_pending = topology_ != nullptr && !socket && !e.request.pmd;
    for (uint16_t q = 0; q < e.dpdk.rx_queues; ++q) {
      const bool stays = e.placed && !(again && pmd_sockets_[e.queue_pmds[q]] != *socket);
      pod_queues.push_back(
          {n, q, stays ? std::optional<unsigned>(e.queue_pmds[q]) : std::nullopt, e.request.pmd, socket});
    }
  }
  const std::vector<unsigned> placed =
      placeRxQueues(pod_queues, measurePmdLoadsLocked(), module_queues,
                    topology_ != nullptr ? pmd_sockets_ : std::vector<unsigned>{});
  for (size_t i = 0; i < pod_queues.size(); ++i) {
    const RxqItem& q = pod_queues[i];
    target[placed[i]].push_back({q.port_no, q.queue});
    // Every packet of a queue polled from another socket crosses the
    // interconnect: worth a line when it is decided.
    if (!q.current && q.socket && pmd_sockets_[placed[i]] != *q.socket)
      logInfo("port ", q.port_no, " rx queue ", q.queue, ": polled by PMD ", placed[i], " on NUMA socket ",
              pmd_sockets_[placed[i]], ", across from the port's socket ", *q.socket,
              q.pinned && *q.pinned == placed[i] ? " (pinned there)" : " (no PMD on the port's socket)");
  }
  auto fib = std::make_shared<const ForwardingTable>(routes);
  fib_ = fib;
  // Pods' ports have their MTU checked; a module's port (the uplink) has none here.
  for (uint16_t n = 0; n < port_table_; ++n)
    port_mtus_[n] = ports_[n] && ports_[n]->isPod() ? static_cast<uint16_t>(ports_[n]->request.mtu) : 0;
  for (const ControlModule* m : modules_) m->fillPortTables(*sources, port_mtus_);
  fib6_ = std::make_shared<const Ipv6ForwardingTable>(routes6);
  // A port's sources or their checking changing (a port added, removed, or
  // re-made at the same number) revalidates its megaflows with the routes:
  // each holds in_port and the source fields it was decided on.
  sources_ = std::move(sources);
  prefixes_ = std::make_shared<const RoutedPrefixTable>(std::move(prefixes), std::move(prefixes6));
  // Megaflows the new tables do not support die now, before any PMD sees the
  // new tables (their packets meanwhile miss and are decided by the old ones).
  flows_.revalidate(routeTablesLocked());

  // An rx queue moving between PMDs must never be polled by both at once:
  // first publish a snapshot where moved queues belong to nobody, wait for
  // every PMD, then hand them to their new owners.
  PmdRxQueues interim(pmds_.size());
  bool moved = false;
  for (size_t p = 0; p < pmds_.size(); ++p) {
    for (const auto& [n, queue] : target[p]) {
      bool was_elsewhere = false;
      for (size_t o = 0; o < pmds_.size(); ++o) {
        if (o == p || live_[o] == nullptr) continue;
        for (const RxQueueRef& r : live_[o]->rx_queues)
          if (r.port_no == n && r.queue == queue) was_elsewhere = true;
      }
      if (was_elsewhere) moved = true;
      else interim[p].push_back({n, queue});
    }
  }
  // Readers see the assignment being made (they may look while PMDs
  // acknowledge).
  for (size_t p = 0; p < pmds_.size(); ++p) {
    for (const auto& [n, queue] : target[p]) {
      PortEntry& e = *ports_[n];
      if (!e.isPod()) continue;
      e.queue_pmds.resize(e.dpdk.rx_queues);
      e.queue_pmds[queue] = static_cast<unsigned>(p);
      if (queue == 0) e.pmd = static_cast<unsigned>(p);
      e.placed = true;
    }
  }
  if (moved) publishLocked(interim, fib);
  publishLocked(target, fib);
  // Classifiers without the stale megaflows; their slots are recycled.
  flows_.commit(change_tables_lock_);
}

void DataplaneControl::publishLocked(const PmdRxQueues& rx_queues_per_pmd,
                                     const std::shared_ptr<const ForwardingTable>& fib) {
  ++version_;
  std::vector<std::shared_ptr<const PmdSnapshot>> next(pmds_.size());
  for (size_t p = 0; p < pmds_.size(); ++p) {
    auto snap = std::make_shared<PmdSnapshot>();
    snap->version = version_;
    snap->tx_ports.assign(port_table_, TxPortSlot{});
    snap->port_macs.assign(port_table_, rte_ether_addr{});
    snap->fib = fib;
    snap->gateway_ip_be = config_.gateway.networkOrder();
    snap->gateway_mac = toEther(config_.gateway_mac);
    snap->pod_net_be = config_.pod_cidr.network.networkOrder();
    snap->pod_mask_be = Ipv4Address{config_.pod_cidr.mask()}.networkOrder();
    snap->fib6 = fib6_;
    snap->v6 = v6_net_;
    snap->sources = sources_;
    snap->prefixes = prefixes_;
    snap->tx_flush_cycles = tsc_hz_ / 1'000'000 * tx_flush_interval_us_;
    snap->settings = pmd_settings_;
    for (uint16_t n = 0; n < port_table_; ++n) {
      if (!ports_[n]) continue;
      const PortEntry& e = *ports_[n];
      if (!e.isPod()) {
        snap->tx_ports[n] = {e.dpdk.dpdk_port, 0, true, e.module_tx_lock};
        continue;
      }
      // A tx queue of the PMD's own where the pod enabled one for every
      // PMD; else PMD p shares queue p mod their count, under that queue's
      // lock only if another PMD shares it too (or while they change over).
      const uint16_t usable = e.tx_usable;
      const auto queue = static_cast<uint16_t>(p % usable);
      const bool shared = e.tx_changing || queue + usable < pmds_.size();
      snap->tx_ports[n] = {e.dpdk.dpdk_port, queue, true, shared ? &e.tx_locks[queue] : nullptr, e.dpdk.vhost};
      snap->port_macs[n] = toEther(e.request.mac);
    }
    snap->port_mtus = port_mtus_;
    for (const auto& [n, queue] : rx_queues_per_pmd[p])
      snap->rx_queues.push_back({ports_[n]->dpdk.dpdk_port, queue, n, ports_[n]->dpdk.vhost});
    for (const ControlModule* m : modules_) m->fillSnapshot(*snap, p);
    next[p] = std::move(snap);
  }
  for (size_t p = 0; p < pmds_.size(); ++p)
    pmds_[p]->mailbox.published.store(next[p].get(), std::memory_order_seq_cst);
  // A PMD that is not running holds no snapshot; one that starts after this
  // point reads the new one (seq_cst pairs with its store to `running`).
  // The wait is without the table lock: a PMD slow to reach its next loop
  // iteration delays this change (and the next), never a reader such as
  // ListPorts or GetStats. The writer lock keeps every table as it is.
  const uint64_t version = version_;
  change_tables_lock_->unlock();
  for (const PmdContext* pmd : pmds_) {
    while (pmd->mailbox.running.load(std::memory_order_seq_cst) &&
           pmd->mailbox.acked_version.load(std::memory_order_acquire) < version)
      std::this_thread::sleep_for(kAckPollInterval);
  }
  change_tables_lock_->lock();
  // Every PMD now runs `next`: the previous snapshots can go.
  live_ = std::move(next);
}

PortView DataplaneControl::viewLocked(uint16_t port_no) {
  const PortEntry& e = *ports_[port_no];
  return PortView{port_no, e.request, e.socket_path, e.dpdk.dpdk_name, e.pmd, backend_.linkUp(e.dpdk),
                  e.netns, e.queue_pmds, portSocketLocked(e.dpdk)};
}

std::vector<PortView> DataplaneControl::listPorts() {
  std::lock_guard lock(mu_);
  std::vector<PortView> out;
  for (uint16_t n = 0; n < port_table_; ++n)
    if (ports_[n] && ports_[n]->isPod()) out.push_back(viewLocked(n));
  return out;
}

DataplaneControl::Totals DataplaneControl::readTotals() const {
  Totals t;
  t.ports.resize(port_table_);
  t.rx_queues.resize(port_table_);
  for (size_t p = 0; p < pmds_.size(); ++p) {
    const PmdCounters& c = pmds_[p]->counters;
    PmdStatsView& v = t.pmds.emplace_back(readPmdStats(c));
    v.index = static_cast<unsigned>(p);
    v.lcore = pmds_[p]->lcore;
    v.numa_socket = pmd_sockets_[p];
    for (size_t r = 0; r < kDropReasonCount; ++r) t.drops[r] += c.drops[r].read();
  }
  for (uint16_t n = 0; n < port_table_; ++n) readPortTotals(n, t.ports[n], t.rx_queues[n]);
  return t;
}

void DataplaneControl::readPortTotals(uint16_t port_no, PortStatsView& port,
                                      std::array<uint64_t, kMaxQueuesPerPort>& rx_queues) const {
  for (const PmdContext* pmd : pmds_) {
    const PmdCounters& c = pmd->counters;
    for (uint16_t q = 0; q < kMaxQueuesPerPort; ++q) rx_queues[q] += c.rx_queue_packets[port_no][q].read();
    port.rx_packets += c.ports[port_no].rx_packets.read();
    port.tx_packets += c.ports[port_no].tx_packets.read();
    port.tx_dropped += c.ports[port_no].tx_dropped.read();
    port.rx_dropped += c.ports[port_no].rx_dropped.read();
  }
  if (!ports_[port_no]) return;
  const PortBackend::ByteCounts b = backend_.bytes(ports_[port_no]->dpdk);
  port.rx_bytes = b.rx;
  port.tx_bytes = b.tx;
}

StatsView DataplaneControl::stats() {
  std::lock_guard lock(mu_);
  Totals now = readTotals();
  std::vector<FlowControlCounters> flow_counters = flows_.counters();
  StatsView v;
  v.tsc_hz = tsc_hz_;
  v.tx_flush_interval_us = tx_flush_interval_us_;
  v.seconds_since_clear = std::chrono::duration<double>(std::chrono::steady_clock::now() - cleared_at_).count();
  for (size_t p = 0; p < now.pmds.size(); ++p) {
    PmdStatsView s = subtract(now.pmds[p], baseline_.pmds[p]);
    s.megaflows = flow_counters[p].megaflows;
    v.pmds.push_back(s);
  }
  for (size_t r = 0; r < kDropReasonCount; ++r) v.drops[r] = now.drops[r] - baseline_.drops[r];
  // Modules' own ports (the uplink) first, then the pods'.
  for (bool pods : {false, true}) {
    for (uint16_t n = 0; n < port_table_; ++n) {
      if (!ports_[n] || ports_[n]->isPod() != pods) continue;
      const PortStatsView& c = now.ports[n];
      const PortStatsView& b = baseline_.ports[n];
      v.ports.push_back({n, ports_[n]->request.attachment, c.rx_packets - b.rx_packets,
                         c.tx_packets - b.tx_packets, c.tx_dropped - b.tx_dropped, c.rx_dropped - b.rx_dropped,
                         c.rx_bytes - b.rx_bytes, c.tx_bytes - b.tx_bytes});
      // A module's port has one rx queue, on its PMD; a pod's, each on the
      // PMD placement gave it (none yet: not polled, not listed).
      const PortEntry& e = *ports_[n];
      const size_t queues = e.isPod() ? e.queue_pmds.size() : 1;
      for (uint16_t q = 0; q < queues; ++q)
        v.rx_queues.push_back({n, q, e.isPod() ? e.queue_pmds[q] : e.pmd,
                               now.rx_queues[n][q] - baseline_.rx_queues[n][q]});
    }
  }
  return v;
}

void DataplaneControl::clearStats() {
  std::lock_guard lock(mu_);
  baseline_ = readTotals();
  cleared_at_ = std::chrono::steady_clock::now();
}

HealthView DataplaneControl::health() {
  std::lock_guard lock(mu_);
  HealthView h;
  bool all_running = true;
  for (const PmdContext* pmd : pmds_) all_running &= pmd->mailbox.running.load(std::memory_order_acquire);
  h.ready = started_ && all_running;
  h.uptime_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
  h.ports = static_cast<uint32_t>(by_attachment_.size());
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
