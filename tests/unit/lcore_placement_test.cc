// main-core and pmd-cores as indexes into the CPUs sluiced may run on.
#include "dataplane/config/lcore_placement.h"

#include <gtest/gtest.h>
#include <sched.h>

namespace sluice {
namespace {

TEST(LcorePlacementTest, IndexesPickTheGrantedCpusInOrder) {
  // A kubelet's static CPU manager granted CPUs 4, 5 and 7.
  absl::StatusOr<LcorePlacement> p = placeLcores({4, 5, 7}, 0, {2, 1});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->main.lcore, 0u);
  EXPECT_EQ(p->main.cpu, 4u);
  ASSERT_EQ(p->pmds.size(), 2u);
  EXPECT_EQ(p->pmds[0].lcore, 2u);
  EXPECT_EQ(p->pmds[0].cpu, 7u);
  EXPECT_EQ(p->pmds[1].lcore, 1u);
  EXPECT_EQ(p->pmds[1].cpu, 5u);
  EXPECT_EQ(p->ealLcores(), "0@4,2@7,1@5");
  EXPECT_EQ(p->describe({4, 5, 7}), "main lcore 0 on CPU 4, PMD lcores 2 on CPU 7, 1 on CPU 5 (of CPUs 4-5,7)");
}

TEST(LcorePlacementTest, AWholeMachineKeepsLcoreEqualToCpu) {
  absl::StatusOr<LcorePlacement> p = placeLcores({0, 1}, 0, {1});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ealLcores(), "0@0,1@1");
  EXPECT_EQ(p->describe({0, 1}), "main lcore 0 on CPU 0, PMD lcore 1 on CPU 1 (of CPUs 0-1)");
}

TEST(LcorePlacementTest, AnIndexWithoutACpuIsRefusedNamingTheSet) {
  absl::StatusOr<LcorePlacement> p = placeLcores({2, 3}, 0, {1, 2});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "pmd-cores 2 names no CPU: sluiced may run on 2 CPUs (2-3); main-core and pmd-cores are indexes into "
            "them, 0 to 1");
  p = placeLcores({6}, 1, {0});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "main-core 1 names no CPU: sluiced may run on 1 CPU (6); main-core and pmd-cores are indexes into "
            "them, 0 to 0");
  EXPECT_EQ(placeLcores({}, 0, {1}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LcorePlacementTest, CpuListsAreWrittenAsTheKernelWritesThem) {
  EXPECT_EQ(cpuListString({}), "");
  EXPECT_EQ(cpuListString({3}), "3");
  EXPECT_EQ(cpuListString({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
}

TEST(LcorePlacementTest, AllowedCpusAreThisThreadsAffinity) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu)
    if (CPU_ISSET(cpu, &saved)) first = cpu;
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  absl::StatusOr<std::vector<unsigned>> cpus = allowedCpus();
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(*cpus, std::vector<unsigned>{static_cast<unsigned>(first)});
}

}  // namespace
}  // namespace sluice
