// libFuzzer target for the network config parser, the part of sluice-cni
// that reads untrusted input (stdin from the runtime, shaped by whoever wrote
// the NetworkAttachmentDefinition). The parser must return a value for every
// input: never crash, throw or hang. Built only with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cni-plugin/cni_result.h"
#include "cni-plugin/netconf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sluice::cni::NetConf> conf = sluice::cni::parseNetConf(text);
  if (conf.ok() && conf->prev_result) {
    // prevResult is untrusted too: validate it the way ADD and CHECK do,
    // then read its addresses as they do (one per family and interface).
    absl::StatusOr<sluice::cni::Result> prev = sluice::cni::parseResult(*conf->prev_result, "prevResult");
    if (prev.ok()) {
      (void)prev->attachmentAddresses("prevResult");
      for (size_t i = 0; i < prev->interfaces.size(); ++i) (void)prev->addressesForInterface(i);
    }
  }
  (void)sluice::cni::peekCniVersion(text);
  return 0;
}
