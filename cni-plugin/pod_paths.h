// Where a pod's vhost-user sockets live on the host:
// <socketDir>/<pod dir>/<ifname>.sock, the pod dir derived from the container
// id so that no id can name a path outside socketDir and the whole socket
// path fits a unix socket address. Used by the single thread of the
// sluice-cni process.
#pragma once

#include <string>
#include <string_view>

namespace sluice::cni {

// "<up to 12 leading id characters, [A-Za-z0-9_-] only>-<8 hex FNV-1a of the
// full id>": readable like a short container id, never "." or "..", never
// containing '/', at most 21 bytes, and distinct ids that share a prefix
// still get distinct directories.
std::string socketSubdir(std::string_view container_id);

// True when `path` is inside `dir` (textually, after "dir/").
bool isUnder(std::string_view path, std::string_view dir);

}  // namespace sluice::cni
