// Host paths that a network config names (the device-info file, the log
// file, the records' dataDir), held inside directories the node's own
// config allows. The network config is written by whoever may write a
// NetworkAttachmentDefinition and sluice-cni runs as root, so a path taken as
// given would let that author create, append to or unlink any file of the
// node. A ConfinedPath is a trusted directory of the node (`root`, which may
// itself pass through symlinks such as /var/run -> /run) and the components
// below it; file_util.h walks those one directory at a time with O_NOFOLLOW,
// so neither ".." nor a symlink planted below the root leads outside it.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cni {

struct ConfinedPath {
  std::string root;                     // normalised absolute directory the node allows
  std::vector<std::string> components;  // below root: none empty, ".", ".." or containing '/'

  std::string str() const;  // root and components joined with '/'
  ConfinedPath child(std::string_view name) const;
  bool operator==(const ConfinedPath&) const = default;
};

// The lexical normal form of an absolute path: repeated '/' and "."
// components dropped, no trailing '/'. nullopt for a relative path, one with
// a NUL, or one with a ".." component: ".." is refused rather than resolved,
// because resolving it textually over a symlinked component is exactly how a
// path leaves the directory it seems to be in.
std::optional<std::string> normaliseAbsolutePath(std::string_view path);

// `path` as a ConfinedPath under `root` (both normalised first). `allow_root`:
// whether `path` may be `root` itself (a directory may; a file may not). The
// error (absl InvalidArgument) says why in words; the caller names the field.
absl::StatusOr<ConfinedPath> confinePath(std::string_view path, std::string_view root, bool allow_root);

}  // namespace sluice::cni
