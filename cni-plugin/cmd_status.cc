// STATUS (spec 1.1): can this network take ADDs? sluiced must answer Health
// and be ready with a free port slot, and the IPAM delegate must pass its own
// STATUS when it speaks 1.1.0 (older delegates have no STATUS verb).
#include <algorithm>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"

namespace sluice::cni {

absl::Status runStatus(CommandContext& c) {
  absl::StatusOr<v1::HealthResponse> health = c.dataplane.health();
  if (!health.ok()) {
    return cniError(ErrorCode::kNotAvailable, cat("sluiced is not available: ", health.status().message()));
  }
  if (!health->ready()) {
    // Answering but not forwarding (EAL or PMDs not up, or still restoring
    // ports): existing pods may be cut off too.
    return cniError(ErrorCode::kLimitedConnectivity, "sluiced is not ready (its PMDs are not all forwarding yet)");
  }
  if (health->max_ports() != 0 && health->ports() >= health->max_ports()) {
    return cniError(ErrorCode::kNotAvailable,
                    cat("sluiced's port table is full (", health->ports(), " of ", health->max_ports(), ")"));
  }
  // CNI_PATH is optional for STATUS; without it the delegate cannot be found
  // and only sluiced's side is judged.
  if (c.ipam != nullptr && c.env.path.empty()) c.log.info("no CNI_PATH: IPAM delegate not checked");
  if (c.ipam != nullptr && !c.env.path.empty()) {
    absl::StatusOr<std::vector<std::string>> versions = c.ipam->supportedVersions();
    if (!versions.ok()) {
      return cniError(ErrorCode::kNotAvailable, cat("IPAM is not available: ", versions.status().message()));
    }
    if (std::find(versions->begin(), versions->end(), "1.1.0") != versions->end()) {
      if (absl::Status s = c.ipam->status(c.stdin_data); !s.ok()) {
        ErrorCode code = cniCodeOf(s) == ErrorCode::kLimitedConnectivity ? ErrorCode::kLimitedConnectivity
                                                                          : ErrorCode::kNotAvailable;
        return cniError(code, std::string(s.message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice::cni
