// Where a pod's vhost-user sockets live on the host:
// <socketDir>/<pod dir>/<ifname>.sock, the pod dir derived from the container
// id so that no id can name a path outside socketDir and the whole socket
// path fits a unix socket address. Used by the single thread of the
// sluice-cni process.
#pragma once

#include <string>
#include <string_view>

namespace sluice::cni {

// common/socket_name.h's podSocketSubdir: the rule sluiced shares.
std::string socketSubdir(std::string_view container_id);

// True when `path` is inside `dir` (textually, after "dir/").
bool isUnder(std::string_view path, std::string_view dir);

}  // namespace sluice::cni
