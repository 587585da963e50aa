// sluicectl's whole run, apart from main so that tests can drive it: the
// global options, then the command the table (command.h) names. The
// operator's CLI for a node's sluiced, over the same gRPC API the CNI plugin
// uses (so `kubectl exec ds/sluice -- sluicectl stats` works).
#pragma once

#include <string>
#include <vector>

namespace sluice::ctl {

// `argv` as main gets it (argv[0] the program); returns the exit code
// (client.h): an unknown command prints the usage and returns 2.
int run(const std::vector<std::string>& argv);

}  // namespace sluice::ctl
