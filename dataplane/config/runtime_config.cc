#include "dataplane/config/runtime_config.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "dataplane/config/config_keys.h"

namespace sluice {
namespace {

bool sameTexts(const std::vector<ConfigFileText>& a, const std::vector<ConfigFileText>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].text != b[i].text) return false;
  return true;
}

}  // namespace

const char* configSourceName(ConfigSource source) {
  switch (source) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kFile: return "file";
    case ConfigSource::kFlag: return "flag";
    case ConfigSource::kApi: return "api";
  }
  return "default";
}

RuntimeConfig::RuntimeConfig(const SluicedArgs& started, ApplyFn apply)
    : files_(started.config_files), flags_(started.flags), apply_(std::move(apply)), current_(started.config),
      last_files_(started.file_texts) {
  for (const ConfigKey& key : configKeys())
    sources_[key.name] = started.file_keys.contains(key.name) ? ConfigSource::kFile : ConfigSource::kDefault;
  for (const auto& [key, value] : started.flags) sources_[key] = ConfigSource::kFlag;
  // The files parsed once already at start: this cannot fail unless they
  // were invalid then, in which case sluiced would not have started.
  if (auto layer = fileLayer(last_files_); layer.ok()) last_layer_ = *std::move(layer);
}

absl::StatusOr<RuntimeConfig::FileLayer> RuntimeConfig::fileLayer(const std::vector<ConfigFileText>& files) {
  FileLayer layer;
  for (const ConfigFileText& file : files) {
    auto parsed = applyConfigJson(file.text, layer.config);
    if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(file.path, ": ", parsed.status().message()));
    layer.config = *std::move(parsed);
    const nlohmann::json doc = nlohmann::json::parse(file.text, nullptr, false);
    for (const auto& [key, value] : doc.items())
      if (findConfigKey(key) == nullptr && key != "offload") layer.others[key] = value.dump();
  }
  return layer;
}

std::vector<ConfigEntry> RuntimeConfig::entries() const {
  std::lock_guard lock(mu_);
  std::vector<ConfigEntry> out;
  for (const ConfigKey& key : configKeys())
    out.push_back({key.name, key.value_text(current_), isLive(key), sources_.at(key.name)});
  return out;
}

absl::StatusOr<ConfigEntry> RuntimeConfig::entry(const std::string& key) const {
  const ConfigKey* known = findConfigKey(key);
  if (known == nullptr) return absl::InvalidArgumentError(absl::StrCat("config: ", key, ": unknown setting"));
  std::lock_guard lock(mu_);
  return ConfigEntry{known->name, known->value_text(current_), isLive(*known), sources_.at(known->name)};
}

absl::StatusOr<ConfigEntry> RuntimeConfig::set(const std::string& key, const std::string& value) {
  const ConfigKey* known = findConfigKey(key);
  if (known == nullptr) return absl::InvalidArgumentError(absl::StrCat("config: ", key, ": unknown setting"));
  if (!isLive(*known))
    return absl::FailedPreconditionError(absl::StrCat(
        "config: ", key, " needs a restart of sluiced to change (set it in the --config file or as a flag)"));
  std::lock_guard lock(mu_);
  SluicedConfig next = current_;
  if (absl::Status s = applySetting(next, key, value); !s.ok()) return s;
  apply_(next);
  current_ = std::move(next);
  sources_[known->name] = ConfigSource::kApi;
  logInfo("config: ", key, " = ", known->value_text(current_), " (set through the API)");
  return ConfigEntry{known->name, known->value_text(current_), true, ConfigSource::kApi};
}

absl::StatusOr<ReloadResult> RuntimeConfig::reloadFiles() {
  auto files = readConfigFiles(files_);
  if (!files.ok()) return files.status();
  std::lock_guard lock(mu_);
  ReloadResult result;
  if (sameTexts(*files, last_files_)) return result;
  result.changed_files = true;
  // Checked as a start would check them (flags included), before anything changes.
  std::set<std::string> file_keys;
  if (auto whole = composeSluicedConfig(*files, flags_, &file_keys); !whole.ok()) return whole.status();
  auto layer = fileLayer(*files);
  if (!layer.ok()) return layer.status();

  SluicedConfig next = current_;
  for (const ConfigKey& key : configKeys()) {
    const std::string before = key.value_text(last_layer_.config);
    const std::string now = key.value_text(layer->config);
    if (before == now) continue;
    bool by_flag = false;
    for (const auto& [flag, value] : flags_) by_flag |= flag == key.name;
    if (by_flag) {
      result.overridden.push_back(key.name);
    } else if (isLive(key)) {
      if (absl::Status s = applySetting(next, key.name, now); !s.ok()) return s;
      result.applied.push_back(key.name);
    } else {
      result.need_restart.push_back(key.name);
    }
  }
  std::set<std::string> others;
  for (const auto& [key, json] : last_layer_.others) others.insert(key);
  for (const auto& [key, json] : layer->others) others.insert(key);
  for (const std::string& key : others) {
    auto a = last_layer_.others.find(key);
    auto b = layer->others.find(key);
    const bool same = a != last_layer_.others.end() && b != layer->others.end() && a->second == b->second;
    if (!same) result.need_restart.push_back(key);
  }

  if (!result.applied.empty()) {
    apply_(next);
    current_ = std::move(next);
    // A key the files no longer give is back at its default.
    for (const std::string& key : result.applied)
      sources_[key] = file_keys.contains(key) ? ConfigSource::kFile : ConfigSource::kDefault;
  }
  last_files_ = *std::move(files);
  last_layer_ = *std::move(layer);

  for (const std::string& key : result.applied)
    logInfo("config: ", key, " = ", findConfigKey(key)->value_text(current_), " (config file changed)");
  for (const std::string& key : result.need_restart)
    logWarning("config: ", key, " changed in the config file: needs a restart of sluiced; not applied");
  for (const std::string& key : result.overridden)
    logInfo("config: ", key, " changed in the config file but is set by a flag, which stays in force");
  return result;
}

SluicedConfig RuntimeConfig::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

}  // namespace sluice
