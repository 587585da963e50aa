// The port table: every open port by port number (pods' ports and modules'
// own ports such as the uplink), the pods' ports by attachment, and which
// number a new port gets. It also answers the questions a new port's request
// asks of the others (does its address, MAC or socket belong to another
// port; do its routed prefixes overlap one).
//
// No locks and no threads: DataplaneControl owns one and guards it with its
// table lock; tests build one alone.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/core/pod_socket_dir.h"
#include "dataplane/core/port_backend.h"
#include "dataplane/core/port_request.h"
#include "dataplane/core/rxq_placement.h"

namespace sluice {

struct PortEntry {
  PortRequest request;
  std::string socket_path;
  CreatedPort dpdk;
  unsigned pmd = 0;  // the PMD polling rx queue 0 (a module's port: its only one)
  // A pod port's: the PMD polling each rx queue, by queue id (once placed).
  std::vector<unsigned> queue_pmds;
  // A pod port's: one lock per tx queue (taken only by PMDs that share the
  // queue, see SnapshotPublisher).
  std::unique_ptr<rte_spinlock_t[]> tx_locks;
  // The tx queues the PMDs send on: 0..tx_usable-1, those the pod enabled
  // (PortBackend::enabledTxQueues) as last read.
  uint16_t tx_usable = 1;
  // While the PMDs change over to another tx_usable: every PMD takes its
  // queue's lock, whichever snapshot it runs.
  bool tx_changing = false;
  RawPortRequest raw;  // as requested: what the checkpoint records
  std::string netns;   // watched netns path (empty: none)
  // A module's own port (DataplaneControl::addModulePortLocked): its label,
  // fixed PMD and the module's tx lock. Empty label: a pod's port.
  std::string module_label;
  rte_spinlock_t* module_tx_lock = nullptr;
  bool placed = false;  // `queue_pmds` was decided (rxq_placement.h); a new port's is not yet
  // Placed while its NUMA socket was unknown (a vhost-user port before its
  // pod connected), not pinned: placed once more when the socket is known.
  bool socket_pending = false;
  // A pod port with a socket_subdir: that directory, held open; the socket
  // is reached only through it (pod_socket_dir.h).
  PodSocketDir socket_dir{};
  bool isPod() const { return module_label.empty(); }
};

class PortTable {
 public:
  // `size`: how many port numbers exist (portTableSize of max-ports: every
  // per-port table of the PMDs has that many); pods get numbers below
  // `max_ports` only, the rest are for modules' ports.
  PortTable(uint16_t size, uint16_t max_ports);

  uint16_t size() const { return static_cast<uint16_t>(ports_.size()); }
  // The port at `port_no`; null when there is none (or beyond the table).
  PortEntry* find(uint16_t port_no);
  const PortEntry* find(uint16_t port_no) const;
  // The port of a pod's attachment, if it has one.
  std::optional<uint16_t> portOf(const AttachmentId& id) const;
  // How many pods' ports are open.
  size_t podCount() const { return by_attachment_.size(); }
  // The lowest free pod port number (small, dense, reused); none: all taken.
  std::optional<uint16_t> freePortNumber() const;

  // Puts a port at a free `port_no`; a pod's is found by its attachment too.
  void insert(uint16_t port_no, PortEntry entry);
  // Takes the port at `port_no` out of the table (and out of the index).
  PortEntry take(uint16_t port_no);

  // AlreadyExists when another pod's port has `req`'s IPv4 or IPv6 address
  // or its MAC (the message names which and whose).
  absl::Status findCollision(const PortRequest& req) const;
  // AlreadyExists when another pod's port is on `socket_path`.
  absl::Status findSocketCollision(const std::string& socket_path) const;
  // FailedPrecondition when `req`'s routed prefixes hold another pod's
  // address or overlap its routed prefixes.
  absl::Status checkRoutedPrefixes(const PortRequest& req) const;
  // Every pod's routed prefixes.
  std::vector<Ipv4Cidr> routedPrefixes() const;
  std::vector<Ipv6Cidr> routedPrefixes6() const;

  // Every port's rx queues on the PMDs they are assigned to now (a pod port
  // not placed yet is polled by nobody).
  PmdRxQueues assignedRxQueues(size_t pmds) const;
  // Records `target` (from planRxQueues) as where each pod port's queues are.
  void recordPlacement(const PmdRxQueues& target);

  // The pods' port numbers, in order: a copy, so the caller may remove ports
  // as it goes (and, unlike forEachPod's callback, its loop body is checked
  // against the caller's locks).
  std::vector<uint16_t> podNumbers() const;

  // Calls `f(port_no, entry)` for every pod's port, in port number order.
  template <typename F>
  void forEachPod(F&& f) const {
    for (uint16_t n = 0; n < size(); ++n)
      if (ports_[n] && ports_[n]->isPod()) f(n, *ports_[n]);
  }
  template <typename F>
  void forEachPod(F&& f) {
    for (uint16_t n = 0; n < size(); ++n)
      if (ports_[n] && ports_[n]->isPod()) f(n, *ports_[n]);
  }
  // Calls `f(port_no, entry)` for every port, pods' and modules', in order.
  template <typename F>
  void forEachPort(F&& f) const {
    for (uint16_t n = 0; n < size(); ++n)
      if (ports_[n]) f(n, *ports_[n]);
  }
  template <typename F>
  void forEachPort(F&& f) {
    for (uint16_t n = 0; n < size(); ++n)
      if (ports_[n]) f(n, *ports_[n]);
  }

 private:
  const uint16_t max_ports_;
  std::vector<std::optional<PortEntry>> ports_;  // indexed by port number
  std::map<AttachmentId, uint16_t> by_attachment_;  // pods' ports only
};

}  // namespace sluice
