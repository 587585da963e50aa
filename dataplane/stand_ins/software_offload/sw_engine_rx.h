// The receive side of the software flow engine: an rx callback
// (rte_eth_add_rx_callback) that plays a NIC's flow engine for ports without
// one. It matches every received packet against the installed rules and
// stamps the matching rule's mark exactly as a NIC does for an rte_flow
// MARK action: mbuf->hash.fdir.hi := mark, ol_flags |= RTE_MBUF_F_RX_FDIR |
// RTE_MBUF_F_RX_FDIR_ID. For tests and demos; chosen only by configuration
// (offload provider "software"), never in place of missing hardware.
//
// Runs on the PMD thread that polls the queue (inside rte_eth_rx_burst): no
// heap, locks or syscalls. Its "hardware parser" is the flow-key extraction
// (flow/flow_key.h): a rule matches only frames that parse completely, as a
// NIC classifies only headers it validated. A frame whose outer headers
// parse as IPv4 / UDP to port 4789 with room for a VXLAN header is looked up
// first by its inner key (the inner frame parsed from after the VXLAN header
// to the end of the frame, as a NIC's tunnel parser does: it checks no UDP
// length), with the outer source, destination and VNI as tun_src / tun_dst /
// tun_vni and the outer facts in the layer word (below); if no tunnel rule
// matches, by its outer key. Rules are held as a megaflow
// table (one record per rule, actions.arg = its mark) searched by a
// tuple-space classifier (flow/classifier.h).
//
// Threads and versions (RCU, as the classifier hand-over in pmd_snapshot.h):
// the control side (software_provider.h) builds a new
// RuleSet, publishes it with a release store of `current`; the callback
// acquire-loads it once per burst and, at its start (before reading
// `current`), release-stores into its queue's `seen` the version it read on
// its previous call. All packets marked under that version have then been
// handed back to the PMD and processed (the PMD polls a queue again only
// after finishing the previous burst), so control may free the version and
// reuse marks that only it contained once every queue's `seen` reached it.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "dataplane/datapath/flow/classifier.h"
#include "dataplane/datapath/flow/megaflow.h"

namespace sluice::offload {

// The engine's layer word: FlowKey::pad2, which flow-key extraction leaves
// zero and which only the engine's own classifier gives a meaning. Every rule
// masks kSwLayerTunnel (plain rules with it 0, tunnel rules with it 1), so a
// plain rule never matches the inner headers of a VXLAN frame and a tunnel
// rule never matches a plain frame. The other bits are outer-header facts of
// a VXLAN frame that a tunnel rule may require, as a NIC matches those
// fields: they are set in the frame's inner key when true.
inline constexpr uint32_t kSwLayerTunnel = 1;  // key of a VXLAN frame's inner headers
inline constexpr uint32_t kSwOuterIhl5 = 2;    // outer version_ihl == 0x45
inline constexpr uint32_t kSwOuterNoFrag = 4;  // outer MF bit and fragment offset zero
inline constexpr uint32_t kSwVxlanFlagI = 8;   // VXLAN flags byte == 0x08 (only I)
// The UDP port the engine's parser takes for VXLAN (RFC 7348's, the
// default of NICs' VXLAN parsers).
inline constexpr uint16_t kSwVxlanPort = 4789;

// Queues of one port the engine can serve (sluiced uses one per port).
inline constexpr uint16_t kSwEngineMaxQueues = 8;

// One published version of the rule set (immutable once published, except
// the classifier's PMD-side statistics).
struct SwRuleSet {
  uint64_t version = 0;
  const flow::Classifier* classifier = nullptr;
  const flow::MegaflowTable* rules = nullptr;  // rule records; actions.arg = mark
  // Tunnel rules in this version: without any, frames are not parsed past
  // their outer headers (plain offload pays nothing for tunnel support).
  uint32_t tunnel_rules = 0;
};

struct SwEngineShared {
  std::atomic<const SwRuleSet*> current{nullptr};
  struct alignas(64) QueueState {
    std::atomic<uint64_t> seen{0};   // version fully processed (see above)
    uint64_t reading = 0;            // version read on the last call (callback-private)
    // Callback-written (single writer: load+store), read by control.
    std::atomic<uint64_t> marked{0};  // packets marked
    std::atomic<uint64_t> polled{0};  // calls
    // The engine's own cost, TSC cycles around the matching of non-empty
    // bursts and their packets: what a NIC would do for free, to subtract
    // from the PMD's busy cycles when judging the mark branch.
    std::atomic<uint64_t> cycles{0};
    std::atomic<uint64_t> packets{0};
  };
  std::array<QueueState, kSwEngineMaxQueues> queues;
};

// The rte_rx_callback_fn; user_param is the SwEngineShared*.
uint16_t swEngineRxCallback(uint16_t port_id, uint16_t queue, rte_mbuf* pkts[], uint16_t nb_pkts,
                            uint16_t max_pkts, void* user_param);

// The matching itself over a burst (the callback's body, also used by the
// benchmark and tests without an ethdev): marks the packets of pkts[0, n)
// that match a rule of `rules`. Returns how many were marked.
uint16_t swEngineMarkBurst(const SwRuleSet& rules, rte_mbuf** pkts, uint16_t n);

}  // namespace sluice::offload
