// The PMDs launched, once the core has restored the ports; and, when this
// object goes, the stop in the one order that is safe: the core closes the
// ports and stops its threads while the PMDs still run (a port's removal
// waits for every PMD to pass a quiescent point), the features stop their
// threads, the PMDs stop, and only then the features close what the PMDs
// used (e.g. the uplink). Main thread only.
#pragma once

#include <absl/status/statusor.h>

#include <memory>

#include "dataplane/sluiced/control_core.h"
#include "dataplane/sluiced/feature_set.h"
#include "dataplane/sluiced/pmd_fleet.h"

namespace sluice {

class RunningDataplane {
 public:
  // Launches the PMDs; an error (the fleet stopped again) names the lcore
  // that could not run one. The three must outlive the object.
  static absl::StatusOr<std::unique_ptr<RunningDataplane>> launch(ControlCore& core, FeatureSet& features,
                                                                  PmdFleet& pmds);
  ~RunningDataplane();
  RunningDataplane(const RunningDataplane&) = delete;
  RunningDataplane& operator=(const RunningDataplane&) = delete;

 private:
  RunningDataplane(ControlCore& core, FeatureSet& features, PmdFleet& pmds)
      : core_(core), features_(features), pmds_(pmds) {}

  ControlCore& core_;
  FeatureSet& features_;
  PmdFleet& pmds_;
};

}  // namespace sluice
