// A feature of sluiced (the VXLAN overlay, SR-IOV VFs, partial offload, and
// those after them) as the daemon runs it: made from the configuration,
// given its part of the PMDs, attached to the control core, started, served
// on the API, stopped. Each feature registers itself, in its own folder:
//
//   SLUICE_REGISTER_FEATURE(overlay, makeOverlayFeature);
//
// and sluiced walks the registry (in name order) through the phases below,
// every feature through one phase before any enters the next, so no feature
// depends on its place in the list: e.g. every feature's control modules
// are registered before any feature opens a port, so all of them see it.
// Main thread only.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "dataplane/api/deprecated_forwards.h"
#include "dataplane/api/service_extension.h"

struct rte_mempool;

namespace sluice {

class DataplaneControl;
struct PmdContext;
struct SluicedConfig;

class Feature {
 public:
  virtual ~Feature() = default;

  // Start, in this order.
  // 1. Before any PMD is made: what the PMDs read of the feature (e.g. the
  //    offload's mark table).
  virtual absl::Status preparePmds(std::span<PmdContext* const> pmds) {
    (void)pmds;
    return absl::OkStatus();
  }
  // 2. The control core exists and has not started: register the feature's
  //    control modules with it.
  virtual absl::Status registerModules(DataplaneControl& core) {
    (void)core;
    return absl::OkStatus();
  }
  // 3. Every feature's modules are registered: open the feature's own ports
  //    (e.g. the uplink), which every module sees added. `mbufs`: the pool
  //    of PMD 0's NUMA socket (PMD 0 polls the features' ports).
  virtual absl::Status openPorts(DataplaneControl& core, rte_mempool* mbufs) {
    (void)core;
    (void)mbufs;
    return absl::OkStatus();
  }
  // 4. The feature's own threads (before the core's flow thread starts).
  virtual void start() {}

  // The API, once the PMDs run: the feature's own service, what it adds to
  // the core's answers, and the deprecated core calls it serves (null or
  // untouched: none).
  virtual grpc::Service* service() { return nullptr; }
  virtual ServiceExtension* extension() { return nullptr; }
  virtual void forwardDeprecated(DeprecatedForwards& forwards) { (void)forwards; }

  // Stop, in this order (the API has stopped and the core has closed the
  // pods' ports and stopped its flow thread).
  // 5. Stop the feature's threads while the PMDs still run.
  virtual void stopBeforePmds() {}
  // 6. No PMD runs: close what they used (e.g. the uplink).
  virtual void closeAfterPmds() {}
};

// Makes the feature for this node's configuration: null when the
// configuration leaves it off; an error stops sluiced with its message.
using FeatureFactory = absl::StatusOr<std::unique_ptr<Feature>> (*)(const SluicedConfig& config);

struct FeatureRegistration {
  std::string_view name;
  FeatureFactory make;
};

// Adds a feature to the registry (at static initialisation; returns true so
// the macro below has something to initialise).
bool registerFeature(std::string_view name, FeatureFactory make);
// The registered features, in name order.
std::vector<FeatureRegistration> registeredFeatures();

}  // namespace sluice

// One line in the feature's own folder. Its library must be linked whole
// (an OBJECT library, see dataplane/modules/CMakeLists.txt) so the linker
// keeps this initialiser although nothing names it.
#define SLUICE_REGISTER_FEATURE(name, factory) \
  [[maybe_unused]] static const bool sluice_registered_feature_##name = ::sluice::registerFeature(#name, factory)
