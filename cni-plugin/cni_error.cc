// See cni_error.h.
#include "cni-plugin/cni_error.h"

#include <charconv>
#include <optional>

#include "absl/strings/cord.h"
#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

// Payload type URLs; only this file reads or writes them.
constexpr std::string_view kCodeUrl = "type.sluice.dev/cni-code";
constexpr std::string_view kDetailsUrl = "type.sluice.dev/cni-details";

// The absl code only matters to code that inspects statuses generically;
// retryable CNI codes map to kUnavailable so such code treats them alike.
absl::StatusCode absCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kTryAgainLater:
    case ErrorCode::kNotAvailable:
    case ErrorCode::kLimitedConnectivity:
      return absl::StatusCode::kUnavailable;
    case ErrorCode::kInternal:
    case ErrorCode::kIoFailure:
      return absl::StatusCode::kInternal;
    case ErrorCode::kConflict:
      return absl::StatusCode::kAlreadyExists;
    case ErrorCode::kCheckFailed:
    case ErrorCode::kUnknownContainer:
      return absl::StatusCode::kNotFound;
    default:
      return absl::StatusCode::kInvalidArgument;
  }
}

// `status`'s payloads (the CNI code and details) under a new code and message.
absl::Status rebuilt(const absl::Status& status, absl::StatusCode code, std::string_view message) {
  if (status.ok()) return status;
  absl::Status out(code, asv(message));
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

}  // namespace

absl::Status cniError(ErrorCode code, std::string_view msg, std::string_view details) {
  absl::Status status(absCodeFor(code), asv(msg));
  status.SetPayload(asv(kCodeUrl), absl::Cord(std::to_string(static_cast<int>(code))));
  if (!details.empty()) status.SetPayload(asv(kDetailsUrl), absl::Cord(asv(details)));
  return status;
}

ErrorCode cniCodeOf(const absl::Status& status) {
  auto payload = status.GetPayload(asv(kCodeUrl));
  if (!payload) return ErrorCode::kInternal;
  std::string text(*payload);
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return ErrorCode::kInternal;
  return static_cast<ErrorCode>(value);
}

absl::Status withStatusCode(const absl::Status& status, absl::StatusCode code) {
  return rebuilt(status, code, sv(status.message()));
}

absl::Status withPrefix(const absl::Status& status, std::string_view prefix) {
  return rebuilt(status, status.code(), cat(prefix, ": ", status.message()));
}

nlohmann::json errorJson(const absl::Status& status, std::string_view cni_version) {
  nlohmann::json out = nlohmann::json::object();
  out["cniVersion"] = std::string(cni_version);
  out["code"] = static_cast<int>(cniCodeOf(status));
  out["msg"] = std::string(status.message());
  if (auto details = status.GetPayload(asv(kDetailsUrl))) {
    out["details"] = std::string(*details);
  }
  return out;
}

}  // namespace sluice::cni
