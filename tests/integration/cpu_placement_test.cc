// sluiced's lcores on the CPUs it is allowed: main-core and pmd-cores are
// indexes into its affinity at start (what a kubelet's cpuset grants), and
// an index with no CPU stops it with the CPUs it has named.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dataplane/config/lcore_placement.h"
#include "tests/integration/sluiced_process.h"

namespace sluice::test {
namespace {

// The Cpus_allowed_list of the thread of `pid` named `name` ("" if none is).
std::string threadCpus(pid_t pid, const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::string comm;
    std::getline(std::ifstream(task.path() / "comm"), comm);
    if (comm != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
  }
  return "";
}

// The machine's online CPUs, 0 to n-1.
std::vector<unsigned> onlineCpus() {
  std::vector<unsigned> cpus;
  for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN); ++cpu) cpus.push_back(static_cast<unsigned>(cpu));
  return cpus;
}

TEST(CpuPlacementTest, AnIndexWithoutACpuStopsSluicedNamingTheCpusItHas) {
  const unsigned only = onlineCpus().back();
  SluicedOptions o;  // main-core 0, pmd-cores 1
  o.cpus = {only};
  std::string error;
  std::unique_ptr<SluicedProcess> node = SluicedProcess::start(o, &error);
  ASSERT_EQ(node, nullptr);
  EXPECT_NE(error.find("not starting: pmd-cores 1 names no CPU: sluiced may run on 1 CPU (" + std::to_string(only) +
                       "); main-core and pmd-cores are indexes into them, 0 to 0"),
            std::string::npos)
      << error;
}

TEST(CpuPlacementTest, ThePmdRunsOnTheCpuItsIndexNames) {
  const std::vector<unsigned> cpus = onlineCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: no PMD besides the main lcore";
  // The last two CPUs: index 0 (main) is the first of them, index 1 (PMD) the second.
  const std::vector<unsigned> granted(cpus.end() - 2, cpus.end());
  SluicedOptions o;
  o.cpus = granted;
  std::string error;
  std::unique_ptr<SluicedProcess> node = SluicedProcess::start(o, &error);
  ASSERT_NE(node, nullptr) << error;
  EXPECT_NE(node->log().find("main lcore 0 on CPU " + std::to_string(granted[0]) + ", PMD lcore 1 on CPU " +
                             std::to_string(granted[1]) + " (of CPUs " + cpuListString(granted) + ")"),
            std::string::npos)
      << node->log();
  // The EAL names its worker threads after their lcore.
  EXPECT_EQ(threadCpus(node->pid(), "rte-worker-1"), std::to_string(granted[1]));
  EXPECT_EQ(node->stop(), 0);
}

}  // namespace
}  // namespace sluice::test
