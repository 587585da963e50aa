// The names a configuration key that selects an implementation accepts
// (sriov-pf-control, offload-provider): each implementation adds its name
// when it registers itself with its module's provider registry, at static
// initialisation, so the configuration checks a value against what this
// binary holds without naming any implementation. A stand-in (a test
// double selectable by configuration) is listed after the real ones.
// Registration before main; lookups from the main thread after.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

enum class ProviderKind { kReal, kStandIn };

// Adds `name` to the names `key` accepts; aborts on a name given twice (a
// build mistake). Returns true so a registering macro has something to
// initialise.
bool registerProviderName(std::string_view key, std::string_view name, ProviderKind kind);
bool isProviderName(std::string_view key, std::string_view name);
// "a, b or c": `first` (values the key itself gives a meaning, e.g. "off"),
// then the real implementations by name, then the stand-ins by name.
std::string providerChoices(std::string_view key, const std::vector<std::string_view>& first = {});

}  // namespace sluice
