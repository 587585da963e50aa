// What one PMD needs to forward, as an immutable snapshot published by the
// control path.
//
// Hand-over protocol (quiescent-state reclamation, as DPDK's lib/rcu QSBR and
// OVS's PMD reload):
//  1. Control builds a new PmdSnapshot (fresh version number) and publishes it
//     with a release store into the PMD's `PmdMailbox::published`.
//     (seq_cst, with `running`: see Pmd::run.)
//  2. At the top of each poll-loop iteration (its quiescent point: it holds no
//     pointer into any snapshot there) the PMD acquire-loads `published`. If it
//     changed, the PMD first flushes every output batch under the *old*
//     snapshot, then switches, then release-stores the new version into
//     `acked_version`.
//  3. Control acquire-waits until `acked_version` >= the version it published;
//     from then on no PMD touches the old snapshot, its forwarding table, or
//     any port that the new snapshot no longer lists, so control may free them
//     and close the port.
// Snapshots are never modified after publication, so PMDs read them without
// synchronisation beyond the acquire in step 2.
#pragma once

#include <rte_ether.h>
#include <rte_spinlock.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/datapath/forwarding_table.h"
#include "dataplane/datapath/forwarding_table_v6.h"
#include "dataplane/datapath/host_path.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/overlay/overlay_snapshot.h"
#include "dataplane/datapath/routed_prefix_table.h"
#include "dataplane/datapath/source_check.h"
#include "dataplane/datapath/vhost_port.h"

namespace sluice {
namespace flow {
class Classifier;
}

// One rx queue a PMD polls.
struct RxQueueRef {
  uint16_t dpdk_port = 0;  // ethdev port id (unused with `vhost`)
  uint16_t queue = 0;      // rx queue id (a vhost-user port's queue pair)
  uint16_t port_no = 0;    // Sluice port number of that port
  // Non-null: a vhost-user port served by the vhost library (no ethdev);
  // owned by the port backend, alive while any snapshot lists it.
  VhostPort* vhost = nullptr;
};

// How a PMD transmits on a port, indexed by port number.
struct TxPortSlot {
  uint16_t dpdk_port = 0;
  uint16_t queue = 0;
  bool valid = false;  // false: no such port (packets to it are dropped as port_gone)
  // Non-null when several PMDs share this tx queue (more PMDs than the port has
  // tx queues, as with a single-queue vhost-user pod). Taken once per batch,
  // not per packet; null with one PMD, which is the common deployment.
  rte_spinlock_t* lock = nullptr;
  // Non-null: a vhost-user port served by the vhost library (dpdk_port
  // unused), as in RxQueueRef.
  VhostPort* vhost = nullptr;
};

// Settings control may change while a PMD runs (config keys of the same
// names); see PmdSnapshot::settings. The values mean something only with a
// generation other than 0.
struct PmdSettings {
  uint64_t generation = 0;           // bumped by control on every change; 0: none made
  uint32_t emc_insert_inv_prob = 0;  // EMC insertion 1 in N; 0: EMC off
  bool smc_enable = false;           // whether the SMC is searched and filled
  uint32_t upcall_rate = 0;          // upcalls per second
  uint32_t upcall_burst = 0;         // upcalls at once
  uint32_t max_sleep_us = 0;         // longest sleep while the queues run light; 0: never
  uint32_t icmp_error_rate = 0;      // ICMP errors per second; 0: none
};

struct PmdSnapshot {
  uint64_t version = 0;
  std::vector<RxQueueRef> rx_queues;
  // The per-port tables (tx_ports, port_macs, port_mtus) hold one entry per
  // port number: control sizes them by max-ports (portTableSize), the PMD's
  // batches and counters have as many.
  std::vector<TxPortSlot> tx_ports = std::vector<TxPortSlot>(kDefaultPortTable);
  // Shared by all PMDs' snapshots of one version; control keeps it alive.
  std::shared_ptr<const ForwardingTable> fib;
  uint32_t gateway_ip_be = 0;
  rte_ether_addr gateway_mac{};
  // Node pod CIDR, network order: ARP for any address inside it (other than
  // the asker's own) is answered with the gateway MAC (proxy ARP), so pods
  // that believe their peers are on-link still reach them through us.
  uint32_t pod_net_be = 0;
  uint32_t pod_mask_be = 0;
  // IPv6: the /128 pod routes (shared like fib) and the node's IPv6 pod
  // network with the gateway's addresses (disabled without pod-cidr-v6).
  // Neighbor solicitations are answered from these like ARP (proxy ND).
  std::shared_ptr<const Ipv6ForwardingTable> fib6;
  Ipv6PodNet v6;
  // The pod MAC behind each port (the output action's Ethernet destination;
  // megaflows name only the port, so a port's MAC lives here, per version).
  std::vector<rte_ether_addr> port_macs = std::vector<rte_ether_addr>(kDefaultPortTable);
  // Each port's IP MTU (0: not checked, a module's port), for the inline
  // translation, which copies the out port's into its output action.
  std::vector<uint16_t> port_mtus = std::vector<uint16_t>(kDefaultPortTable);
  // Which sources each port's pod may send with (shared like fib; null:
  // nothing is checked, as in snapshots built by tests).
  std::shared_ptr<const SourceTable> sources;
  // Prefixes routed to local pods' ports (shared like fib; null: none), for
  // the inline translation only.
  std::shared_ptr<const RoutedPrefixTable> prefixes;
  // Output batches wait at most this many TSC cycles (0: flush after every rx burst).
  uint64_t tx_flush_cycles = 0;
  // The PMD's live settings (flow-cache tiers, upcall budget). The PMD
  // applies them at its quiescent point when `generation` differs from the
  // one it applied last, so the fast path reads none of them per packet. 0:
  // keep what the PMD was made with (snapshots built by tests).
  PmdSettings settings;
  // The VXLAN overlay: uplink, decap parameters, tunnels (disabled without an uplink).
  vxlan::OverlaySnapshot overlay;
  // The exception path to the node's kernel (disabled without host-interface),
  // for the inline translation only.
  HostPath host;
};

// The control ↔ PMD exchange point for one PMD (one cache line each way so the
// PMD's loads do not contend with control's stores to the other field).
struct PmdMailbox {
  alignas(64) std::atomic<const PmdSnapshot*> published{nullptr};
  // Grace periods without a new snapshot, for state the PMD reads outside
  // snapshots (a vhost-user device's id, which the vhost library's thread
  // takes back when the pod goes away). A waiter increments grace_request
  // (seq_cst) after it withdrew the state; the PMD, at its quiescent point,
  // loads grace_request (seq_cst) and stores the value into grace_passed
  // (release). A PMD that stored a value >= the waiter's has, from then on,
  // read the withdrawal (its load synchronised with the waiter's
  // increment), and everything it did before is visible to the waiter's
  // acquire of grace_passed. A PMD not `running` holds nothing; one that
  // starts after the waiter read `running` (seq_cst on both sides) loads the
  // increment. The PMD pays one load per loop on a line it reads anyway.
  std::atomic<uint64_t> grace_request{0};
  // The megaflow classifier version this PMD searches (flow/classifier.h),
  // handed over like a snapshot but on its own, so installing megaflows does
  // not reload ports: control stores it (seq_cst), the PMD picks it up at its
  // quiescent point and stores the same pointer into classifier_acked
  // (release); control frees the previous version, and recycles megaflows
  // removed from it, only after that acknowledgement.
  std::atomic<const flow::Classifier*> classifier{nullptr};
  alignas(64) std::atomic<uint64_t> acked_version{0};
  std::atomic<const flow::Classifier*> classifier_acked{nullptr};
  std::atomic<uint64_t> grace_passed{0};
  alignas(64) std::atomic<bool> stop{false};
  std::atomic<bool> running{false};
};

}  // namespace sluice
