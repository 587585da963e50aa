// libFuzzer target for the CNI_* environment, CNI_ARGS above all: the
// runtime passes it, and through Multus's pod annotations part of it is the
// pod author's (K8S_POD_UID decides which host directory ADD links to). The
// input is split at newlines into CNI_ARGS, CNI_IFNAME, CNI_CONTAINERID,
// CNI_PATH and CNI_COMMAND, so the fuzzer varies each; every verb must answer
// with a value (never crash, throw or hang), and what ADD reads from the
// pairs (K8S_POD_UID, the pod's names) goes through the same checks.
// Built only with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cni-plugin/cni_env.h"
#include "cni-plugin/pod_socket_volume.h"

namespace {

// The next newline-separated field of `rest` (all of it when none is left).
std::string nextField(std::string_view& rest) {
  const size_t nl = rest.find('\n');
  std::string field(rest.substr(0, nl));
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return field;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  sluice::cni::Environment env = {{"CNI_ARGS", nextField(rest)},
                                  {"CNI_IFNAME", nextField(rest)},
                                  {"CNI_CONTAINERID", nextField(rest)},
                                  {"CNI_PATH", nextField(rest)},
                                  {"CNI_NETNS", "/var/run/netns/fuzz"}};
  const std::string command = nextField(rest);
  for (const char* verb : {"ADD", "DEL", "CHECK", "GC", "STATUS"}) {
    env["CNI_COMMAND"] = command.empty() ? verb : command;
    absl::StatusOr<sluice::cni::CniEnv> parsed = sluice::cni::parseEnv(env);
    if (!parsed.ok()) continue;
    if (std::optional<std::string> uid = parsed->arg(sluice::cni::kPodUidArg)) {
      if (sluice::cni::validatePodUid(*uid).ok()) {
        (void)sluice::cni::emptyDirHostPath("/var/lib/kubelet", *uid, "sluice-sockets");
      }
    }
    (void)parsed->arg("K8S_POD_NAMESPACE");
    (void)parsed->arg("K8S_POD_NAME");
    if (!command.empty()) break;  // the input named its own verb
  }
  return 0;
}
