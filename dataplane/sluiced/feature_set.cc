#include "dataplane/sluiced/feature_set.h"

namespace sluice {

absl::StatusOr<FeatureSet> FeatureSet::make(const SluicedConfig& config) {
  FeatureSet set;
  for (const FeatureRegistration& f : registeredFeatures()) {
    auto made = f.make(config);
    if (!made.ok()) return made.status();
    if (*made == nullptr) continue;  // off in this configuration
    set.features_.push_back(std::move(*made));
    set.names_ += std::string(set.names_.empty() ? "" : " ") + std::string(f.name);
  }
  if (set.names_.empty()) set.names_ = "none";
  return set;
}

absl::Status FeatureSet::preparePmds(std::span<PmdContext* const> pmds) {
  for (auto& f : features_)
    if (absl::Status s = f->preparePmds(pmds); !s.ok()) return s;
  return absl::OkStatus();
}

// Every feature's control modules first, then their ports, so each module
// sees every port added.
absl::Status FeatureSet::registerModules(DataplaneControl& core) {
  for (auto& f : features_)
    if (absl::Status s = f->registerModules(core); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status FeatureSet::openPorts(DataplaneControl& core, rte_mempool* mbufs) {
  for (auto& f : features_)
    if (absl::Status s = f->openPorts(core, mbufs); !s.ok()) return s;
  return absl::OkStatus();
}

void FeatureSet::start() {
  for (auto& f : features_) f->start();
}

FeatureApi FeatureSet::api() {
  FeatureApi api;
  for (auto& f : features_) {
    if (ServiceExtension* e = f->extension()) api.extensions.push_back(e);
    if (grpc::Service* s = f->service()) api.services.push_back(s);
    f->forwardDeprecated(api.forwards);
  }
  return api;
}

void FeatureSet::stopBeforePmds() {
  for (auto& f : features_) f->stopBeforePmds();
}

void FeatureSet::closeAfterPmds() {
  for (auto& f : features_) f->closeAfterPmds();
}

}  // namespace sluice
