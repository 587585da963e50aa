// The text of `sluicectl vfs`: the SR-IOV pools' VFs as a table. The CLI's
// thread.
#pragma once

#include <string>

#include "sluice/v1/sriov.pb.h"

namespace sluice {

// One line per VF (PF, index, PCI address, netdev, holder), under a header;
// "(no SR-IOV pools)" when there are none.
std::string formatVfs(const v1::ListVfsResponse& r);

}  // namespace sluice
