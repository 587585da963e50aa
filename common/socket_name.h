// How an interface name appears in a vhost-user socket's file name. sluiced
// names the sockets; sluice-cni removes what a pod left in its socket
// directory; both must spell the name alike, so the rule lives here once.
#pragma once

#include <string>

namespace sluice {

// Every byte outside [A-Za-z0-9_.-], and a leading '.', becomes %xx (two
// lower-case hex digits). '%' is itself escaped, so distinct names give
// distinct files; names made only of [A-Za-z0-9_.-] (not starting with '.')
// map to themselves, so their sockets keep the paths they always had.
std::string ifnameFileComponent(const std::string& ifname);

}  // namespace sluice
