// Partial offload: what resolving a packet costs with a NIC mark
// versus without one, at N round-robin flows, one megaflow per flow (the L3
// decision's mask: EtherType, TTL class, IPv4 destination).
//   BM_ResolveUnmarked  what the PMD does for an unmarked packet before its
//                       actions: flow-key extraction (no RSS hash: vhost
//                       ports have none) and the cache lookup (EMC with
//                       every miss inserted, then SMC / classifier as the
//                       tier policy chooses; counters say which tier hit);
//   BM_ResolveMarked    the mark branch's decision (mark_branch.h): FDIR
//                       flag, mark -> megaflow, alive + generation check,
//                       the IPv4 check the L3 rewrite needs;
//   BM_SwEngineMark     the software flow engine's own work per packet (the
//                       rx callback's body): the cost a NIC would carry,
//                       to subtract from node-level measurements with the
//                       software engine.
//   BM_DecapUnmarked    the same for VXLAN from the uplink: the uplink stage
//                       (classify, pop, trim, tunnel rx counters), key
//                       extraction of the inner frame, tunnel metadata, the
//                       cache lookup (decap megaflows: tun_src, tun_vni,
//                       EtherType, TTL class, inner IPv4 destination);
//   BM_DecapMarked      the decap mark branch: mark -> megaflow checks, the
//                       outer-header guard, pop and trim, tunnel rx counters;
//   BM_SwEngineMarkDecap the engine matching tunnel rules (outer + inner).
// Decap pops the mbufs in place: both decap paths restore each packet's
// data offset and lengths before the burst (the same stores on both).
// Actions (rewrite, batching, tx) are the same on both paths and left out.
// Plain-memory mbufs, no EAL. Reports cycles/packet (thread CPU time in TSC
// cycles, "cyc/pkt"); compare within one run only (shared, noisy machine).
#include <benchmark/benchmark.h>
#include <x86intrin.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <vector>

#include "bench/common/cycle_meter.h"
#include "dataplane/modules/offload/match_translate.h"
#include "dataplane/stand_ins/software_offload/software_provider.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/mark_branch.h"
#include "dataplane/stand_ins/software_offload/sw_engine_rx.h"
#include "dataplane/datapath/overlay/uplink_stage.h"
#include "tests/unit/flow/frame_builder.h"
#include "tests/unit/offload/offload_test_util.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice::offload {
namespace {

constexpr uint16_t kBurst = 32;

using bench::CycleMeter;

uint32_t dstOf(uint32_t f) { return 0x0a000000 + 0x100 + f; }  // 10.0.1.0 + f, host order

// N flows: their frames (as mbufs) and one megaflow each in a table, the
// mbufs laid out so that any window [pos, pos + kBurst) is contiguous.
struct Flows {
  explicit Flows(uint32_t n) : count(n), table(n + 1) {
    for (uint32_t f = 0; f < n; ++f) {
      frames.push_back(std::make_unique<testing::FakeMbuf>(
          flow::testing::udp4(0x0a000001, dstOf(f), static_cast<uint16_t>(1000 + f), 80).bytes()));
      flow::MegaflowActions a;
      a.kind = flow::MegaflowActions::Kind::kOutput;
      a.rewrite_flags = kRewriteL3;
      a.out_port = 1;
      auto i = table.install(testing::l3Key(__builtin_bswap32(dstOf(f))), testing::l3Mask(), a);
      index.push_back(*i);
    }
    for (uint32_t i = 0; i < n + kBurst; ++i) ring.push_back(frames[i % n]->mbuf());
  }
  rte_mbuf** window(uint32_t* pos) {
    rte_mbuf** w = &ring[*pos];
    *pos = (*pos + kBurst) % count;
    return w;
  }
  uint32_t count;
  flow::MegaflowTable table;
  std::vector<std::unique_ptr<testing::FakeMbuf>> frames;
  std::vector<flow::MegaflowIndex> index;
  std::vector<rte_mbuf*> ring;
};

// One burst of each path in a function of its own (not inlined), so that
// `valgrind --tool=callgrind --toggle-collect=...` counts exactly its
// instructions: a noise-free figure on this shared machine (see the README).
__attribute__((noinline)) uint32_t resolveUnmarkedBurst(rte_mbuf** w, flow::PacketRef* refs, flow::FlowKey* keys,
                                                        flow::FlowLookup& lookup, flow::MegaflowIndex* out,
                                                        uint16_t* misses) {
  for (uint16_t i = 0; i < kBurst; ++i)
    refs[i] = {rte_pktmbuf_mtod(w[i], const uint8_t*), rte_pktmbuf_data_len(w[i]), 0, false};
  flow::extractFlowKeys(refs, kBurst, 0, keys);
  return lookup.lookupBurst(keys, kBurst, out, misses);
}

// The unmarked path's lookup over the flows' megaflows: a classifier holding
// them all and an EMC big enough for every flow (so the unmarked side hits
// the EMC: its cheapest tier).
struct UnmarkedLookup {
  UnmarkedLookup(flow::MegaflowTable& table, const std::vector<flow::MegaflowIndex>& index) {
    for (flow::MegaflowIndex i : index) {
      const flow::Megaflow& m = table.at(i);
      (void)classifier.insert(m.mask, m.key, i);
    }
    flow::FlowLookupConfig cfg;
    cfg.emc = {16384, 1, 7};
    lookup = std::move(*flow::FlowLookup::create(cfg, table));
    lookup->setClassifier(&classifier);
  }
  flow::Classifier classifier;
  std::unique_ptr<flow::FlowLookup> lookup;
};

__attribute__((noinline)) uint16_t resolveMarkedBurst(const MarkTable& marks, flow::MegaflowTable& table,
                                                      rte_mbuf** w, rte_mbuf** hit_pkts, flow::Megaflow** hit_flows) {
  return splitMarked(marks, table, 0, w, kBurst, hit_pkts, hit_flows).hits;
}

void BM_ResolveUnmarked(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  Flows flows(n);
  UnmarkedLookup unmarked(flows.table, flows.index);
  flow::FlowLookup* lookup = unmarked.lookup.get();
  flow::FlowKey keys[kBurst];
  flow::PacketRef refs[kBurst];
  flow::MegaflowIndex out[kBurst];
  uint16_t misses[kBurst];
  uint32_t pos = 0;
  auto burst = [&] { return resolveUnmarkedBurst(flows.window(&pos), refs, keys, *lookup, out, misses); };
  for (uint32_t i = 0; i < 4 * n / kBurst + 64; ++i) burst();  // warm the caches
  const flow::TierCounters before = lookup->counters();
  uint64_t packets = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    benchmark::DoNotOptimize(burst());
    benchmark::DoNotOptimize(out);
    packets += kBurst;
  }
  meter.report(state, packets);
  const flow::TierCounters& after = lookup->counters();
  state.counters["emc_hit%"] = 100.0 * static_cast<double>(after.emc_hits - before.emc_hits) / static_cast<double>(packets);
}
BENCHMARK(BM_ResolveUnmarked)->ArgName("flows")->Arg(1)->Arg(100)->Arg(1000)->Arg(10000);

void BM_ResolveMarked(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  Flows flows(n);
  MarkTable marks(n);
  for (uint32_t f = 0; f < n; ++f) {
    marks.set(f, {0, flows.index[f], 0});
    rte_mbuf* m = flows.frames[f]->mbuf();
    m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
    m->hash.fdir.hi = f;
  }
  rte_mbuf* hit_pkts[kBurst];
  flow::Megaflow* hit_flows[kBurst];
  uint32_t pos = 0;
  uint64_t packets = 0, resolved = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    resolved += resolveMarkedBurst(marks, flows.table, flows.window(&pos), hit_pkts, hit_flows);
    benchmark::DoNotOptimize(hit_flows);
    packets += kBurst;
  }
  meter.report(state, packets);
  state.counters["hit%"] = 100.0 * static_cast<double>(resolved) / static_cast<double>(packets);
}
BENCHMARK(BM_ResolveMarked)->ArgName("flows")->Arg(1)->Arg(100)->Arg(1000)->Arg(10000);

// Times the software engine marking bursts of the flows' packets, as its rx
// callback would.
template <typename FlowSet>
void timeEngine(benchmark::State& state, const SwRuleSet& rules, FlowSet& flows) {
  uint32_t pos = 0;
  uint64_t packets = 0, marked = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    marked += swEngineMarkBurst(rules, flows.window(&pos), kBurst);
    packets += kBurst;
  }
  meter.report(state, packets);
  state.counters["marked%"] = 100.0 * static_cast<double>(marked) / static_cast<double>(packets);
}

void BM_SwEngineMark(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  Flows flows(n);
  SoftwareProvider engine(n + 1);
  (void)engine.probe(0, 0);  // zero queues: no callback, the burst function is called directly
  for (uint32_t f = 0; f < n; ++f) {
    MatchTranslation t = translateMatch(testing::l3Key(__builtin_bswap32(dstOf(f))), testing::l3Mask(), 0,
                                        engine.caps());
    (void)engine.create(0, t.pattern, f);
  }
  (void)engine.sync();
  timeEngine(state, *engine.shared().current.load(), flows);
}
BENCHMARK(BM_SwEngineMark)->ArgName("flows")->Arg(1)->Arg(100)->Arg(1000)->Arg(10000);

// VXLAN from one remote VTEP (192.168.77.2 -> our 192.168.77.1, VNI 42) to
// N inner destinations, one decap megaflow each, and the overlay state the
// uplink stage reads.
constexpr uint32_t kRemoteVtep = 0xc0a84d02, kOurVtep = 0xc0a84d01, kVni = 42;  // host order

struct DecapFlows {
  // At least a burst of distinct mbufs (the pop changes them in place); the
  // mbuf i carries flow i % n.
  explicit DecapFlows(uint32_t n) : count(n < kBurst ? kBurst : n), table(n + 1) {
    test::OuterSpec o;
    o.vni = kVni;
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t f = i % n;
      const auto inner = flow::testing::udp4(0x0a000001, dstOf(f), static_cast<uint16_t>(1000 + f), 80).bytes();
      frames.push_back(std::make_unique<testing::FakeMbuf>(test::vxlanFrame(inner, o)));
    }
    for (uint32_t f = 0; f < n; ++f) {
      flow::MegaflowActions a;
      a.kind = flow::MegaflowActions::Kind::kOutput;
      a.rewrite_flags = kRewriteL3;
      a.out_port = 1;
      flow::FlowKey k = testing::l3Key(__builtin_bswap32(dstOf(f)));
      flow::FlowMask m = testing::l3Mask();
      k.tun_src = __builtin_bswap32(kRemoteVtep);
      m.tun_src = 0xffffffffU;
      k.tun_vni = kVni;
      m.tun_vni = 0xffffffffU;
      index.push_back(*table.install(k, m, a));
    }
    for (uint32_t i = 0; i < count + kBurst; ++i) ring.push_back(frames[i % count]->mbuf());
    frame_len = frames[0]->mbuf()->data_len;
    vxlan::OverlayTables::Tunnel t;
    t.vtep_be = __builtin_bswap32(kRemoteVtep);
    t.tmpl.tunnel = 0;
    overlay.enabled = true;
    overlay.uplink_port = 31;
    overlay.decap.vtep_ip_be = __builtin_bswap32(kOurVtep);
    overlay.decap.vni = kVni;
    overlay.tables = std::make_shared<vxlan::OverlayTables>(std::vector<vxlan::OverlayTables::Tunnel>{t},
                                                            std::vector<vxlan::RemoteRoute>{});
    overlay.counters = counters.get();
  }
  // The next burst, every packet as received (outer headers in place).
  rte_mbuf** window(uint32_t* pos) {
    rte_mbuf** w = &ring[*pos];
    *pos = (*pos + kBurst) % count;
    for (uint16_t i = 0; i < kBurst; ++i) {
      w[i]->data_off = 0;
      w[i]->data_len = frame_len;
      w[i]->pkt_len = frame_len;
    }
    return w;
  }
  uint32_t count;  // mbufs
  flow::MegaflowTable table;
  std::vector<std::unique_ptr<testing::FakeMbuf>> frames;
  std::vector<flow::MegaflowIndex> index;  // by flow
  std::vector<rte_mbuf*> ring;
  uint16_t frame_len = 0;
  std::unique_ptr<vxlan::OverlayCounters> counters = std::make_unique<vxlan::OverlayCounters>();
  vxlan::OverlaySnapshot overlay;
};

__attribute__((noinline)) uint32_t resolveDecapUnmarkedBurst(const vxlan::OverlaySnapshot& ov, rte_mbuf** w,
                                                             vxlan::TunnelMeta* meta, vxlan::UplinkRxOut& rx_out,
                                                             flow::PacketRef* refs, flow::FlowKey* keys,
                                                             flow::FlowLookup& lookup, flow::MegaflowIndex* out,
                                                             uint16_t* misses) {
  const uint16_t n = vxlan::uplinkRxBurst(ov, w, kBurst, meta, rx_out);
  for (uint16_t i = 0; i < n; ++i)
    refs[i] = {rte_pktmbuf_mtod(w[i], const uint8_t*), rte_pktmbuf_data_len(w[i]), 0, false};
  // As the PMD does: one key per run of packets with one key and tunnel.
  flow::PacketRun runs[kBurst];
  const uint32_t n_runs = flow::extractFlowKeyRuns(refs, n, 0, vxlan::tunnelChanges(meta, n), keys, runs);
  vxlan::applyTunnelMeta(meta, runs, static_cast<uint16_t>(n_runs), keys);
  return lookup.lookupBurst(keys, n_runs, out, misses);
}

__attribute__((noinline)) uint16_t resolveDecapMarkedBurst(const vxlan::OverlaySnapshot& ov, const MarkTable& marks,
                                                           flow::MegaflowTable& table, rte_mbuf** w,
                                                           rte_mbuf** hit_pkts, flow::Megaflow** hit_flows,
                                                           DecapHit* hits) {
  const MarkSplit s = splitMarkedDecap(marks, table, 0, w, kBurst, hit_pkts, hit_flows, hits);
  // The tunnel rx counters, as Pmd::takeMarked counts them.
  for (uint16_t i = 0; i < s.hits; ++i) {
    if (const uint16_t t = ov.tables->tunnelForVtep(hits[i].outer_src_be); t != vxlan::kNoTunnel) {
      ov.counters->tunnels[t].rx_packets.inc();
      ov.counters->tunnels[t].rx_bytes.add(hits[i].inner_len);
    }
  }
  return s.hits;
}

void BM_DecapUnmarked(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  DecapFlows flows(n);
  UnmarkedLookup unmarked(flows.table, flows.index);
  flow::FlowLookup* lookup = unmarked.lookup.get();
  vxlan::TunnelMeta meta[kBurst];
  vxlan::UplinkRxOut rx_out;
  flow::FlowKey keys[kBurst];
  flow::PacketRef refs[kBurst];
  flow::MegaflowIndex out[kBurst];
  uint16_t misses[kBurst];
  uint32_t pos = 0;
  auto burst = [&] {
    return resolveDecapUnmarkedBurst(flows.overlay, flows.window(&pos), meta, rx_out, refs, keys, *lookup, out, misses);
  };
  for (uint32_t i = 0; i < 4 * n / kBurst + 64; ++i) burst();  // warm the caches
  const flow::TierCounters before = lookup->counters();
  uint64_t packets = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    benchmark::DoNotOptimize(burst());
    benchmark::DoNotOptimize(out);
    packets += kBurst;
  }
  meter.report(state, packets);
  const flow::TierCounters& after = lookup->counters();
  state.counters["emc_hit%"] = 100.0 * static_cast<double>(after.emc_hits - before.emc_hits) / static_cast<double>(packets);
}
BENCHMARK(BM_DecapUnmarked)->ArgName("flows")->Arg(1)->Arg(1000)->Arg(10000);

void BM_DecapMarked(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  DecapFlows flows(n);
  MarkTable marks(n);
  for (uint32_t f = 0; f < n; ++f) marks.set(f, {0, flows.index[f], 0});
  for (uint32_t i = 0; i < flows.count; ++i) {
    rte_mbuf* m = flows.frames[i]->mbuf();
    m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
    m->hash.fdir.hi = i % n;
  }
  rte_mbuf* hit_pkts[kBurst];
  flow::Megaflow* hit_flows[kBurst];
  DecapHit hits[kBurst];
  uint32_t pos = 0;
  uint64_t packets = 0, resolved = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    resolved += resolveDecapMarkedBurst(flows.overlay, marks, flows.table, flows.window(&pos), hit_pkts, hit_flows, hits);
    benchmark::DoNotOptimize(hit_flows);
    packets += kBurst;
  }
  meter.report(state, packets);
  state.counters["hit%"] = 100.0 * static_cast<double>(resolved) / static_cast<double>(packets);
}
BENCHMARK(BM_DecapMarked)->ArgName("flows")->Arg(1)->Arg(1000)->Arg(10000);

void BM_SwEngineMarkDecap(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  DecapFlows flows(n);
  SoftwareProvider engine(n + 1);
  (void)engine.probe(0, 0);
  for (uint32_t f = 0; f < n; ++f) {
    flow::Megaflow& m = flows.table.at(flows.index[f]);
    flow::FlowKey k = m.key;
    k.tun_dst = __builtin_bswap32(kOurVtep);  // as the offload manager keeps it
    MatchTranslation t = translateMatch(k, m.mask, 0, engine.caps());
    (void)engine.create(0, t.pattern, f);
  }
  (void)engine.sync();
  timeEngine(state, *engine.shared().current.load(), flows);
}
BENCHMARK(BM_SwEngineMarkDecap)->ArgName("flows")->Arg(1)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace sluice::offload

BENCHMARK_MAIN();
