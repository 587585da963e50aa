// The feature registry (dataplane/api/feature.h): what sluiced walks at
// start. This binary links no feature, so the registry holds exactly what
// the test registers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dataplane/api/feature.h"

namespace sluice {
namespace {

class NamedFeature final : public Feature {};

absl::StatusOr<std::unique_ptr<Feature>> makeNamed(const SluicedConfig&) { return std::make_unique<NamedFeature>(); }
absl::StatusOr<std::unique_ptr<Feature>> makeOff(const SluicedConfig&) { return nullptr; }

// Registered the way a feature's folder does it, in an order that is not
// the names' order.
SLUICE_REGISTER_FEATURE(zulu, makeNamed);
SLUICE_REGISTER_FEATURE(alpha, makeOff);
SLUICE_REGISTER_FEATURE(mike, makeNamed);

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const FeatureRegistration& f : registeredFeatures()) out.emplace_back(f.name);
  return out;
}

TEST(FeatureRegistryTest, FeaturesRegisteredAtStaticInitialisationAreListedInNameOrder) {
  EXPECT_EQ(names(), (std::vector<std::string>{"alpha", "mike", "zulu"}));
  std::vector<FeatureRegistration> features = registeredFeatures();
  ASSERT_EQ(features.size(), 3u);
  EXPECT_EQ(features[0].make, &makeOff);
  EXPECT_EQ(features[1].make, &makeNamed);
}

TEST(FeatureRegistryDeathTest, ANameRegisteredTwiceStopsTheProgramWithTheName) {
  EXPECT_DEATH(registerFeature("mike", makeNamed), "feature \"mike\" registered twice");
  EXPECT_EQ(names(), (std::vector<std::string>{"alpha", "mike", "zulu"}));
}

}  // namespace
}  // namespace sluice
