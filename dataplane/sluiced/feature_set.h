// The features linked into this sluiced (dataplane/api/feature.h), made from
// the configuration before anything starts, and walked together through
// each of their phases: every feature through one phase before any enters
// the next. Main thread only.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dataplane/api/deprecated_forwards.h"
#include "dataplane/api/feature.h"
#include "dataplane/api/service_extension.h"
#include "dataplane/config/config.h"

struct rte_mempool;

namespace sluice {

class DataplaneControl;
struct PmdContext;

// What the features add to the API: their own services, their parts of the
// core's answers, and the deprecated core calls they serve.
struct FeatureApi {
  std::vector<grpc::Service*> services;
  std::vector<ServiceExtension*> extensions;
  DeprecatedForwards forwards;
};

class FeatureSet {
 public:
  // Every registered feature this configuration turns on, in name order. A
  // feature that cannot be made (e.g. a configured SR-IOV pool that is not
  // there) is the error, with its reason.
  static absl::StatusOr<FeatureSet> make(const SluicedConfig& config);

  // The features' names, space-separated ("none" when there are none).
  const std::string& names() const { return names_; }

  // The phases, in feature.h's order; the first error stops the walk.
  absl::Status preparePmds(std::span<PmdContext* const> pmds);
  absl::Status registerModules(DataplaneControl& core);
  absl::Status openPorts(DataplaneControl& core, rte_mempool* mbufs);
  void start();
  FeatureApi api();
  void stopBeforePmds();
  void closeAfterPmds();

 private:
  FeatureSet() = default;

  std::vector<std::unique_ptr<Feature>> features_;  // in name order
  std::string names_;
};

}  // namespace sluice
