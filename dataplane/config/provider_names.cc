// The registry of provider names (provider_names.h).
#include "dataplane/config/provider_names.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sluice {
namespace {

struct ProviderName {
  std::string_view key;
  std::string_view name;
  ProviderKind kind;
};

// A function-local static: registrations from other translation units may
// run before any namespace-scope object of this one is constructed.
std::vector<ProviderName>& providerNames() {
  static std::vector<ProviderName> names;
  return names;
}

}  // namespace

bool registerProviderName(std::string_view key, std::string_view name, ProviderKind kind) {
  if (isProviderName(key, name)) {
    // Nothing can log yet.
    std::fprintf(stderr, "sluiced: %.*s \"%.*s\" registered twice\n", static_cast<int>(key.size()), key.data(),
                 static_cast<int>(name.size()), name.data());
    std::abort();
  }
  providerNames().push_back({key, name, kind});
  return true;
}

bool isProviderName(std::string_view key, std::string_view name) {
  const auto& names = providerNames();
  return std::any_of(names.begin(), names.end(),
                     [&](const ProviderName& p) { return p.key == key && p.name == name; });
}

std::string providerChoices(std::string_view key, const std::vector<std::string_view>& first) {
  std::vector<ProviderName> of_key;
  for (const ProviderName& p : providerNames())
    if (p.key == key) of_key.push_back(p);
  std::sort(of_key.begin(), of_key.end(), [](const ProviderName& a, const ProviderName& b) {
    return a.kind != b.kind ? a.kind == ProviderKind::kReal : a.name < b.name;
  });
  std::vector<std::string_view> all = first;
  for (const ProviderName& p : of_key) all.push_back(p.name);
  std::string text;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) text += i + 1 == all.size() ? " or " : ", ";
    text += all[i];
  }
  return text;
}

}  // namespace sluice
