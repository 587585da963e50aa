// libFuzzer target for a chained plugin's result (prevResult), which ADD
// appends to and CHECK compares against: another plugin's output, in any of
// the spec versions this plugin speaks. The input is the prevResult object's
// JSON text. Every input must give a value (never crash, throw or hang); a
// result that parses must read back its addresses and convert to every
// version's form, as ADD does when it answers in the config's version.
// Built only with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cni-plugin/cni_result.h"
#include "cni-plugin/netconf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return 0;  // the netconf parser refuses anything but an object first
  absl::StatusOr<sluice::cni::Result> prev = sluice::cni::parseResult(doc, "prevResult");
  if (!prev.ok()) return 0;
  (void)prev->attachmentAddresses("prevResult");
  for (size_t i = 0; i < prev->interfaces.size(); ++i) (void)prev->addressesForInterface(i);
  for (const sluice::cni::SpecVersion& v : sluice::cni::kSpecVersions) {
    // What ADD prints must be valid JSON that reads back as a result.
    const nlohmann::json out = prev->toJson(v.name);
    const std::string printed = out.dump();
    (void)sluice::cni::parseResult(nlohmann::json::parse(printed), "round trip");
  }
  return 0;
}
