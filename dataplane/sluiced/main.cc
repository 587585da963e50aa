// sluiced: the node dataplane daemon. Main thread: reads the configuration,
// starts DPDK's EAL, the PMD lcores and the gRPC API, then waits for
// SIGTERM/SIGINT and shuts down in reverse order (API stops taking calls,
// ports are closed and their sockets removed, PMDs stop, EAL is released).
//
// Each step below is an object whose destructor undoes it, declared in the
// order the steps start: leaving runDataplane, at the end or at a step that
// failed, undoes what was done in reverse.
#include <absl/status/status.h>

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

#include "common/log.h"
#include "dataplane/config/config.h"
#include "dataplane/core/checkpoint.h"
#include "dataplane/core/crash_points.h"
#include "dataplane/sluiced/api_stack.h"
#include "dataplane/sluiced/control_core.h"
#include "dataplane/sluiced/eal_session.h"
#include "dataplane/sluiced/feature_set.h"
#include "dataplane/sluiced/pmd_fleet.h"
#include "dataplane/sluiced/preflight.h"
#include "dataplane/sluiced/running_dataplane.h"
#include "dataplane/sluiced/shutdown_signals.h"

namespace sluice {
namespace {

// A step that failed: logs why, and the exit code sluiced stops with.
int stopWith(const absl::Status& why, int exit_code = 1) {
  logError(why.message());
  return exit_code;
}

// What preflight settled, for the steps that start the dataplane.
struct Settled {
  const SluicedArgs& args;
  CheckpointStore& checkpoint;
  const CheckpointLoad& loaded;
  const LcorePlacement& placement;
  const ShutdownSignals& signals;
  double start_time_seconds;
};

// From the EAL to the API and back. nullopt: a step before the API failed
// (logged); otherwise the exit code once sluiced has served and stopped.
std::optional<int> runDataplane(const Settled& settled, FeatureSet&& made_features) {
  const SluicedConfig& config = settled.args.config;
  auto failed = [](const absl::Status& why) {
    stopWith(why);
    return std::nullopt;
  };
  absl::StatusOr<std::unique_ptr<EalSession>> eal = EalSession::start(config, settled.placement);
  if (!eal.ok()) return failed(eal.status());
  absl::StatusOr<std::unique_ptr<PmdFleet>> pmds = PmdFleet::make(config, **eal, made_features);
  if (!pmds.ok()) return failed(pmds.status());
  ControlCore core(config, **eal, **pmds);
  // Declared after the core: the features' modules leave the core before it goes.
  FeatureSet features = std::move(made_features);
  if (absl::Status s = features.registerModules(core.control()); !s.ok()) return failed(s);
  if (absl::Status s = features.openPorts(core.control(), (*eal)->pools().home()); !s.ok()) return failed(s);
  features.start();
  core.startAndRestore(settled.checkpoint, settled.loaded);
  // Only now: the restore's own checkpoint write is not a step under test.
  armCrashPoint();
  absl::StatusOr<std::unique_ptr<RunningDataplane>> running = RunningDataplane::launch(core, features, **pmds);
  if (!running.ok()) return failed(running.status());
  ApiStack api(settled.args, core.control(), features.api(), (*pmds)->contexts(), settled.start_time_seconds);
  if (absl::Status s = api.serve((*pmds)->size(), features.names()); !s.ok()) return stopWith(s);
  settled.signals.wait();
  return 0;
}

int run(int argc, char** argv) {
  const double start_time_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const ShutdownSignals signals;
  absl::StatusOr<SluicedArgs> args = parseSluicedArgs(argc, argv);
  if (!args.ok()) return exitForRefusedCommandLine(args.status());
  // What sluiced starts with; restart-only keys keep these values for the
  // whole run (live ones may change through ApiStack's settings).
  const SluicedConfig& config = args->config;
  if (absl::Status s = applyStartupSettings(config); !s.ok()) return stopWith(s, 2);
  absl::StatusOr<FeatureSet> features = FeatureSet::make(config);
  if (!features.ok()) return stopWith(features.status());
  if (absl::Status s = claimSocketPaths(config); !s.ok()) return stopWith(s);
  CheckpointStore checkpoint(config.state_dir, config.checkpoint_fsync);
  absl::StatusOr<CheckpointLoad> loaded = loadCheckpoint(checkpoint);
  if (!loaded.ok()) return stopWith(loaded.status());
  absl::StatusOr<LcorePlacement> placement = placeLcoresOnAllowedCpus(config);
  if (!placement.ok()) return stopWith(placement.status());
  raiseDescriptorLimit(config.max_ports);

  const Settled settled{*args, checkpoint, *loaded, *placement, signals, start_time_seconds};
  const std::optional<int> exit_code = runDataplane(settled, *std::move(features));
  if (!exit_code) return 1;
  logInfo("sluiced stopped");
  return *exit_code;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::run(argc, argv); }
