// Which CPU each of sluiced's lcores runs on. main-core and pmd-cores are
// indexes into the CPUs this process may run on (its affinity at start: the
// cpuset the kubelet's static CPU manager grants a Guaranteed pod, or every
// CPU of a node without one), not CPU numbers: the chart's one setting then
// fits every node, whichever CPUs each kubelet hands out. Lcore i runs on
// the i-th allowed CPU (the EAL's --lcores i@cpu), so lcore ids stay equal
// to the configured indexes. Main thread, before the EAL starts.
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <vector>

namespace sluice {

struct LcorePlacement {
  struct Lcore {
    unsigned lcore = 0;  // the configured index, and the EAL's lcore id
    unsigned cpu = 0;    // the CPU it runs on
  };
  Lcore main;
  std::vector<Lcore> pmds;  // in pmd-cores order
  // The EAL's --lcores value, e.g. "0@4,1@5,2@7".
  std::string ealLcores() const;
  // One line for the log, e.g. "main lcore 0 on CPU 4, PMD lcores 1 on CPU 5, 2 on CPU 7 (of CPUs 4-7)".
  std::string describe(const std::vector<unsigned>& allowed) const;
};

// Places main_core and pmd_cores (distinct: the config's validation sees to
// that) on `allowed` (ascending CPU numbers). INVALID_ARGUMENT, naming the key
// and the allowed CPUs, when an index has no CPU.
absl::StatusOr<LcorePlacement> placeLcores(const std::vector<unsigned>& allowed, unsigned main_core,
                                           const std::vector<unsigned>& pmd_cores);

// The CPUs the calling thread may run on, ascending (sched_getaffinity).
absl::StatusOr<std::vector<unsigned>> allowedCpus();

// "0-3,6,8-9": a CPU list as the kernel's cpuset files write it.
std::string cpuListString(const std::vector<unsigned>& cpus);

}  // namespace sluice
