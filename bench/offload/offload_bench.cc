// Partial offload (issue 6): what resolving a packet costs with a NIC mark
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
#include "dataplane/control/offload/match_translate.h"
#include "dataplane/control/offload/software_provider.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/offload/mark_branch.h"
#include "dataplane/datapath/offload/sw_engine_rx.h"
#include "tests/unit/flow/frame_builder.h"
#include "tests/unit/offload/offload_test_util.h"

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

__attribute__((noinline)) uint16_t resolveMarkedBurst(const MarkTable& marks, flow::MegaflowTable& table,
                                                      rte_mbuf** w, rte_mbuf** hit_pkts, flow::Megaflow** hit_flows) {
  return splitMarked(marks, table, 0, w, kBurst, hit_pkts, hit_flows).hits;
}

void BM_ResolveUnmarked(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  Flows flows(n);
  flow::Classifier cls;
  for (uint32_t f = 0; f < n; ++f) {
    const flow::Megaflow& m = flows.table.at(flows.index[f]);
    (void)cls.insert(m.mask, m.key, flows.index[f]);
  }
  flow::FlowLookupConfig cfg;
  cfg.emc = {16384, 1, 7};  // every flow fits and is inserted: EMC hits
  auto lookup = std::move(*flow::FlowLookup::create(cfg, flows.table));
  lookup->setClassifier(&cls);
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
  const SwRuleSet& rules = *engine.shared().current.load();
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
BENCHMARK(BM_SwEngineMark)->ArgName("flows")->Arg(1)->Arg(100)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace sluice::offload

BENCHMARK_MAIN();
