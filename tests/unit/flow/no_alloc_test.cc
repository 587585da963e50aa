// The fast-path calls never touch the heap: this binary
// replaces the global operator new with a counting one and asserts that a
// steady-state burst (extract, lookup through every tier, refills, ranking,
// the tier policy's probe and hold) allocates nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "dataplane/datapath/flow/classifier.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "tests/unit/flow/flow_test_util.h"

namespace {
// Allocations made by operator new since the process started.
thread_local uint64_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  ++g_allocations;
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) { return operator new(size, align); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& nt) noexcept { return operator new(size, nt); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace sluice::flow {
namespace {

TEST(NoAllocTest, SteadyStateBurstsDoNotAllocate) {
  MegaflowTable table(1024);
  Classifier cls;
  std::vector<testing::Frame> frames;
  for (uint32_t f = 0; f < 512; ++f) {
    // Even: hosts 10.0.1.0-199 (150 known); odd: 10.0.2.0/24, known as a net.
    const uint32_t dst = f % 2 == 0 ? 0x0a000100 + f % 200 : 0x0a000200 + f % 7;
    frames.push_back(testing::udp4(0x0a000001, dst, static_cast<uint16_t>(f), 80));
  }
  FlowMask by_dst = zeroKey();
  by_dst.eth_type = 0xffff;
  by_dst.ipv4_dst = 0xffffffffU;
  FlowMask by_net = by_dst;
  by_net.ipv4_dst = testing::be32(0xffffff00);
  by_net.tp_dst = 0xffff;
  for (uint32_t d = 0; d < 150; ++d) {  // 150 host megaflows, one /24 + port
    const FlowKey k = testing::udpKey(1, 0x0a000100 + d, 1, 80);
    ASSERT_TRUE(cls.insert(by_dst, k, *table.install(k, by_dst, {})).ok());
  }
  const FlowKey net = testing::udpKey(1, 0x0a000205, 1, 80);
  ASSERT_TRUE(cls.insert(by_net, net, *table.install(net, by_net, {})).ok());

  FlowLookupConfig cfg;
  cfg.emc = {1024, 4, 1};
  cfg.smc = {4096, true};
  cfg.policy = {true, 2, 5};  // probe and hold often within the test
  cfg.rank_interval_bursts = 3;
  cfg.smc_shadow_inv_prob = 4;
  auto fl = std::move(*FlowLookup::create(cfg, table));
  fl->setClassifier(&cls);

  PacketRef refs[32];
  FlowKey keys[32];
  MegaflowIndex out[32];
  uint16_t misses[32];
  auto burst = [&](uint32_t b) {
    for (uint32_t i = 0; i < 32; ++i) {
      const testing::Frame& f = frames[(b * 32 + i) % frames.size()];
      refs[i] = {f.data(), f.size(), 0, false};
    }
    extractFlowKeys(refs, 32, 1, keys);
    return fl->lookupBurst(keys, 32, out, misses);
  };
  burst(0);  // first use: nothing lazy is left to allocate afterwards
  const uint64_t before = g_allocations;
  uint64_t missed = 0;
  for (uint32_t b = 1; b < 200; ++b) missed += burst(b);
  EXPECT_EQ(g_allocations, before) << "the fast path allocated";
  EXPECT_GT(fl->counters().megaflow_hits, 0U);
  EXPECT_GT(missed, 0U);  // the unknown destinations: misses allocate nothing either
  EXPECT_GT(fl->policy().probeRounds(), 2U);
}

}  // namespace
}  // namespace sluice::flow
