#include "dataplane/config/lcore_placement.h"

#include <absl/strings/str_cat.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

namespace sluice {

std::string LcorePlacement::ealLcores() const {
  std::string s = absl::StrCat(main.lcore, "@", main.cpu);
  for (const Lcore& p : pmds) absl::StrAppend(&s, ",", p.lcore, "@", p.cpu);
  return s;
}

std::string LcorePlacement::describe(const std::vector<unsigned>& allowed) const {
  std::string s = absl::StrCat("main lcore ", main.lcore, " on CPU ", main.cpu, ", PMD lcore", pmds.size() == 1 ? "" : "s");
  const char* sep = " ";
  for (const Lcore& p : pmds) {
    absl::StrAppend(&s, sep, p.lcore, " on CPU ", p.cpu);
    sep = ", ";
  }
  absl::StrAppend(&s, " (of CPUs ", cpuListString(allowed), ")");
  return s;
}

std::string cpuListString(const std::vector<unsigned>& cpus) {
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    absl::StrAppend(&s, s.empty() ? "" : ",", cpus[i]);
    if (j > i) absl::StrAppend(&s, "-", cpus[j]);
    i = j + 1;
  }
  return s;
}

absl::StatusOr<LcorePlacement> placeLcores(const std::vector<unsigned>& allowed, unsigned main_core,
                                           const std::vector<unsigned>& pmd_cores) {
  if (allowed.empty()) return absl::InvalidArgumentError("sluiced may run on no CPU");
  const std::string where =
      absl::StrCat(": sluiced may run on ", allowed.size(), " CPU", allowed.size() == 1 ? "" : "s", " (",
                   cpuListString(allowed), "); main-core and pmd-cores are indexes into them, 0 to ",
                   allowed.size() - 1);
  auto place = [&](const char* key, unsigned index) -> absl::StatusOr<LcorePlacement::Lcore> {
    if (index >= allowed.size())
      return absl::InvalidArgumentError(absl::StrCat(key, " ", index, " names no CPU", where));
    return LcorePlacement::Lcore{index, allowed[index]};
  };
  LcorePlacement p;
  absl::StatusOr<LcorePlacement::Lcore> main = place("main-core", main_core);
  if (!main.ok()) return main.status();
  p.main = *main;
  for (unsigned index : pmd_cores) {
    absl::StatusOr<LcorePlacement::Lcore> pmd = place("pmd-cores", index);
    if (!pmd.ok()) return pmd.status();
    p.pmds.push_back(*pmd);
  }
  return p;
}

absl::StatusOr<std::vector<unsigned>> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0)
    return absl::InternalError(absl::StrCat("sched_getaffinity: ", std::strerror(errno)));
  std::vector<unsigned> cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace sluice
