// The group and mode of a vhost-user socket sluiced has just made (server
// mode), for a non-root application of that group. Used by the control thread
// each time it makes a socket: on AddPort and when it restores its ports.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <string>

namespace sluice {

// Gives the socket at `path` group `gid` and mode `mode`. The last component
// is not followed: the socket may lie in a directory the pod writes to, and a
// symlink put there in its place is refused (FailedPrecondition), as is
// anything that is not a socket. InternalError when a system call fails.
absl::Status setSocketGroupAndMode(const std::string& path, uint32_t gid, unsigned mode);

}  // namespace sluice
