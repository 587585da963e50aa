// What sluiced checks and settles before it starts anything (no EAL, no
// thread of its own yet): the command line, the socket directories and that
// no other sluiced serves the API socket, the checkpoint it restores, where
// its lcores run, and the open-file limit. A check that fails returns the
// message sluiced stops with. Main thread only.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>

#include "dataplane/config/config.h"
#include "dataplane/config/lcore_placement.h"
#include "dataplane/core/checkpoint.h"

namespace sluice {

// The exit code of a command line parseSluicedArgs refused: the usage on
// stdout and 0 for --help, the refusal on stderr and 2 for anything else.
int exitForRefusedCommandLine(const absl::Status& refused);

// The log level and a warning per ignored key; then the crash point a test
// may set in the environment (an unknown one is the error returned).
absl::Status applyStartupSettings(const SluicedConfig& config);

// Creates the vhost-user socket directory and the API sockets' directories,
// refuses an API socket another sluiced still serves, and removes the one a
// sluiced that is gone left behind.
absl::Status claimSocketPaths(const SluicedConfig& config);

// The checkpoint, read before anything starts: a file of a newer version
// than this sluiced's holds a newer sluiced's promises, which starting empty
// would break (and the first save would overwrite). sluiced stops instead,
// leaving the file for the sluiced that wrote it.
absl::StatusOr<CheckpointLoad> loadCheckpoint(CheckpointStore& checkpoint);

// The main and PMD lcores placed on the CPUs this process may run on, and
// logged. Read before the EAL pins this thread to the main lcore's CPU.
absl::StatusOr<LcorePlacement> placeLcoresOnAllowedCpus(const SluicedConfig& config);

// Raises the soft open-file limit to the hard one, and warns when even that
// is short of what a full port table may need.
void raiseDescriptorLimit(uint16_t max_ports);

}  // namespace sluice
