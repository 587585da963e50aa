// What sluiced leaves on disk, as tests see it: the files under its socket
// and state directories, and whether its checkpoint names an attachment.
// Used by the fault tests to prove a port is either whole or absent.
#pragma once

#include <set>
#include <string>

namespace sluice::test {

// Every file and directory under `dir`, relative to it, sorted.
std::set<std::string> filesUnder(const std::string& dir);
// The whole file; empty when it cannot be read.
std::string fileText(const std::string& path);
// Whether <state_dir>/checkpoint.json holds a record for `container_id`.
bool checkpointNames(const std::string& state_dir, const std::string& container_id);

}  // namespace sluice::test
