// The overlay's forwarding state as the fast path reads it: remote pod CIDRs
// (IPv4 and IPv6) -> tunnel, remote VTEP address -> tunnel, and each tunnel's
// header template. The underlay is of one family per node: IPv4 VTEPs with
// the 50-byte templates, or IPv6 VTEPs with the 70-byte ones (encap_template6.h),
// whose decapsulated packets carry the tunnel's 32-bit id (tunnelKeyId) in the
// flow key's tun_src where an IPv4 underlay carries the VTEP address: the key
// and its masks stay as they are, and a tunnelled megaflow still names its
// sender.
// Built whole by the control path (overlay_control.h) on any change of remote
// nodes or neighbors, then immutable and shared by every PMD's snapshot (as
// the forwarding table is). PMDs read it without locks; the slow path's
// translation (flow_translate.cc) reads it too.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dataplane/datapath/overlay/encap_template.h"
#include "dataplane/datapath/overlay/encap_template6.h"

namespace sluice::vxlan {

// Remote nodes (tunnels) a node can have: sizes the per-PMD tunnel counters
// (32 bytes a tunnel, 256 KiB per PMD) and control's tunnel indices. Above
// the 5,000 nodes a Kubernetes cluster is tested up to; the tables a PMD
// reads grow with the nodes there are, not with this.
inline constexpr uint16_t kMaxTunnels = 8192;
inline constexpr uint16_t kNoTunnel = 0xffff;

// What an IPv6 underlay's decapsulated packet carries in tun_src: its
// tunnel's index + 1 (never 0, which means "not tunnelled"). An index a
// removed node freed and another took names the new node: megaflows with it
// are revalidated by the republish that follows every node change.
inline uint32_t tunnelKeyId(uint16_t tunnel) { return uint32_t{tunnel} + 1; }

struct RemoteRoute {
  uint32_t net_be = 0;   // network order, host bits zero
  uint32_t mask_be = 0;  // network order
  uint16_t tunnel = kNoTunnel;
};

// A remote node's IPv6 pod CIDR.
struct RemoteRoute6 {
  std::array<uint8_t, 16> net{};  // network order, host bits zero
  uint8_t prefix_len = 0;         // 0..128
  uint16_t tunnel = kNoTunnel;

  bool contains(const uint8_t* addr) const {
    uint32_t bits = prefix_len;
    for (uint32_t i = 0; bits != 0; ++i) {
      const uint32_t take = bits >= 8 ? 8 : bits;
      const auto mask = static_cast<uint8_t>(0xff00u >> take);
      if (((addr[i] ^ net[i]) & mask) != 0) return false;
      bits -= take;
    }
    return true;
  }
};

class OverlayTables {
 public:
  struct Tunnel {
    uint32_t vtep_be = 0;  // IPv6 underlay: tunnelKeyId of the tunnel
    EncapTemplate tmpl;    // IPv4 underlay
    std::array<uint8_t, 16> vtep6{};  // IPv6 underlay: the remote VTEP (zero: IPv4)
  };

  OverlayTables() : OverlayTables({}, {}) {}
  // tunnels[i].tmpl.tunnel must be i (at most kMaxTunnels; vtep_be 0 marks
  // a free index, never matched); routes of either family may come
  // in any order (they are kept longest prefix first).
  // templates6: an IPv6 underlay's templates, one per tunnel index (empty
  // on an IPv4 underlay).
  OverlayTables(std::vector<Tunnel> tunnels, std::vector<RemoteRoute> routes,
                std::vector<RemoteRoute6> routes6 = {}, std::vector<EncapTemplate6> templates6 = {});

  // Longest-prefix match over the remote pod CIDRs; kNoTunnel if none.
  // Linear: read by translations only (once per megaflow), not per packet.
  uint16_t routeFor(uint32_t dst_be) const {
    const RemoteRoute* r = longestMatch(dst_be);
    return r != nullptr ? r->tunnel : kNoTunnel;
  }
  // The route routeFor() takes; null if none.
  const RemoteRoute* longestMatch(uint32_t dst_be) const {
    for (const RemoteRoute& r : routes_)
      if ((dst_be & r.mask_be) == r.net_be) return &r;
    return nullptr;
  }
  // Every remote pod CIDR, longest prefix first (translations size their
  // destination masks from them).
  const std::vector<RemoteRoute>& routes() const { return routes_; }
  // longestMatch for an IPv6 destination (16 bytes, network order); null if
  // none. Linear as well: once per megaflow.
  const RemoteRoute6* longestMatch6(const uint8_t* dst) const {
    for (const RemoteRoute6& r : routes6_)
      if (r.contains(dst)) return &r;
    return nullptr;
  }
  // Every remote IPv6 pod CIDR, longest prefix first.
  const std::vector<RemoteRoute6>& routes6() const { return routes6_; }
  // The tunnel whose remote VTEP is vtep_be; kNoTunnel if none. Per decapped
  // packet (rx counters): open addressing, at most half full.
  uint16_t tunnelForVtep(uint32_t vtep_be) const {
    uint32_t i = slotFor(vtep_be);
    for (;;) {
      const VtepSlot& s = vtep_slots_[i];
      if (s.tunnel == kNoTunnel) return kNoTunnel;
      if (s.vtep_be == vtep_be) return s.tunnel;
      i = (i + 1) & vtep_slot_mask_;
    }
  }
  // The tunnel whose remote IPv6 VTEP is vtep (16 bytes); kNoTunnel if
  // none. Per decapsulated packet of an IPv6 underlay, as tunnelForVtep.
  uint16_t tunnelForVtep6(const uint8_t* vtep) const {
    if (vtep6_slots_.empty()) return kNoTunnel;  // no remote node yet
    uint32_t i = slotFor6(vtep);
    for (;;) {
      const Vtep6Slot& s = vtep6_slots_[i];
      if (s.tunnel == kNoTunnel) return kNoTunnel;
      if (std::memcmp(s.vtep.data(), vtep, 16) == 0) return s.tunnel;
      i = (i + 1) & vtep_slot_mask_;
    }
  }
  const EncapTemplate& tunnel(uint16_t id) const { return tunnels_[id].tmpl; }
  const EncapTemplate6& tunnel6(uint16_t id) const { return templates6_[id]; }
  size_t tunnelCount() const { return tunnels_.size(); }

 private:
  struct VtepSlot {
    uint32_t vtep_be = 0;
    uint16_t tunnel = kNoTunnel;
  };
  struct Vtep6Slot {
    std::array<uint8_t, 16> vtep{};
    uint16_t tunnel = kNoTunnel;
  };
  uint32_t slotFor(uint32_t ip_be) const {
    return static_cast<uint32_t>((uint64_t{ip_be} * 0x9E3779B97F4A7C15ull) >> 32) & vtep_slot_mask_;
  }
  uint32_t slotFor6(const uint8_t* vtep) const {
    uint64_t hi, lo;
    std::memcpy(&hi, vtep, 8);
    std::memcpy(&lo, vtep + 8, 8);
    return static_cast<uint32_t>(((hi ^ (lo * 0x9E3779B97F4A7C15ull)) * 0x9E3779B97F4A7C15ull) >> 32) &
           vtep_slot_mask_;
  }

  std::vector<Tunnel> tunnels_;
  std::vector<RemoteRoute> routes_;
  std::vector<RemoteRoute6> routes6_;
  // Sized for the tunnels there are (a power of two, at least twice their
  // count, so a probe ends at an empty slot soon): a node with a few peers
  // keeps its VTEP lookups in a cache line or two.
  std::vector<VtepSlot> vtep_slots_;
  std::vector<EncapTemplate6> templates6_;
  std::vector<Vtep6Slot> vtep6_slots_;  // as vtep_slots_, empty on an IPv4 underlay
  uint32_t vtep_slot_mask_ = 0;
};

}  // namespace sluice::vxlan
