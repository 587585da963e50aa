// sluiced's settings while it runs: every key's current value and where it
// came from, changed one key at a time (SetConfig, sluicectl config set) or by
// a re-read of the --config files. Only keys config_keys.def marks live
// change; every value passes applySetting's checks, as at start.
//
// Thread-safe: API threads and the config-file watcher call in concurrently.
// One change at a time, including the hand-over to `apply` (the control
// core, which publishes the live values to the PMDs), so the dataplane and
// what GetConfig reports never disagree after a call returns.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/config/config.h"

namespace sluice {

// Where a key's current value came from.
enum class ConfigSource { kDefault, kFile, kFlag, kApi };
const char* configSourceName(ConfigSource source);

struct ConfigEntry {
  std::string key;
  std::string value;  // as a flag would give it
  bool live = false;  // changes while sluiced runs
  ConfigSource source = ConfigSource::kDefault;
};

// What a re-read of the files did.
struct ReloadResult {
  bool changed_files = false;            // the files' text differed from the last read
  std::vector<std::string> applied;      // live keys whose new value now runs
  std::vector<std::string> need_restart; // restart-only settings that changed (not applied)
  std::vector<std::string> overridden;   // changed in a file but set by a flag (the flag stays)
};

class RuntimeConfig {
 public:
  // Hands a configuration whose live keys changed to the dataplane. Called
  // with this object's lock held, never concurrently with itself.
  using ApplyFn = std::function<void(const SluicedConfig& next)>;

  // `started`: what sluiced started with (its files are the last read).
  RuntimeConfig(const SluicedArgs& started, ApplyFn apply);

  // Every key of config_keys.def, in its order.
  std::vector<ConfigEntry> entries() const;
  // One key; InvalidArgument for an unknown one.
  absl::StatusOr<ConfigEntry> entry(const std::string& key) const;
  // Sets a live key: InvalidArgument for an unknown key or a bad value,
  // FailedPrecondition for a restart-only key. Returns the key's new entry.
  absl::StatusOr<ConfigEntry> set(const std::string& key, const std::string& value);
  // Reads the --config files again. Live keys whose value a file changed
  // are applied (unless a flag sets them); changed restart-only settings are
  // reported in need_restart and logged (once: the next re-read compares
  // with this one). Files whose text is unchanged change nothing. A file that cannot
  // be read or is invalid changes nothing (the error is returned).
  absl::StatusOr<ReloadResult> reloadFiles();

  SluicedConfig current() const;
  const std::vector<std::string>& files() const { return files_; }

 private:
  // The files' own values: defaults, then every file (no flags, no checks
  // across keys), and the non-scalar top-level JSON keys (overlay, SR-IOV
  // pools) as the files give them.
  struct FileLayer {
    SluicedConfig config;
    std::map<std::string, std::string> others;  // top-level key -> JSON text
  };
  static absl::StatusOr<FileLayer> fileLayer(const std::vector<ConfigFileText>& files);

  const std::vector<std::string> files_;
  const std::vector<std::pair<std::string, std::string>> flags_;
  const ApplyFn apply_;

  mutable std::mutex mu_;  // guards every member below
  SluicedConfig current_;
  std::map<std::string, ConfigSource> sources_;
  std::vector<ConfigFileText> last_files_;
  FileLayer last_layer_;
};

}  // namespace sluice
