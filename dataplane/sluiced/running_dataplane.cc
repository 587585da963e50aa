#include "dataplane/sluiced/running_dataplane.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<RunningDataplane>> RunningDataplane::launch(ControlCore& core, FeatureSet& features,
                                                                           PmdFleet& pmds) {
  if (absl::Status s = pmds.launch(); !s.ok()) return s;
  return std::unique_ptr<RunningDataplane>(new RunningDataplane(core, features, pmds));
}

RunningDataplane::~RunningDataplane() {
  core_.stopWhilePmdsRun();
  features_.stopBeforePmds();
  pmds_.stop();
  features_.closeAfterPmds();
}

}  // namespace sluice
