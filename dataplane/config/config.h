// sluiced's configuration: defaults, then a JSON file (--config), then command
// line flags, each overriding the one before. Parsed and validated once on the
// main thread at start; immutable afterwards.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/net_address.h"
#include "dataplane/config/sriov_pool_config.h"
#include "dataplane/config/overlay_config.h"

namespace sluice {

struct SluicedConfig {
  // Every scalar key with its default: config_keys.def.
#define SLUICE_CONFIG_KEY(key, Type, field, default_value, kind, help) Type field = default_value;
#include "dataplane/config/config_keys.def"
#undef SLUICE_CONFIG_KEY
  // The VXLAN overlay (JSON keys "uplink", "vni", "remote-nodes"; see
  // overlay_config.h). No uplink: a single node.
  OverlayConfig overlay;
  // SR-IOV VF pools, one per physical function (JSON "sriov-pools": a list
  // of {"pf": NAME, "sysfs-root": PATH?}).
  std::vector<sriov::PoolConfig> sriov_pools;
  // Keys the file held that this version does not know (warned about, ignored:
  // a newer chart may configure features an older sluiced lacks).
  std::vector<std::string> ignored_keys;
};

// Parses argv (sluiced's own flags, with --config FILE read first). Returns
// InvalidArgument naming the flag or key on any bad value; "--help" yields a
// status whose message is the usage text and whose code is kCancelled.
absl::StatusOr<SluicedConfig> parseSluicedConfig(int argc, const char* const* argv);

// Parses just a JSON document's keys over `base` (for tests and --config).
absl::StatusOr<SluicedConfig> applyConfigJson(const std::string& json_text, SluicedConfig base);

}  // namespace sluice
