// The registry of offload providers (offload_provider_registry.h).
#include "dataplane/modules/offload/offload_provider_registry.h"

#include <vector>

#include "dataplane/config/provider_names.h"

namespace sluice::offload {
namespace {

// A function-local static: registrations from other translation units may
// run before any namespace-scope object of this one is constructed.
std::vector<OffloadProviderRegistration>& offloadProviders() {
  static std::vector<OffloadProviderRegistration> providers;
  return providers;
}

}  // namespace

bool registerOffloadProvider(std::string_view name, OffloadProviderFactory make, const char* warning) {
  // Aborts on a name registered twice.
  registerProviderName(kOffloadProviderKey, name, warning ? ProviderKind::kStandIn : ProviderKind::kReal);
  offloadProviders().push_back({name, make, warning});
  return true;
}

const OffloadProviderRegistration* findOffloadProvider(std::string_view name) {
  for (const OffloadProviderRegistration& p : offloadProviders())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace sluice::offload
