#include "dataplane/core/vhost_port_backend.h"

#include <absl/strings/str_cat.h>
#include <rte_vhost.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <string_view>
#include <thread>

#include "common/log.h"
#include "dataplane/core/pmd_grace_period.h"
#include "dataplane/core/vhost_connection_slot.h"

namespace sluice {

struct VhostPortBackend::Socket {
  VhostPortBackend* backend = nullptr;
  std::string path;
  VhostPort port;
  // The registry's lock: bit q set, the pod enabled its receive vring of
  // queue pair q (our tx queue q).
  uint32_t enabled_tx = 0;
  // The backend's device lock: the connected device (-1: none) and what the
  // port's earlier connections received and sent.
  int stats_vid = -1;
  ByteCounts earlier;
  // The registry's lock: which connection is the port's.
  VhostConnectionSlot slot;
  // The registry's lock: the port was destroyed and the reaper is
  // unregistering the socket (the path cannot be registered again yet).
  bool unregistering = false;
};

namespace {

// virtio-net feature bits (the virtio specification's; linux/virtio_net.h
// does not compile as C++): the device takes TCP segments larger than the MTU.
constexpr uint64_t kVirtioNetHostTso4 = 1ULL << 11;
constexpr uint64_t kVirtioNetHostTso6 = 1ULL << 12;

// Every socket of every backend by path: the callbacks get a device id, whose
// path (rte_vhost_get_ifname) is the one the socket was registered with.
struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, VhostPortBackend::Socket*> by_path;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string pathOf(int vid) {
  char buf[PATH_MAX];
  if (rte_vhost_get_ifname(vid, buf, sizeof(buf)) != 0) return {};
  return buf;
}

// The socket of device `vid` (registry lock held); null if none.
VhostPortBackend::Socket* socketOf(int vid) {
  auto it = registry().by_path.find(pathOf(vid));
  return it == registry().by_path.end() ? nullptr : it->second;
}

// Whether the `n`th refusal is logged: the first ones, then ever more
// rarely, so a peer that keeps connecting cannot flood the log.
bool logRefusal(uint64_t n) { return n <= 4 || std::has_single_bit(n); }

}  // namespace

VhostPortBackend::VhostPortBackend(std::vector<PmdMailbox*> pmds) : pmds_(std::move(pmds)) {}

VhostPortBackend::~VhostPortBackend() {
  while (!sockets_.empty()) retire(std::move(sockets_.extract(sockets_.begin()).mapped()));
  // reaper_, destroyed first, finishes the unregisters.
}

bool VhostPortBackend::isVhostUserSocket(const std::string& path) {
  std::lock_guard lock(registry().mu);
  return registry().by_path.contains(path);
}

const rte_vhost_device_ops& VhostPortBackend::deviceOps() {
  static const rte_vhost_device_ops ops = [] {
    rte_vhost_device_ops o{};
    o.new_connection = onNewConnection;
    o.destroy_connection = onDestroyConnection;
    o.new_device = onNewDevice;
    o.destroy_device = onDestroyDevice;
    o.vring_state_changed = onVringStateChanged;
    return o;
  }();
  return ops;
}

absl::StatusOr<CreatedPort> VhostPortBackend::createVhostUser(uint16_t port_no, const std::string& socket_path,
                                                              bool client_mode, uint16_t queues) {
  auto socket = std::make_unique<Socket>();
  socket->backend = this;
  socket->path = socket_path;
  {
    std::lock_guard lock(registry().mu);
    auto [it, added] = registry().by_path.emplace(socket_path, socket.get());
    if (!added && it->second->unregistering) {
      // The deleted port's registration goes once the library lets go of
      // its connection (within the sockets' timeouts); waiting for that
      // here would hold control's locks, so the caller retries.
      return absl::UnavailableError(absl::StrCat(
          "socket ", socket_path, ": the previous port on it is still being closed (the vhost library was busy ",
          "with its connection for ", std::chrono::duration<double>(it->second->backend->reaper_.busyFor()).count(), " s); retry"));
    }
    if (!added) return absl::AlreadyExistsError(absl::StrCat("socket ", socket_path, " is registered already"));
  }
  auto fail = [&](const std::string& what, bool registered) {
    // Not started yet: no connection, so the library does not wait.
    if (registered) (void)unregister(socket_path);
    std::lock_guard lock(registry().mu);
    registry().by_path.erase(socket_path);
    return absl::InternalError(absl::StrCat("creating vhost-user port on ", socket_path, ": ", what));
  };
  // Per-vring byte counters for bytes(); offload flags in the mbufs as
  // DPDK's ethdevs set them (not the library's legacy ones). Client mode
  // reconnects for as long as the socket is registered, a server keeps
  // listening after its pod went: neither is given NO_RECONNECT.
  uint64_t flags = RTE_VHOST_USER_NET_STATS_ENABLE | RTE_VHOST_USER_NET_COMPLIANT_OL_FLAGS;
  if (client_mode) flags |= RTE_VHOST_USER_CLIENT;
  if (rte_vhost_driver_register(socket_path.c_str(), flags) != 0) return fail("rte_vhost_driver_register failed", false);
  // The pod may not hand us TCP segments larger than the MTU (the fast path
  // does not segment), as net_vhost without tso=1.
  if (rte_vhost_driver_disable_features(socket_path.c_str(), kVirtioNetHostTso4 | kVirtioNetHostTso6) != 0)
    return fail("disabling TSO failed", true);
  if (rte_vhost_driver_callback_register(socket_path.c_str(), &deviceOps()) != 0)
    return fail("registering callbacks failed", true);
  // A server's socket is listening when this returns; a client starts
  // connecting (and reconnecting) on the library's thread.
  if (rte_vhost_driver_start(socket_path.c_str()) != 0) return fail("rte_vhost_driver_start failed", true);

  CreatedPort port;
  port.tx_queues = queues;
  port.rx_queues = queues;
  port.vhost = &socket->port;
  logDebug("port ", port_no, ": vhost-user ", client_mode ? "client" : "server", " on ", socket_path);
  sockets_.emplace(&socket->port, std::move(socket));
  return port;
}

int VhostPortBackend::unregister(const std::string& path) {
  // DPDK 22.11 retries inside until no callback of its thread runs on the
  // socket's connections (a release that returns -EBUSY is retried here), and
  // destroys a connected device on the caller's thread (our
  // destroy_device: the PMDs are past it).
  int rc;
  while ((rc = rte_vhost_driver_unregister(path.c_str())) == -EBUSY)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return rc;
}

void VhostPortBackend::forget(std::unique_ptr<Socket> socket) {
  std::lock_guard lock(registry().mu);
  auto it = registry().by_path.find(socket->path);
  if (it != registry().by_path.end() && it->second == socket.get()) registry().by_path.erase(it);
}

void VhostPortBackend::destroy(const CreatedPort& port) {
  auto it = sockets_.find(port.vhost);
  if (it == sockets_.end()) return;
  retire(std::move(sockets_.extract(it).mapped()));
}

void VhostPortBackend::retire(std::unique_ptr<Socket> socket) {
  {
    std::lock_guard lock(registry().mu);
    socket->unregistering = true;
  }
  std::string path = socket->path;
  // The library's callbacks find the socket by its path until it is
  // unregistered: it is freed only then. (A std::function must be
  // copyable, hence the shared_ptr.)
  auto held = std::make_shared<std::unique_ptr<Socket>>(std::move(socket));
  reaper_.reap(std::move(path), [held] { forget(std::move(*held)); });
}

int VhostPortBackend::onNewConnection(int vid) {
  std::string path;
  uint64_t refused = 0;
  {
    std::lock_guard lock(registry().mu);
    Socket* socket = socketOf(vid);
    if (socket == nullptr || socket->unregistering) return -1;
    if (socket->slot.admit(vid)) return 0;
    path = socket->path;
    refused = socket->slot.refused();
  }
  // The library closes it; the pod's own connection is served on.
  if (logRefusal(refused))
    logWarning("vhost-user ", path, ": connection refused, the port has one already (", refused, " refused so far)");
  return -1;
}

void VhostPortBackend::onDestroyConnection(int vid) {
  std::lock_guard lock(registry().mu);
  if (Socket* socket = socketOf(vid); socket != nullptr) socket->slot.release(vid);
}

int VhostPortBackend::onNewDevice(int vid) {
  Socket* socket;
  {
    std::lock_guard lock(registry().mu);
    socket = socketOf(vid);
    if (socket != nullptr && (socket->unregistering || !socket->slot.holds(vid))) socket = nullptr;
  }
  if (socket == nullptr) return -1;
  // The PMDs poll: the pod need not kick us (as net_vhost).
  const uint16_t vrings = rte_vhost_get_vring_num(vid);
  for (uint16_t v = 0; v < vrings; ++v) rte_vhost_enable_guest_notification(vid, v, 0);
  VhostPortBackend& backend = *socket->backend;
  {
    std::lock_guard lock(backend.device_mu_);
    socket->stats_vid = vid;
  }
  // Before the vid: control, told of the change below, places the port's
  // queues by it.
  socket->port.numa_node.store(rte_vhost_get_numa_node(vid), std::memory_order_relaxed);
  socket->port.vid.store(vid, std::memory_order_release);
  backend.queue_change_.store(true, std::memory_order_release);
  logInfo("vhost-user ", socket->path, ": pod connected (", vrings, " vrings, NUMA node ",
          socket->port.numa_node.load(std::memory_order_relaxed), ")");
  return 0;
}

void VhostPortBackend::onDestroyDevice(int vid) {
  Socket* socket;
  {
    std::lock_guard lock(registry().mu);
    socket = socketOf(vid);
    // Only the port's own connection's device was ever the port's: another
    // one's teardown must not clear its state.
    if (socket != nullptr && !socket->slot.holds(vid)) socket = nullptr;
  }
  if (socket == nullptr) return;
  VhostPortBackend& backend = *socket->backend;
  // The library unmaps the pod's memory once we return: no PMD may still
  // be in a burst on this device by then.
  socket->port.vid.store(-1, std::memory_order_seq_cst);
  waitForPmdGracePeriod(backend.pmds_);
  {
    std::lock_guard lock(backend.device_mu_);
    const ByteCounts last = deviceBytes(vid);
    socket->earlier.rx += last.rx;
    socket->earlier.tx += last.tx;
    socket->stats_vid = -1;
  }
  {
    // Its vrings' states reset without an event of their own.
    std::lock_guard lock(registry().mu);
    socket->enabled_tx = 0;
    socket->port.ready_vrings.store(0, std::memory_order_relaxed);
    socket->port.numa_node.store(-1, std::memory_order_relaxed);
  }
  backend.queue_change_.store(true, std::memory_order_release);
  logInfo("vhost-user ", socket->path, ": pod gone");
}

int VhostPortBackend::onVringStateChanged(int vid, uint16_t vring, int enable) {
  std::lock_guard lock(registry().mu);
  Socket* socket = socketOf(vid);
  if (socket == nullptr || !socket->slot.holds(vid)) return 0;
  if (vring < 64) {
    const uint64_t bit = uint64_t{1} << vring;
    if (enable) {
      socket->port.ready_vrings.fetch_or(bit, std::memory_order_relaxed);
    } else {
      socket->port.ready_vrings.fetch_and(~bit, std::memory_order_relaxed);
    }
  }
  // An even vring is the pod's receive vring: our tx queue vring/2.
  if (vring % 2 == 0 && vring / 2 < 32) {
    const uint32_t bit = 1U << (vring / 2);
    socket->enabled_tx = enable ? socket->enabled_tx | bit : socket->enabled_tx & ~bit;
  }
  socket->backend->queue_change_.store(true, std::memory_order_release);
  return 0;
}

PortBackend::ByteCounts VhostPortBackend::deviceBytes(int vid) {
  ByteCounts b;
  const uint16_t vrings = rte_vhost_get_vring_num(vid);
  for (uint16_t v = 0; v < vrings; ++v) {
    const int n = rte_vhost_vring_stats_get_names(vid, v, nullptr, 0);
    if (n <= 0) continue;
    std::vector<rte_vhost_stat_name> names(static_cast<size_t>(n));
    std::vector<rte_vhost_stat> stats(static_cast<size_t>(n));
    if (rte_vhost_vring_stats_get_names(vid, v, names.data(), static_cast<unsigned>(n)) != n ||
        rte_vhost_vring_stats_get(vid, v, stats.data(), static_cast<unsigned>(n)) != n)
      continue;
    for (int i = 0; i < n; ++i) {
      // Named "<rx|tx>_q<n>_good_bytes" (the library's view of the vring).
      const std::string_view name = names[static_cast<size_t>(i)].name;
      if (!name.ends_with("_good_bytes")) continue;
      // Even: the pod's receive vring, which we send on.
      (v % 2 == 0 ? b.tx : b.rx) += stats[static_cast<size_t>(i)].value;
    }
  }
  return b;
}

bool VhostPortBackend::linkUp(const CreatedPort& port) {
  return port.vhost != nullptr && port.vhost->vid.load(std::memory_order_acquire) >= 0;
}

PortBackend::ByteCounts VhostPortBackend::bytes(const CreatedPort& port) {
  auto it = sockets_.find(port.vhost);
  if (it == sockets_.end()) return {};
  const Socket& socket = *it->second;
  std::lock_guard lock(device_mu_);
  ByteCounts b = socket.earlier;
  if (socket.stats_vid >= 0) {
    const ByteCounts now = deviceBytes(socket.stats_vid);
    b.rx += now.rx;
    b.tx += now.tx;
  }
  return b;
}

uint16_t VhostPortBackend::enabledTxQueues(const CreatedPort& port) {
  auto it = sockets_.find(port.vhost);
  if (it == sockets_.end()) return 1;
  std::lock_guard lock(registry().mu);
  const auto leading = static_cast<uint16_t>(std::countr_one(it->second->enabled_tx));
  return std::clamp<uint16_t>(leading, 1, port.tx_queues);
}

bool VhostPortBackend::takeQueueStateChange() { return queue_change_.exchange(false, std::memory_order_acq_rel); }

}  // namespace sluice
