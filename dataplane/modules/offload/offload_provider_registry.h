// The NIC flow engines partial offload can use, by the name configuration
// key `offload-provider` gives them: each implementation of OffloadProvider
// registers itself in its own folder,
//
//   SLUICE_REGISTER_OFFLOAD_PROVIDER(rte_flow, makeRteFlowProvider);
//   SLUICE_REGISTER_OFFLOAD_PROVIDER_STAND_IN(software, makeSoftwareProvider, "...");
//
// and the offload feature looks the configured name up, so the module never
// names a stand-in. A stand-in's warning is logged when it is chosen. The
// registering library must be linked whole (sluice_register_provider in
// dataplane/CMakeLists.txt) so the linker keeps the initialiser. Registered
// before main; looked up from the main thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "dataplane/modules/offload/offload_provider.h"

namespace sluice::offload {

// The configuration key whose value names the provider ("off" besides the
// registered names: no offload).
inline constexpr std::string_view kOffloadProviderKey = "offload-provider";

// max_flows: the configured cap on offloaded flows (offload-max-flows).
using OffloadProviderFactory = std::unique_ptr<OffloadProvider> (*)(uint32_t max_flows);

struct OffloadProviderRegistration {
  std::string_view name;
  OffloadProviderFactory make;
  const char* warning;  // logged when chosen; null for a real implementation
};

bool registerOffloadProvider(std::string_view name, OffloadProviderFactory make, const char* warning);
// Null when no provider has that name.
const OffloadProviderRegistration* findOffloadProvider(std::string_view name);

}  // namespace sluice::offload

#define SLUICE_REGISTER_OFFLOAD_PROVIDER(name, factory)                                 \
  [[maybe_unused]] static const bool sluice_registered_offload_provider_##name = \
      ::sluice::offload::registerOffloadProvider(#name, factory, nullptr)
#define SLUICE_REGISTER_OFFLOAD_PROVIDER_STAND_IN(name, factory, warning)               \
  [[maybe_unused]] static const bool sluice_registered_offload_provider_##name = \
      ::sluice::offload::registerOffloadProvider(#name, factory, warning)
