// The registry of PF control implementations (pf_control_registry.h).
#include "dataplane/modules/sriov/pf_control_registry.h"

#include <vector>

#include "dataplane/config/provider_names.h"

namespace sluice::sriov {
namespace {

// A function-local static: registrations from other translation units may
// run before any namespace-scope object of this one is constructed.
std::vector<PfControlProvider>& pfControls() {
  static std::vector<PfControlProvider> providers;
  return providers;
}

}  // namespace

bool registerPfControl(std::string_view name, PfControlFactory make, const char* warning) {
  // Aborts on a name registered twice.
  registerProviderName(kPfControlKey, name, warning ? ProviderKind::kStandIn : ProviderKind::kReal);
  pfControls().push_back({name, make, warning});
  return true;
}

const PfControlProvider* findPfControl(std::string_view name) {
  for (const PfControlProvider& p : pfControls())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace sluice::sriov
