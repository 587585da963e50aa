#include "dataplane/core/checkpoint_migrations.h"

#include <absl/strings/str_cat.h>

#include <iterator>

namespace sluice {
namespace {

using Migration = absl::Status (*)(nlohmann::json& doc);

// The steps, in order: kMigrations[i] turns version kOldestCheckpointVersion
// + i into the next one. The only list of them.
constexpr Migration kMigrations[] = {
    migrateV1ToV2,
    migrateV2ToV3,
    migrateV3ToV4,
    migrateV4ToV5,
};
static_assert(kOldestCheckpointVersion + std::size(kMigrations) == kCheckpointVersion,
              "one migration per version step, from the oldest version read to the one written");

}  // namespace

absl::Status migrateV1ToV2(nlohmann::json& doc) {
  if (!doc.contains("nodes")) doc["nodes"] = nlohmann::json::array();
  return absl::OkStatus();
}

absl::Status migrateV2ToV3(nlohmann::json& doc) {
  auto ports = doc.find("ports");
  if (ports == doc.end() || !ports->is_array()) return absl::OkStatus();
  for (nlohmann::json& port : *ports)
    if (port.is_object() && !port.contains("ipv6")) port["ipv6"] = "";
  return absl::OkStatus();
}

absl::Status migrateV3ToV4(nlohmann::json& doc) {
  auto ports = doc.find("ports");
  if (ports == doc.end() || !ports->is_array()) return absl::OkStatus();
  for (nlohmann::json& port : *ports) {
    if (!port.is_object()) continue;
    if (!port.contains("mtu")) port["mtu"] = 0;
    if (!port.contains("source_validation")) port["source_validation"] = true;
  }
  return absl::OkStatus();
}

absl::Status migrateV4ToV5(nlohmann::json& doc) {
  auto ports = doc.find("ports");
  if (ports == doc.end() || !ports->is_array()) return absl::OkStatus();
  for (nlohmann::json& port : *ports)
    if (port.is_object() && !port.contains("routed_prefixes")) port["routed_prefixes"] = nlohmann::json::array();
  return absl::OkStatus();
}

absl::Status migrateCheckpoint(nlohmann::json& doc, uint64_t from) {
  if (from < kOldestCheckpointVersion || from > kCheckpointVersion)
    return absl::InvalidArgumentError(absl::StrCat("checkpoint: version: ", from, " is not ",
                                                   kOldestCheckpointVersion, "..", kCheckpointVersion));
  if (!doc.is_object()) return absl::InvalidArgumentError("checkpoint: file: top level must be an object");
  for (uint64_t v = from; v < kCheckpointVersion; ++v) {
    if (absl::Status s = kMigrations[v - kOldestCheckpointVersion](doc); !s.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint: migrating version ", v, " to ", v + 1, ": ", s.message()));
    doc["version"] = v + 1;
  }
  return absl::OkStatus();
}

}  // namespace sluice
