// CNI error values: the spec's well-known error codes, carried inside
// absl::Status as a payload so every layer of sluice-cni returns ordinary
// statuses and the dispatcher alone turns them into the spec's error JSON.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"

namespace sluice::cni {

// Codes from the CNI spec ("Well-known Error Codes"); 100 and up are ours.
enum class ErrorCode : int {
  kIncompatibleVersion = 1,
  kUnsupportedField = 2,
  kUnknownContainer = 3,
  kInvalidEnvironment = 4,
  kIoFailure = 5,
  kDecodeFailure = 6,
  kInvalidConfig = 7,
  kTryAgainLater = 11,
  // STATUS only: the plugin cannot service ADD.
  kNotAvailable = 50,
  // STATUS only: ... and existing attachments may have limited connectivity.
  kLimitedConnectivity = 51,
  // sluiced refused the attachment because its IP or MAC belongs to another
  // attachment (gRPC ALREADY_EXISTS).
  kConflict = 100,
  // CHECK found the attachment missing or different from prevResult.
  kCheckFailed = 101,
  // Anything without a better code (the Go skeleton uses 999 the same way).
  kInternal = 999,
};

// Builds a status that carries `code`; `details` is the spec's optional
// "details" string (e.g. a delegate's stderr).
absl::Status cniError(ErrorCode code, std::string_view msg, std::string_view details = {});

// The CNI code a status carries; kInternal for a status made elsewhere.
ErrorCode cniCodeOf(const absl::Status& status);

// Same status with "prefix: " in front of its message, payloads kept.
absl::Status withPrefix(const absl::Status& status, std::string_view prefix);

// Same CNI code, message and payloads under another absl status code (so
// callers can tell e.g. a deadline from a refusal without parsing text).
absl::Status withStatusCode(const absl::Status& status, absl::StatusCode code);

// The spec's error object: {"cniVersion", "code", "msg", "details"?}.
nlohmann::json errorJson(const absl::Status& status, std::string_view cni_version);

}  // namespace sluice::cni
