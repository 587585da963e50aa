// sluiced's configuration: defaults, then JSON files (--config), then command
// line flags, each overriding the one before. Parsed and validated on the
// main thread at start; the keys config_keys.def marks live may change later
// (runtime_config.h), always through applySetting's checks.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "common/net_address.h"
#include "common/prefix_ranges.h"
#include "dataplane/config/host_addresses.h"
#include "dataplane/config/host_path_ports.h"
#include "dataplane/config/sriov_pool_config.h"
#include "dataplane/config/overlay_config.h"
#include "dataplane/datapath/limits.h"
#include "dataplane/datapath/port_mtu.h"

namespace sluice {

struct SluicedConfig {
  // Every scalar key with its default: config_keys.def.
#define SLUICE_CONFIG_KEY(key, Type, field, default_value, kind, reload, help) Type field = default_value;
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

// One --config file as read.
struct ConfigFileText {
  std::string path;
  std::string text;
};

// What sluiced was started with: the configuration, and where it came from
// (what a re-read of the files composes again).
struct SluicedArgs {
  SluicedConfig config;
  std::vector<std::string> config_files;  // --config, in order (later ones override earlier ones)
  std::vector<ConfigFileText> file_texts;  // those files as read at start
  std::vector<std::pair<std::string, std::string>> flags;  // key, value as given
  std::set<std::string> file_keys;  // scalar keys (config_keys.def) some file gave
};

// Parses argv (sluiced's own flags, with the --config FILEs read first, in
// order). Returns InvalidArgument naming the flag or key on any bad value;
// "--help" yields a status whose message is the usage text and whose code is
// kCancelled.
absl::StatusOr<SluicedArgs> parseSluicedArgs(int argc, const char* const* argv);
absl::StatusOr<SluicedConfig> parseSluicedConfig(int argc, const char* const* argv);

// Reads the --config files (NotFound naming one that cannot be read).
absl::StatusOr<std::vector<ConfigFileText>> readConfigFiles(const std::vector<std::string>& paths);

// Defaults, then `files` in order, then `flags`, then the cross-field checks:
// what start-up does, and what a re-read of the files does again. Fills
// `file_keys` (if given) with the scalar keys the files gave.
absl::StatusOr<SluicedConfig> composeSluicedConfig(const std::vector<ConfigFileText>& files,
                                                   const std::vector<std::pair<std::string, std::string>>& flags,
                                                   std::set<std::string>* file_keys = nullptr);

// Checks and converts one scalar setting given as text (a flag, a JSON
// value, or a value set at run time) into `config`. InvalidArgument naming
// the key for an unknown key or a bad value; `config` is unchanged then.
absl::Status applySetting(SluicedConfig& config, const std::string& key, const std::string& value);

// Parses just a JSON document's keys over `base` (for tests and --config).
absl::StatusOr<SluicedConfig> applyConfigJson(const std::string& json_text, SluicedConfig base);

}  // namespace sluice
