#include "dataplane/datapath/vxlan/vxlan_decap.h"

#include <cstring>

namespace sluice::vxlan {
namespace {

inline uint16_t load16be(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
inline uint32_t load32raw(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline DecapInfo drop(DropReason r) {
  DecapInfo d;
  d.cls = UplinkClass::kDrop;
  d.reason = r;
  return d;
}

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint8_t kProtoUdp = 17;
// IPv4 flags/fragment-offset word: MF bit and the 13-bit offset.
constexpr uint16_t kIpMoreFragments = 0x2000;
constexpr uint16_t kIpFragOffsetMask = 0x1fff;

}  // namespace

DecapInfo classifyUplinkFrame(const uint8_t* data, uint32_t len, const DecapConfig& cfg) {
  if (len < kEthLen) return drop(DropReason::kVxlanTruncated);
  const uint16_t eth_type = load16be(data + 12);
  if (eth_type == kEtherTypeArp) {
    DecapInfo d;
    d.cls = UplinkClass::kArp;
    return d;
  }
  if (eth_type != kEtherTypeIpv4) return drop(DropReason::kUplinkNotVxlan);

  const uint8_t* ip = data + kEthLen;
  const uint32_t l3_avail = len - kEthLen;
  if (l3_avail < kIpv4Len) return drop(DropReason::kVxlanTruncated);
  const uint32_t ihl_bytes = (ip[0] & 0x0fu) * 4u;
  if ((ip[0] >> 4) != 4 || ihl_bytes < kIpv4Len) return drop(DropReason::kVxlanBadOuterIp);
  if (ihl_bytes > l3_avail) return drop(DropReason::kVxlanTruncated);
  const uint32_t total_len = load16be(ip + 2);
  if (total_len < ihl_bytes) return drop(DropReason::kVxlanBadOuterIp);
  if (total_len > l3_avail) return drop(DropReason::kVxlanTruncated);
  const uint16_t frag = load16be(ip + 6);
  if ((frag & (kIpMoreFragments | kIpFragOffsetMask)) != 0) return drop(DropReason::kVxlanFragment);
  const uint32_t dst_be = load32raw(ip + 16);
  if (dst_be != cfg.vtep_ip_be) return drop(DropReason::kVxlanWrongVtep);
  if (ip[9] != kProtoUdp) return drop(DropReason::kUplinkNotVxlan);

  // From here on only the IPv4 payload counts (Ethernet padding excluded).
  const uint8_t* udp = ip + ihl_bytes;
  const uint32_t l4_avail = total_len - ihl_bytes;
  if (l4_avail < kUdpLen) return drop(DropReason::kVxlanTruncated);
  if (load16be(udp + 2) != kVxlanUdpPort) return drop(DropReason::kUplinkNotVxlan);
  const uint32_t udp_len = load16be(udp + 4);
  if (udp_len < kUdpLen + kVxlanLen || udp_len > l4_avail) return drop(DropReason::kVxlanTruncated);

  const uint8_t* vx = udp + kUdpLen;
  // Flags byte exactly I; the 24 reserved bits after it are ignored on
  // receipt (RFC 7348 §5: "MUST be ignored").
  if (vx[0] != kVxlanFlagI) return drop(DropReason::kVxlanBadFlags);
  const uint32_t vni = (uint32_t{vx[4]} << 16) | (uint32_t{vx[5]} << 8) | vx[6];
  if (vni != cfg.vni) return drop(DropReason::kVxlanUnknownVni);
  if (udp_len - kUdpLen - kVxlanLen < kEthLen) return drop(DropReason::kVxlanTruncated);
  // ARP inside the tunnel would be answered by the pod-side ARP stage and the
  // reply sent out unencapsulated: peers must route to our pods through our
  // gateway with a static neighbor entry (as flannel programs the kernel).
  if (load16be(vx + kVxlanLen + 12) == kEtherTypeArp) return drop(DropReason::kVxlanInnerArp);

  DecapInfo d;
  d.cls = UplinkClass::kVxlan;
  d.inner_ofs = static_cast<uint16_t>(kEthLen + ihl_bytes + kUdpLen + kVxlanLen);
  d.inner_len = static_cast<uint16_t>(udp_len - kUdpLen - kVxlanLen);
  d.vni = vni;
  d.outer_src_be = load32raw(ip + 12);
  d.outer_dst_be = dst_be;
  return d;
}

}  // namespace sluice::vxlan
