#include "dataplane/datapath/overlay/overlay_tables.h"

#include <algorithm>
#include <bit>

namespace sluice::vxlan {

OverlayTables::OverlayTables(std::vector<Tunnel> tunnels, std::vector<RemoteRoute> routes,
                             std::vector<RemoteRoute6> routes6, std::vector<EncapTemplate6> templates6)
    : tunnels_(std::move(tunnels)),
      routes_(std::move(routes)),
      routes6_(std::move(routes6)),
      templates6_(std::move(templates6)) {
  // Longest prefix first (a wider mask has more one bits).
  std::stable_sort(routes_.begin(), routes_.end(), [](const RemoteRoute& a, const RemoteRoute& b) {
    return std::popcount(a.mask_be) > std::popcount(b.mask_be);
  });
  std::stable_sort(routes6_.begin(), routes6_.end(),
                   [](const RemoteRoute6& a, const RemoteRoute6& b) { return a.prefix_len > b.prefix_len; });
  if (tunnels_.size() > kMaxTunnels) tunnels_.resize(kMaxTunnels);
  const size_t slots = std::bit_ceil(std::max<size_t>(16, 2 * tunnels_.size()));
  vtep_slots_.assign(slots, VtepSlot{});
  vtep_slot_mask_ = static_cast<uint32_t>(slots - 1);
  for (size_t t = 0; t < tunnels_.size(); ++t) {
    if (tunnels_[t].vtep_be == 0) continue;  // a free tunnel index
    uint32_t i = slotFor(tunnels_[t].vtep_be);
    while (vtep_slots_[i].tunnel != kNoTunnel) i = (i + 1) & vtep_slot_mask_;
    vtep_slots_[i] = {tunnels_[t].vtep_be, static_cast<uint16_t>(t)};
  }
  if (templates6_.empty()) return;
  templates6_.resize(tunnels_.size());
  vtep6_slots_.assign(slots, Vtep6Slot{});
  for (size_t t = 0; t < tunnels_.size(); ++t) {
    if (tunnels_[t].vtep_be == 0) continue;
    uint32_t i = slotFor6(tunnels_[t].vtep6.data());
    while (vtep6_slots_[i].tunnel != kNoTunnel) i = (i + 1) & vtep_slot_mask_;
    vtep6_slots_[i] = {tunnels_[t].vtep6, static_cast<uint16_t>(t)};
  }
}

}  // namespace sluice::vxlan
