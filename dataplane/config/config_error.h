// The error of every sluiced config parser for a key it refuses, so that
// each reads the same: "config: <key>: <why>".
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace sluice {

inline absl::Status invalidKey(const std::string& key, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("config: ", key, ": ", why));
}

}  // namespace sluice
