// libFuzzer target: sluiced's JSON configuration parser (a ConfigMap an
// operator edits by hand). Any input must produce a config or a clean error.
#include <cstdint>
#include <string>

#include "dataplane/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto config = sluice::applyConfigJson(std::string(reinterpret_cast<const char*>(data), size), {});
  if (config.ok() && (config->pmd_cores.empty() || config->max_ports == 0)) __builtin_trap();
  return 0;
}
