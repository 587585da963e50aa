// libFuzzer target for an IPAM plugin's ADD output: the delegate is another
// program (host-local, whereabouts, static, or whatever "ipam.type" names),
// and its stdout decides the pod's addresses, which go to sluiced. Every
// input must give a value (never crash, throw or hang); an accepted result
// must yield the attachment's addresses (at most one per family) and convert
// to every version's form as ADD's answer does.
// Built only with SLUICE_FUZZ=ON (clang).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cni-plugin/ipam_delegate.h"
#include "cni-plugin/logger.h"
#include "cni-plugin/netconf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const sluice::cni::Environment env;
  std::ostringstream err;
  sluice::cni::Logger log(err);
  // Nothing is run: parseAddResult reads the output alone.
  const sluice::cni::IpamDelegate ipam(env, {}, "fuzz-ipam", std::chrono::milliseconds(1), log);
  absl::StatusOr<sluice::cni::Result> result = ipam.parseAddResult(text);
  if (!result.ok()) return 0;
  absl::StatusOr<sluice::cni::AttachmentAddresses> addresses = result->attachmentAddresses("ipam fuzz-ipam");
  if (addresses.ok()) {
    if (addresses->ipv4) (void)addresses->ipv4->address.toString();
    if (addresses->ipv6) (void)addresses->ipv6->address.toString();
  }
  for (const sluice::cni::SpecVersion& v : sluice::cni::kSpecVersions) (void)result->toJson(v.name).dump();
  return 0;
}
