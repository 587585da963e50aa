// The software flow engine's rx callback (see sw_engine_rx.h). PMD thread.
#include "dataplane/stand_ins/software_offload/sw_engine_rx.h"

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_udp.h>
#include <rte_vxlan.h>
#include <netinet/in.h>

#include <algorithm>

#include "dataplane/datapath/flow/flow_key.h"

namespace sluice::offload {

namespace {

// If the frame with outer key `outer` is VXLAN as the engine's parser sees
// it (see sw_engine_rx.h), its inner key with the tunnel fields and outer
// facts; false otherwise (or when the inner frame does not parse).
bool tunnelKey(const uint8_t* data, uint32_t len, const flow::FlowKey& outer, flow::FlowKey& inner) {
  if (outer.eth_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || outer.ip_proto != IPPROTO_UDP ||
      outer.tp_dst != RTE_BE16(kSwVxlanPort) || outer.ip_frag == static_cast<uint8_t>(flow::IpFrag::kLater) ||
      outer.l4_ofs == 0)
    return false;
  const uint32_t vx = outer.l4_ofs + sizeof(rte_udp_hdr);
  const uint32_t inner_ofs = vx + sizeof(rte_vxlan_hdr);
  if (inner_ofs >= len) return false;
  if (flow::extractFlowKey(data + inner_ofs, len - inner_ofs, 0, std::nullopt, inner) != flow::ParseResult::kOk)
    return false;
  const uint8_t* ip = data + outer.l3_ofs;
  uint32_t facts = kSwLayerTunnel;
  if (ip[0] == 0x45) facts |= kSwOuterIhl5;
  if ((((ip[6] << 8) | ip[7]) & 0x3fff) == 0) facts |= kSwOuterNoFrag;
  if (data[vx] == 0x08) facts |= kSwVxlanFlagI;
  inner.pad2 = facts;
  inner.tun_src = outer.ipv4_src;
  inner.tun_dst = outer.ipv4_dst;
  inner.tun_vni = (uint32_t{data[vx + 4]} << 16) | (uint32_t{data[vx + 5]} << 8) | data[vx + 6];
  return true;
}

}  // namespace

uint16_t swEngineMarkBurst(const SwRuleSet& rules, rte_mbuf** pkts, uint16_t n) {
  if (rules.classifier == nullptr || rules.classifier->size() == 0) return 0;
  uint16_t marked = 0;
  for (uint16_t base = 0; base < n; base += flow::kMaxBurst) {
    const uint16_t count = static_cast<uint16_t>(std::min<uint32_t>(n - base, flow::kMaxBurst));
    flow::FlowKey keys[flow::kMaxBurst];
    // The outer keys of VXLAN frames, for a second lookup when no tunnel
    // rule matched (tunneled[j] is the burst index of outer[j]).
    flow::FlowKey outer[flow::kMaxBurst];
    uint16_t tunneled[flow::kMaxBurst];
    uint16_t n_tunneled = 0;
    uint16_t idx[flow::kMaxBurst];
    flow::MegaflowIndex out[flow::kMaxBurst];
    uint32_t pending = 0;
    for (uint16_t i = 0; i < count; ++i) {
      const rte_mbuf* m = pkts[base + i];
      out[i] = flow::kNoMegaflow;
      const auto* data = rte_pktmbuf_mtod(m, const uint8_t*);
      const uint32_t len = rte_pktmbuf_data_len(m);
      // The in-port is not part of a rule (a rule belongs to its port).
      if (flow::extractFlowKey(data, len, 0, std::nullopt, keys[i]) != flow::ParseResult::kOk) continue;
      idx[pending++] = i;
      if (rules.tunnel_rules == 0) continue;
      flow::FlowKey& o = outer[n_tunneled];
      o = keys[i];
      if (tunnelKey(data, len, o, keys[i])) tunneled[n_tunneled++] = i;
      else keys[i] = o;
    }
    if (pending == 0) continue;
    rules.classifier->lookupBurst(keys, idx, pending, out, *rules.rules);
    // VXLAN frames no tunnel rule took: their outer headers, as plain frames.
    uint32_t again = 0;
    for (uint16_t j = 0; j < n_tunneled; ++j) {
      const uint16_t i = tunneled[j];
      if (out[i] != flow::kNoMegaflow) continue;
      keys[i] = outer[j];
      idx[again++] = i;
    }
    if (again != 0) rules.classifier->lookupBurst(keys, idx, again, out, *rules.rules);
    for (uint16_t i = 0; i < count; ++i) {
      if (out[i] == flow::kNoMegaflow) continue;
      rte_mbuf* m = pkts[base + i];
      m->hash.fdir.hi = rules.rules->at(out[i]).actions.arg;
      m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
      ++marked;
    }
  }
  return marked;
}

uint16_t swEngineRxCallback(uint16_t /*port_id*/, uint16_t queue, rte_mbuf* pkts[], uint16_t nb_pkts,
                            uint16_t /*max_pkts*/, void* user_param) {
  auto* shared = static_cast<SwEngineShared*>(user_param);
  if (queue >= kSwEngineMaxQueues) return nb_pkts;
  SwEngineShared::QueueState& q = shared->queues[queue];
  // Everything marked under the version read last time has been processed.
  if (q.seen.load(std::memory_order_relaxed) != q.reading) q.seen.store(q.reading, std::memory_order_release);
  const SwRuleSet* rules = shared->current.load(std::memory_order_acquire);
  q.reading = rules != nullptr ? rules->version : 0;
  q.polled.store(q.polled.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (nb_pkts == 0 || rules == nullptr) return nb_pkts;
  const uint64_t t0 = rte_rdtsc();
  const uint16_t marked = swEngineMarkBurst(*rules, pkts, nb_pkts);
  q.cycles.store(q.cycles.load(std::memory_order_relaxed) + (rte_rdtsc() - t0), std::memory_order_relaxed);
  q.packets.store(q.packets.load(std::memory_order_relaxed) + nb_pkts, std::memory_order_relaxed);
  if (marked != 0) q.marked.store(q.marked.load(std::memory_order_relaxed) + marked, std::memory_order_relaxed);
  return nb_pkts;
}

}  // namespace sluice::offload
