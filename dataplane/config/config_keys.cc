#include "dataplane/config/config_keys.h"

#include <absl/strings/str_join.h>

#include <optional>
#include <type_traits>
#include <vector>

namespace sluice {
namespace {

template <typename T>
std::string valueText(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else if constexpr (std::is_same_v<T, std::vector<unsigned>>) {
    return absl::StrJoin(value, ",");
  } else if constexpr (std::is_same_v<T, std::optional<Ipv6Cidr>> || std::is_same_v<T, std::optional<Ipv6Address>> ||
                       std::is_same_v<T, std::optional<Ipv4Address>>) {
    return value ? value->toString() : std::string();  // unset: empty, as the key is given
  } else {
    return value.toString();
  }
}

constexpr ConfigKey kConfigKeys[] = {
#define SLUICE_CONFIG_KEY(key, Type, field, default_value, kind, reload, help) \
  {key, ConfigKeyKind::kind, ConfigReload::reload, help, [](const SluicedConfig& c) { return valueText(c.field); }},
#include "dataplane/config/config_keys.def"
#undef SLUICE_CONFIG_KEY
};

}  // namespace

std::span<const ConfigKey> configKeys() { return kConfigKeys; }

const ConfigKey* findConfigKey(std::string_view name) {
  for (const ConfigKey& key : kConfigKeys)
    if (name == key.name) return &key;
  return nullptr;
}

}  // namespace sluice
