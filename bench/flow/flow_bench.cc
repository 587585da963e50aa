// Benchmarks of the flow tiers: key extraction, EMC, SMC,
// classifier and the combined lookup, over bursts, swept by flow count
// (round-robin flows: the worst case for caches), subtable count and burst
// size. Reports items/s and cycles/packet (TSC; this machine has no PMU
// counters). Setup stays outside the timed loop. Never pass/fail anything.
#include <benchmark/benchmark.h>
#include <x86intrin.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <numeric>
#include <vector>

#include "dataplane/datapath/flow/classifier.h"
#include "dataplane/datapath/flow/emc.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/flow/megaflow.h"
#include "dataplane/datapath/flow/smc.h"
#include "bench/common/cycle_meter.h"
#include "tests/unit/flow/flow_test_util.h"

namespace sluice::flow {
namespace {

using bench::CycleMeter;

constexpr uint32_t kBurst = 32;  // DPDK's usual rx burst

// Flow f (unique per f), UDP on port 1. dsts == 0: 10.0.0.1:(f % 50000) ->
// a destination of its own (one megaflow per flow, the worst case); else
// 10.1.(f/50000).x:(f % 50000) -> one of dsts destinations (what an L3
// decision produces: megaflows per destination, many flows each).
FlowKey flowKey(uint32_t f, uint32_t dsts = 0) {
  const auto sport = static_cast<uint16_t>(1 + f % 50000);
  if (dsts == 0) {
    return testing::udpKey(0x0a000001, 0x0a000000 + (f / 50000) * 0x10000 + (f % 50000) + 1, sport, 80, 1);
  }
  return testing::udpKey(0x0a010000 + f / 50000, 0x0a000001 + f % dsts, sport, 80, 1);
}

// Keys of all flows laid out so that any window [pos, pos + 64) is
// contiguous: round-robin bursts without a modulo per packet.
struct FlowRing {
  explicit FlowRing(uint32_t flows, uint32_t dsts = 0) : n(flows) {
    const uint32_t size = flows >= kMaxBurst ? flows + kMaxBurst : kMaxBurst * 2;
    keys.resize(size);
    for (uint32_t i = 0; i < size; ++i) keys[i] = flowKey(i % flows, dsts);
  }
  const FlowKey* next(uint32_t burst) {
    const FlowKey* k = &keys[pos];
    pos = (pos + burst) % n;
    return k;
  }
  uint32_t n;
  uint32_t pos = 0;
  std::vector<FlowKey> keys;
};

// One megaflow per flow (exact on in-port, EtherType, IPv4 destination,
// source port): the L3 round-robin case, where each flow is its own megaflow.
FlowMask perFlowMask(uint32_t extra_bits = 0) {
  FlowMask m = zeroKey();
  m.in_port = 0xffff;
  m.eth_type = 0xffff;
  m.ipv4_dst = 0xffffffffU;
  m.tp_src = 0xffff;
  // Distinct masks for the subtable sweep: low bits of the (constant)
  // destination port; they never make rules overlap (ipv4_dst is exact).
  m.tp_dst = testing::be16(static_cast<uint16_t>((1U << extra_bits) - 1));
  return m;
}

void BM_Extract(benchmark::State& state) {
  const bool rss = state.range(0) != 0;
  const bool ipv6 = state.range(1) == 6;
  std::vector<testing::Frame> frames;
  for (uint32_t f = 0; f < 1024; ++f) {
    if (ipv6) {
      testing::Ip6 src{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      testing::Ip6 dst = src;
      dst[14] = static_cast<uint8_t>(f >> 8);
      dst[15] = static_cast<uint8_t>(f);
      frames.push_back(testing::udp6(src, dst, static_cast<uint16_t>(f), 80));
    } else {
      frames.push_back(testing::udp4(0x0a000001, 0x0a000100 + f, static_cast<uint16_t>(f), 80));
    }
  }
  std::vector<PacketRef> refs;
  for (uint32_t f = 0; f < 1024 + kBurst; ++f) {
    const testing::Frame& fr = frames[f % 1024];
    refs.push_back({fr.data(), fr.size(), 0x1234567U + f, rss});
  }
  FlowKey keys[kBurst];
  uint32_t pos = 0;
  uint64_t packets = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    benchmark::DoNotOptimize(extractFlowKeys(&refs[pos], kBurst, 1, keys));
    benchmark::ClobberMemory();
    pos = (pos + kBurst) % 1024;
    packets += kBurst;
  }
  meter.report(state, packets);
}
BENCHMARK(BM_Extract)->ArgNames({"rss", "ip"})->ArgsProduct({{0, 1}, {4, 6}});

// Fills a megaflow table (and classifier, if given) with one megaflow per flow.
void installPerFlow(MegaflowTable& table, Classifier* cls, uint32_t flows, uint32_t subtables) {
  for (uint32_t f = 0; f < flows; ++f) {
    const FlowMask m = perFlowMask(f % subtables);
    const FlowKey k = flowKey(f);
    const MegaflowIndex i = *table.install(k, m, {});
    if (cls != nullptr) (void)cls->insert(m, k, i);
  }
}

// Times round-robin bursts through one cache tier (Emc or Smc) already
// filled with every flow; reports its hit rate too.
template <typename Cache>
void timeCacheTier(benchmark::State& state, Cache& cache, const MegaflowTable& table, FlowRing& ring) {
  uint16_t idx[kBurst];
  MegaflowIndex out[kBurst];
  uint64_t packets = 0;
  const uint64_t hits0 = cache.stats().hits;
  const CycleMeter meter;
  for (auto _ : state) {
    std::iota(idx, idx + kBurst, uint16_t{0});
    benchmark::DoNotOptimize(cache.lookupBurst(ring.next(kBurst), idx, kBurst, out, table));
    packets += kBurst;
  }
  meter.report(state, packets);
  state.counters["hit%"] = 100.0 * static_cast<double>(cache.stats().hits - hits0) / static_cast<double>(packets);
}

void BM_EmcLookup(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  MegaflowTable table(flows);
  installPerFlow(table, nullptr, flows, 1);
  auto emc = std::move(*Emc::create({8192, 1, 1}));
  FlowRing ring(flows);
  for (uint32_t f = 0; f < flows; ++f) emc->insert(ring.keys[f], f, table.at(f).generation);
  timeCacheTier(state, *emc, table, ring);
}
BENCHMARK(BM_EmcLookup)->ArgName("flows")->Arg(1)->Arg(100)->Arg(1000)->Arg(10000)->Arg(100000);

void BM_SmcLookup(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  MegaflowTable table(flows);
  installPerFlow(table, nullptr, flows, 1);
  auto smc = std::move(*Smc::create({1U << 20, true}));
  FlowRing ring(flows);
  for (uint32_t f = 0; f < flows; ++f) smc->insert(ring.keys[f], f);
  timeCacheTier(state, *smc, table, ring);
}
BENCHMARK(BM_SmcLookup)->ArgName("flows")->Arg(1)->Arg(100)->Arg(1000)->Arg(10000)->Arg(100000);

void BM_ClassifierLookup(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  const auto subtables = static_cast<uint32_t>(state.range(1));
  MegaflowTable table(flows);
  Classifier cls;
  installPerFlow(table, &cls, flows, subtables);
  FlowRing ring(flows);
  uint16_t idx[kBurst];
  MegaflowIndex out[kBurst];
  uint64_t packets = 0;
  const ClassifierStats before = cls.stats();
  const CycleMeter meter;
  for (auto _ : state) {
    std::iota(idx, idx + kBurst, uint16_t{0});
    benchmark::DoNotOptimize(cls.lookupBurst(ring.next(kBurst), idx, kBurst, out, table));
    packets += kBurst;
  }
  meter.report(state, packets);
  const uint64_t hits = cls.stats().hits - before.hits;
  state.counters["hit%"] = 100.0 * static_cast<double>(hits) / static_cast<double>(packets);
  state.counters["subtbl/hit"] =
      hits ? static_cast<double>(cls.stats().lookups_on_hits - before.lookups_on_hits) / static_cast<double>(hits) : 0;
}
BENCHMARK(BM_ClassifierLookup)
    ->ArgNames({"flows", "subtables"})
    ->ArgsProduct({{1, 100, 1000, 10000, 100000}, {1, 2, 4, 8}});

// The whole pipeline in steady state: EMC (insert 1/inv) -> SMC -> classifier,
// caches warmed before timing. policy:1 lets the tier policy pick the tiers
// (its probes are part of the timed loop, as they would be in a PMD).
void BM_FlowLookup(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  const auto inv_prob = static_cast<uint32_t>(state.range(1));
  const auto burst = static_cast<uint32_t>(state.range(2));
  const bool smc = state.range(3) != 0;
  const auto dsts = static_cast<uint32_t>(state.range(4));
  const bool policy = state.range(5) != 0;
  const auto shadow = static_cast<uint32_t>(state.range(6));
  MegaflowTable table(dsts == 0 ? flows : dsts);
  Classifier cls;
  if (dsts == 0) {
    installPerFlow(table, &cls, flows, 1);
  } else {
    FlowMask m = zeroKey();
    m.eth_type = 0xffff;
    m.ipv4_dst = 0xffffffffU;
    for (uint32_t d = 0; d < dsts; ++d) {
      const FlowKey k = flowKey(d, dsts);
      (void)cls.insert(m, k, *table.install(k, m, {}));
    }
  }
  FlowLookupConfig cfg;
  cfg.emc = {8192, inv_prob, 1};
  cfg.smc = {1U << 20, smc};
  cfg.policy.enabled = policy;
  cfg.smc_shadow_inv_prob = shadow;
  auto fl = std::move(*FlowLookup::create(cfg, table));
  fl->setClassifier(&cls);
  FlowRing ring(flows, dsts);
  MegaflowIndex out[kMaxBurst];
  uint16_t misses[kMaxBurst];
  for (uint32_t i = 0; i < 3 * flows / burst + 300; ++i) {
    fl->lookupBurst(ring.next(burst), burst, out, misses);
  }
  const TierCounters before = fl->counters();
  uint64_t packets = 0;
  const CycleMeter meter;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fl->lookupBurst(ring.next(burst), burst, out, misses));
    packets += burst;
  }
  meter.report(state, packets);
  const TierCounters& c = fl->counters();
  const auto pct = [&](uint64_t now, uint64_t then) {
    return 100.0 * static_cast<double>(now - then) / static_cast<double>(packets);
  };
  state.counters["emc%"] = pct(c.emc_hits, before.emc_hits);
  state.counters["smc%"] = pct(c.smc_hits, before.smc_hits);
  state.counters["mf%"] = pct(c.megaflow_hits, before.megaflow_hits);
}
BENCHMARK(BM_FlowLookup)
    ->ArgNames({"flows", "emc_inv", "burst", "smc", "dsts", "policy", "shadow"})
    // one megaflow per flow; EMC always / 1 in 100 / off; SMC on; fixed tiers
    ->ArgsProduct({{1, 100, 1000, 10000, 100000, 1000000}, {1, 100, 0}, {32}, {1}, {0}, {0}, {0}})
    // the tier policy choosing, per-flow and per-destination megaflows,
    // with and without SMC refills while the SMC is off
    ->ArgsProduct({{1, 1000, 10000, 100000, 1000000}, {100}, {32}, {1}, {0, 100}, {1}, {8, 0}})
    // without SMC
    ->ArgsProduct({{1, 10000, 100000}, {100, 0}, {32}, {0}, {0}, {0}, {0}})
    // 100 destination megaflows shared by all flows
    ->ArgsProduct({{1, 1000, 10000, 100000, 1000000}, {100, 0}, {32}, {1, 0}, {100}, {0}, {0}})
    // burst size sweep
    ->ArgsProduct({{10000}, {100}, {1, 4, 16, 32, 64}, {1}, {0}, {0}, {0}});

}  // namespace
}  // namespace sluice::flow

BENCHMARK_MAIN();
