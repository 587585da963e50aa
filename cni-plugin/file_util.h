// Small filesystem helpers shared by the files sluice-cni writes (device-info,
// attachment records): atomic replace and tolerant removal.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice::cni {

// Writes `content` to a temporary file beside `path`, fsyncs it and renames
// it over `path`, so readers see the old file or the new one, never half.
// Creates missing parent directories (mode 0755).
absl::Status writeFileAtomic(const std::string& path, std::string_view content, unsigned mode);

// Removes `path`; a file that is already gone is success.
absl::Status removeFileIfExists(const std::string& path);

// mkdir -p; returns true when the last component was created by this call.
absl::StatusOr<bool> makeDirs(const std::string& path, unsigned mode);

absl::StatusOr<std::string> readFile(const std::string& path);

}  // namespace sluice::cni
