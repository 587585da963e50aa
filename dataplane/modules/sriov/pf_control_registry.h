// The ways sluiced can program a PF, by the name configuration key
// `sriov-pf-control` gives them: each implementation of PfControl registers
// itself in its own folder,
//
//   SLUICE_REGISTER_PF_CONTROL(netlink, makeNetlinkPfControl);
//   SLUICE_REGISTER_PF_CONTROL_STAND_IN(fake, makeFakePfControl, "*** ... ***");
//
// and the SR-IOV feature looks the configured name up, so the module never
// names a stand-in. A stand-in's warning is logged when it is chosen. The
// registering library must be linked whole (sluice_register_provider in
// dataplane/CMakeLists.txt) so the linker keeps the initialiser. Registered
// before main; looked up from the main thread.
#pragma once

#include <memory>
#include <string_view>

#include "dataplane/modules/sriov/pf_control.h"

namespace sluice::sriov {

// The configuration key whose value names the implementation.
inline constexpr std::string_view kPfControlKey = "sriov-pf-control";

using PfControlFactory = std::unique_ptr<PfControl> (*)();

struct PfControlProvider {
  std::string_view name;
  PfControlFactory make;
  const char* warning;  // logged when chosen; null for a real implementation
};

bool registerPfControl(std::string_view name, PfControlFactory make, const char* warning);
// Null when no implementation has that name.
const PfControlProvider* findPfControl(std::string_view name);

}  // namespace sluice::sriov

#define SLUICE_REGISTER_PF_CONTROL(name, factory)                                 \
  [[maybe_unused]] static const bool sluice_registered_pf_control_##name = \
      ::sluice::sriov::registerPfControl(#name, factory, nullptr)
#define SLUICE_REGISTER_PF_CONTROL_STAND_IN(name, factory, warning)               \
  [[maybe_unused]] static const bool sluice_registered_pf_control_##name = \
      ::sluice::sriov::registerPfControl(#name, factory, warning)
