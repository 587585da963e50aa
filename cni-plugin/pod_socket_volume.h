// Where a pod's vhost-user sockets live when the pod brings its own socket
// directory (the network config's perPodSockets): an emptyDir volume the pod
// declares, which the kubelet has set up on the host at
// <kubeletDir>/pods/<pod UID>/volumes/kubernetes.io~empty-dir/<volume> before
// the runtime asks for the pod's network. That path is too long for a unix
// socket address (108 bytes with the NUL), so sluiced never sees it: the
// per-attachment name <socketDir>/<link> is a symlink to it, and the socket
// sluiced is given, <socketDir>/<link>/<ifname>.sock, stays short (the
// kernel follows directory symlinks while resolving a socket's path). The pod
// mounts only its emptyDir, at podSocketDir: it sees its own sockets and no
// host path at all. Pure functions over names, and the rules that keep a
// pod UID or a volume name from naming any other host path. Used by the
// single thread of the sluice-cni process.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/confined_path.h"

namespace sluice::cni {

// The kubelet's directory name for the emptyDir volume plugin
// ("kubernetes.io/empty-dir" with '/' escaped as '~').
inline constexpr std::string_view kEmptyDirPluginDir = "kubernetes.io~empty-dir";
// CNI_ARGS key in which the kubelet's runtime (and Multus) pass the pod's UID.
inline constexpr std::string_view kPodUidArg = "K8S_POD_UID";

// A pod UID as the API server makes them (an RFC 4122 UUID,
// 8-4-4-4-12 hex digits) or as the kubelet makes them for static pods (32 hex
// digits of a hash): nothing else, so it is always one plain path component.
absl::Status validatePodUid(std::string_view uid);

// A Kubernetes volume name (an RFC 1123 label: 1..63 lower-case
// alphanumerics or '-', alphanumeric at both ends): one plain path component.
absl::Status validateVolumeName(std::string_view name);

// <kubelet_dir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<volume>, confined
// below kubelet_dir (the node's choice, trusted like the other roots of the
// node config). InvalidArgument naming what is wrong.
absl::StatusOr<ConfinedPath> emptyDirHostPath(std::string_view kubelet_dir, std::string_view uid,
                                              std::string_view volume);

// The name of an attachment's link under socketDir: like socketSubdir() but
// over the container id and the interface name, so that each attachment has
// its own link (two networks of one pod may name different volumes, and DEL
// removes one attachment's link without asking who else uses it). The rule
// is common/socket_name.h's: sluiced follows a link only at this name.
std::string podSocketLinkName(std::string_view container_id, std::string_view ifname);

// The socket's file name (the interface name escaped as sluiced escapes it).
std::string socketFileName(std::string_view ifname);

// The socket's path as the pod sees it: <pod_socket_dir>/<ifname>.sock;
// InvalidArgument if it would not fit a unix socket address.
absl::StatusOr<std::string> podSideSocketPath(std::string_view pod_socket_dir, std::string_view ifname);

}  // namespace sluice::cni
