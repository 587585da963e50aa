// libFuzzer target for what the node controller reads from the Kubernetes
// API: a watch line (event, Node object, Status), the sluice.dev/vtep
// annotation and RFC 3339 times. Anything may arrive; nothing may crash,
// hang or leak, and a parsed Node must hold only what the parser promises.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/node_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  std::optional<sluice::agent::WatchEvent> e = sluice::agent::parseWatchEvent(text, &error);
  if (e && e->node) {
    for (const sluice::Ipv4Cidr& c : e->node->pod_cidrs)
      if (c.prefix_len > 32) __builtin_trap();
    if (e->node->name.empty()) __builtin_trap();
    if (e->node->vtep && (e->node->vtep->vni == 0 || e->node->vtep->vni > 0xffffff)) __builtin_trap();
  }
  sluice::agent::ParsedVtep v = sluice::agent::parseVtepAnnotation(text);
  if (v.vtep) {
    // What the controller writes back reads the same.
    sluice::agent::ParsedVtep again = sluice::agent::parseVtepAnnotation(sluice::agent::formatVtepAnnotation(*v.vtep));
    if (!again.vtep || !(*again.vtep == *v.vtep)) __builtin_trap();
  }
  (void)sluice::agent::parseRfc3339(text);
  return 0;
}
