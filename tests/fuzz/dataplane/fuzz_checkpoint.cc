// libFuzzer target for the checkpoint parser (dataplane/core/checkpoint.h):
// sluiced reads the file at every start, and a damaged file must be refused
// with a status, never crash it. Properties checked beyond "no crash":
//  - a refusal is InvalidArgument (corrupt: moved aside) or FailedPrecondition
//    (a newer version: left in place), and the latter only for a version
//    above this sluiced's;
//  - what parses, whatever version it had (the older ones through their
//    migrations, checkpoint_migrations.h), serialises at the current version
//    to text that parses to the same state (restore rewrites the checkpoint
//    from what it read);
//  - the migrations take any object from any older version without
//    crashing, and leave it at the current version.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dataplane/core/checkpoint.h"
#include "dataplane/core/checkpoint_migrations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = sluice::parseCheckpoint(text);
  if (!parsed.ok()) {
    const absl::StatusCode code = parsed.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kFailedPrecondition) std::abort();
    if (code == absl::StatusCode::kFailedPrecondition) {
      auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
      auto v = doc.is_object() ? doc.find("version") : doc.end();
      if (v == doc.end() || !v->is_number_unsigned() || v->get<uint64_t>() <= sluice::kCheckpointVersion)
        std::abort();
    }
  } else {
    if (parsed->read_version < sluice::kOldestCheckpointVersion || parsed->read_version > sluice::kCheckpointVersion)
      std::abort();
    const std::string once = sluice::serializeCheckpoint(*parsed);
    auto again = sluice::parseCheckpoint(once);
    if (!again.ok() || again->read_version != sluice::kCheckpointVersion ||
        sluice::serializeCheckpoint(*again) != once)
      std::abort();
  }
  // The migrations on their own, from every older version.
  auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_object()) {
    for (uint64_t from = sluice::kOldestCheckpointVersion; from < sluice::kCheckpointVersion; ++from) {
      nlohmann::json copy = doc;
      if (sluice::migrateCheckpoint(copy, from).ok() && copy["version"] != sluice::kCheckpointVersion) std::abort();
    }
  }
  return 0;
}
