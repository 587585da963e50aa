// The registry of features (feature.h): filled during static
// initialisation, before main, by each feature's SLUICE_REGISTER_FEATURE.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "dataplane/api/feature.h"

namespace sluice {
namespace {

// A function-local static: registrations from other translation units may
// run before any namespace-scope object of this one is constructed.
std::vector<FeatureRegistration>& registry() {
  static std::vector<FeatureRegistration> features;
  return features;
}

}  // namespace

bool registerFeature(std::string_view name, FeatureFactory make) {
  auto& features = registry();
  const bool taken = std::any_of(features.begin(), features.end(),
                                 [&](const FeatureRegistration& f) { return f.name == name; });
  if (taken) {
    // Two features by one name is a build mistake; nothing can log yet.
    std::fprintf(stderr, "sluiced: feature \"%.*s\" registered twice\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  features.push_back({name, make});
  return true;
}

std::vector<FeatureRegistration> registeredFeatures() {
  std::vector<FeatureRegistration> sorted = registry();
  std::sort(sorted.begin(), sorted.end(),
            [](const FeatureRegistration& a, const FeatureRegistration& b) { return a.name < b.name; });
  return sorted;
}

}  // namespace sluice
