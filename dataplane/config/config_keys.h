// The scalar keys of config_keys.def as a table, for what walks over all of
// them: the flag parser and its --help text, the JSON reader's type checks,
// and tests that every key is understood.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "dataplane/config/config.h"

namespace sluice {

enum class ConfigKeyKind {
  kValue,           // a flag and a JSON key; --help shows the default's value
  kBoolean,         // as kValue, and the JSON file may give it as true/false
  kDerivedDefault,  // as kValue, but the default is computed from other keys: the help states it
  kFileOnly,        // a JSON key only: no flag, not in --help
};

// When a new value takes effect.
enum class ConfigReload {
  kLive,     // while sluiced runs: sluicectl config set, or a changed --config file
  kRestart,  // at sluiced's next start (it sizes or opens something at start)
};

struct ConfigKey {
  const char* name;
  ConfigKeyKind kind;
  ConfigReload reload;
  const char* help;
  // The key's value in `config` as it would be written on the command line
  // (for --help to show the default).
  std::string (*value_text)(const SluicedConfig& config);
};

// Every key of config_keys.def, in its order (the order of --help).
std::span<const ConfigKey> configKeys();

// The key named `name`, or null when config_keys.def has none.
const ConfigKey* findConfigKey(std::string_view name);

// Whether `key` changes while sluiced runs.
inline bool isLive(const ConfigKey& key) { return key.reload == ConfigReload::kLive; }

}  // namespace sluice
