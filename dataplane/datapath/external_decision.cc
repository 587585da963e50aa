#include "dataplane/datapath/external_decision.h"

#include <rte_byteorder.h>

#include <algorithm>
#include <bit>

#include "dataplane/datapath/flow_translate.h"

namespace sluice {

bool externalSourceInCluster(const RouteTables& tables, uint32_t src_be, uint32_t* bits) {
  const uint32_t src = rte_be_to_cpu_32(src_be);
  uint32_t need = 1;
  uint32_t inside_len = 0;  // nonzero: the length of a cluster range holding src
  auto range = [&](uint32_t net_be, uint32_t len) {
    const auto d = static_cast<uint32_t>(std::countl_zero(src ^ rte_be_to_cpu_32(net_be)));
    if (d >= len) inside_len = std::max(inside_len, std::max<uint32_t>(len, 1));
    else need = std::max(need, d + 1);
  };
  if (tables.pod_mask_be != 0) range(tables.pod_net_be, static_cast<uint32_t>(std::popcount(tables.pod_mask_be)));
  range(tables.gateway_ip_be, 32);
  if (tables.prefixes != nullptr)
    for (const RoutedPrefix& p : tables.prefixes->v4()) range(p.net_be, static_cast<uint32_t>(std::popcount(p.mask_be)));
  if (tables.overlay != nullptr)
    for (const vxlan::RemoteRoute& r : tables.overlay->routes())
      range(r.net_be, static_cast<uint32_t>(std::popcount(r.mask_be)));
  // Whole octets: a longer prefix than needed is never wrong (a refused
  // source's stays inside its range, an allowed one's outside every range).
  *bits = std::min<uint32_t>(32, ((inside_len != 0 ? inside_len : need) + 7) / 8 * 8);
  return inside_len != 0;
}

bool externalDestinationAllowed(uint32_t dst_be, uint32_t* bits) {
  const uint32_t dst = rte_be_to_cpu_32(dst_be);
  const uint32_t first = dst >> 24;
  *bits = std::max<uint32_t>(*bits, first == 169 ? 16 : 8);
  if (first >= 224 || first == 0 || first == 127) return false;
  return (dst >> 16) != 0xa9fe;  // 169.254.0.0/16
}

}  // namespace sluice
