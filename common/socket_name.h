// How an interface name appears in a vhost-user socket's file name, and how
// a pod's directory below the socket dir is named. sluiced names the sockets;
// sluice-cni names the directories and removes what a pod left in them;
// both must spell the names alike, so the rules live here once.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// Every byte outside [A-Za-z0-9_.-], and a leading '.', becomes %xx (two
// lower-case hex digits). '%' is itself escaped, so distinct names give
// distinct files; names made only of [A-Za-z0-9_.-] (not starting with '.')
// map to themselves, so their sockets keep the paths they always had.
std::string ifnameFileComponent(const std::string& ifname);

// A pod's directory below the socket dir, shared by its interfaces (the
// sockets' own directory when the pods mount the socket dir):
// "<up to 12 leading id characters, [A-Za-z0-9_-] only>-<8 hex FNV-1a of the
// full id>": readable like a short container id, never "." or "..", never
// containing '/', at most 21 bytes, and distinct ids that share a prefix
// still get distinct directories.
std::string podSocketSubdir(std::string_view container_id);

// The name below the socket dir of one attachment's link to its pod's own
// socket volume (per-pod sockets): podSocketSubdir over the container id and
// the interface name, so that each attachment has its own. sluiced follows
// a symlink below its socket dir only at this name of the port's own
// attachment: that is the one the CNI plugin makes, in a directory no pod
// mounts.
std::string podSocketLinkName(std::string_view container_id, std::string_view ifname);

}  // namespace sluice
