#include "dataplane/modules/sriov/cli/vf_format.h"

#include <cstdio>

namespace sluice {

std::string formatVfs(const v1::ListVfsResponse& r) {
  std::string out = "  PF               VF  PCI           NETDEV           HOLDER\n";
  for (const v1::Vf& vf : r.vfs()) {
    const std::string holder =
        vf.in_use() ? vf.attachment().container_id() + "/" + vf.attachment().ifname() : std::string("(free)");
    char line[160];
    std::snprintf(line, sizeof line, "  %-15s %3u  %-12s  %-15s  %s\n", vf.pf().c_str(), vf.vf_index(),
                  vf.pci_address().c_str(), vf.netdev().empty() ? "-" : vf.netdev().c_str(), holder.c_str());
    out += line;
  }
  if (r.vfs().empty()) out += "  (no SR-IOV pools)\n";
  return out;
}

}  // namespace sluice
