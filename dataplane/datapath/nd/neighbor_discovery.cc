#include "dataplane/datapath/nd/neighbor_discovery.h"

#include <cstring>

namespace sluice {
namespace {

constexpr uint32_t kEthLen = 14;
constexpr uint32_t kIpv6Len = 40;
constexpr uint32_t kNsLen = 24;  // type, code, checksum, reserved, target
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kNdHopLimit = 255;  // only a packet never routed may carry ND
constexpr uint8_t kOptionSourceLinkLayer = 1;
constexpr uint8_t kOptionTargetLinkLayer = 2;
constexpr uint8_t kOptionMtu = 5;
constexpr uint32_t kRsLen = 8;           // type, code, checksum, reserved
constexpr uint32_t kRaLen = 16;          // type, code, checksum, hop limit, flags, lifetime, reachable, retransmit
constexpr uint8_t kAdvertisedHopLimit = 64;  // what a pod's own packets should start with
// Neighbor advertisement flags (first byte after the checksum).
constexpr uint8_t kFlagRouter = 0x80;
constexpr uint8_t kFlagSolicited = 0x40;
constexpr uint8_t kFlagOverride = 0x20;

// ff02::1, the all-nodes group, and its Ethernet group address 33:33:00:00:00:01.
constexpr uint8_t kAllNodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr uint8_t kAllNodesMac[6] = {0x33, 0x33, 0, 0, 0, 1};
// ff02::2, the all-routers group a host solicits routers at.
constexpr uint8_t kAllRouters[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

bool isZero16(const uint8_t* a) {
  uint8_t any = 0;
  for (int i = 0; i < 16; ++i) any |= a[i];
  return any == 0;
}

// ff02::1:ffXX:XXXX with the target's low 24 bits (RFC 4291 section 2.7.1).
bool isSolicitedNodeGroupOf(const uint8_t* dst, const uint8_t* target) {
  static constexpr uint8_t kPrefix[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};
  return std::memcmp(dst, kPrefix, 13) == 0 && std::memcmp(dst + 13, target + 13, 3) == 0;
}

uint32_t sum16(const uint8_t* p, uint32_t len, uint32_t sum) {
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len & 1) sum += static_cast<uint32_t>(p[len - 1] << 8);
  return sum;
}

NdVerdict drop(DropReason r) { return {false, r}; }

// Options from icmp[first, payload): each at least 8 bytes (a length of 0
// is invalid) and inside the message. Sets *source_link_layer when one is a
// source link-layer address option.
bool optionsWellFormed(const uint8_t* icmp, uint32_t first, uint32_t payload, bool* source_link_layer) {
  for (uint32_t ofs = first; ofs < payload;) {
    if (payload - ofs < 2 || icmp[ofs + 1] == 0) return false;
    const uint32_t opt_len = icmp[ofs + 1] * 8U;
    if (opt_len > payload - ofs) return false;
    *source_link_layer |= icmp[ofs] == kOptionSourceLinkLayer;
    ofs += opt_len;
  }
  return true;
}

void putChecksum(uint8_t* ip, uint8_t* icmp, uint32_t icmp_len) {
  icmp[2] = icmp[3] = 0;
  const uint16_t checksum = icmpv6Checksum(ip + 8, ip + 24, icmp, icmp_len);
  icmp[2] = static_cast<uint8_t>(checksum >> 8);
  icmp[3] = static_cast<uint8_t>(checksum);
}

// The IPv6 header of an answer: version 6, traffic class and flow label 0,
// ICMPv6 directly, hop limit 255 (only a packet never routed may carry ND).
void putAnswerHeader(uint8_t* ip, uint32_t icmp_len, const uint8_t* src, const uint8_t* dst) {
  ip[0] = 0x60;
  ip[1] = ip[2] = ip[3] = 0;
  ip[4] = static_cast<uint8_t>(icmp_len >> 8);
  ip[5] = static_cast<uint8_t>(icmp_len);
  ip[6] = kProtoIcmpv6;
  ip[7] = kNdHopLimit;
  std::memmove(ip + 8, src, 16);
  std::memmove(ip + 24, dst, 16);
}

// See the header: a Router Solicitation (payload bytes of ICMPv6 at icmp,
// checksum not yet checked) answered with a Router Advertisement in place.
NdVerdict answerRouterSolicitation(const Ipv6PodNet& net, const uint8_t gateway_mac[6], uint8_t* frame,
                                   uint32_t payload, uint32_t room, uint32_t* new_len, uint16_t link_mtu) {
  uint8_t* ip = frame + kEthLen;
  uint8_t* icmp = ip + kIpv6Len;
  const uint8_t* src = ip + 8;
  const uint8_t* dst = ip + 24;
  if (ip[7] != kNdHopLimit || icmp[1] != 0 || payload < kRsLen) return drop(DropReason::kNdMalformed);
  if (icmpv6Checksum(src, dst, icmp, payload) != 0) return drop(DropReason::kNdMalformed);
  if (src[0] == 0xff) return drop(DropReason::kNdMalformed);
  bool source_link_layer = false;
  if (!optionsWellFormed(icmp, kRsLen, payload, &source_link_layer)) return drop(DropReason::kNdMalformed);
  const bool unspecified = isZero16(src);
  if (unspecified && source_link_layer) return drop(DropReason::kNdMalformed);
  if (std::memcmp(dst, kAllRouters, 16) != 0 && !net.isGateway(dst)) return drop(DropReason::kNdNotAnswered);
  const uint32_t frame_len = link_mtu != 0 ? kRouterAdvertisementFrameLen : kRouterAdvertisementNoMtuFrameLen;
  if (room < frame_len) return drop(DropReason::kNdMalformed);

  uint8_t asker[16], asker_mac[6];
  std::memcpy(asker, src, 16);
  std::memcpy(asker_mac, frame + 6, 6);
  std::memcpy(frame, unspecified ? kAllNodesMac : asker_mac, 6);
  std::memcpy(frame + 6, gateway_mac, 6);
  const uint32_t ra_len = frame_len - kEthLen - kIpv6Len;
  putAnswerHeader(ip, ra_len, net.gateway_link_local, unspecified ? kAllNodes : asker);
  std::memset(icmp, 0, ra_len);
  icmp[0] = kIcmpv6RouterAdvertisement;
  icmp[4] = kAdvertisedHopLimit;
  icmp[6] = static_cast<uint8_t>(net.router_lifetime_s >> 8);
  icmp[7] = static_cast<uint8_t>(net.router_lifetime_s);
  // Reachable time and retransmit timer 0: unspecified, the host keeps its own.
  uint8_t* opt = icmp + kRaLen;
  opt[0] = kOptionSourceLinkLayer;
  opt[1] = 1;  // 8 bytes
  std::memcpy(opt + 2, gateway_mac, 6);
  if (link_mtu != 0) {
    opt += 8;
    opt[0] = kOptionMtu;
    opt[1] = 1;
    opt[6] = static_cast<uint8_t>(link_mtu >> 8);
    opt[7] = static_cast<uint8_t>(link_mtu);
  }
  putChecksum(ip, icmp, ra_len);
  *new_len = frame_len;
  return {true, DropReason{}};
}

}  // namespace

uint16_t icmpv6Checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* body, uint32_t body_len) {
  uint32_t sum = sum16(src, 16, 0);
  sum = sum16(dst, 16, sum);
  sum += body_len >> 16;
  sum += body_len & 0xffff;
  sum += kProtoIcmpv6;
  sum = sum16(body, body_len, sum);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

NdVerdict answerNeighborDiscovery(const Ipv6PodNet& net, const uint8_t gateway_mac[6], uint8_t* frame, uint32_t len,
                                  uint32_t room, uint32_t* new_len, bool router, uint16_t link_mtu) {
  if (len < kEthLen + kIpv6Len + 4) return drop(DropReason::kNdMalformed);
  uint8_t* ip = frame + kEthLen;
  if ((ip[0] >> 4) != 6) return drop(DropReason::kNdMalformed);
  const uint32_t payload = static_cast<uint32_t>(ip[4] << 8 | ip[5]);
  // Extension headers before neighbor discovery are legal but never sent
  // by a host's stack; refusing them keeps this walk-free.
  if (ip[6] != kProtoIcmpv6 || payload > len - kEthLen - kIpv6Len || payload < 4)
    return drop(DropReason::kNdMalformed);
  uint8_t* icmp = ip + kIpv6Len;
  if (!isNeighborDiscoveryType(icmp[0])) return drop(DropReason::kNdMalformed);
  if (icmp[0] == kIcmpv6RouterSolicitation && router && net.enabled && net.router_lifetime_s != 0)
    return answerRouterSolicitation(net, gateway_mac, frame, payload, room, new_len, link_mtu);
  if (icmp[0] != kIcmpv6NeighborSolicitation) return drop(DropReason::kNdNotServed);
  const uint8_t* src = ip + 8;
  const uint8_t* dst = ip + 24;
  const uint8_t* target = icmp + 8;
  if (ip[7] != kNdHopLimit || icmp[1] != 0 || payload < kNsLen) return drop(DropReason::kNdMalformed);
  if (icmpv6Checksum(src, dst, icmp, payload) != 0) return drop(DropReason::kNdMalformed);
  if (target[0] == 0xff || src[0] == 0xff) return drop(DropReason::kNdMalformed);
  bool source_link_layer = false;
  if (!optionsWellFormed(icmp, kNsLen, payload, &source_link_layer)) return drop(DropReason::kNdMalformed);
  const bool dad = isZero16(src);
  const bool to_group = isSolicitedNodeGroupOf(dst, target);
  if (dad && (!to_group || source_link_layer)) return drop(DropReason::kNdMalformed);
  if (!to_group && std::memcmp(dst, target, 16) != 0) return drop(DropReason::kNdMalformed);

  const bool for_gateway = net.isGateway(target);
  // See the header: a probe for a pod address is that pod's own DAD.
  if (dad && !for_gateway) return drop(DropReason::kNdNotAnswered);
  if (!for_gateway && (!net.contains(target) || std::memcmp(target, src, 16) == 0))
    return drop(DropReason::kNdNotAnswered);
  if (room < kNeighborAdvertisementFrameLen) return drop(DropReason::kNdMalformed);

  // The advertisement, in place: read what is kept before overwriting it.
  uint8_t asked[16], asker[16], asker_mac[6];
  std::memcpy(asked, target, 16);
  std::memcpy(asker, src, 16);
  std::memcpy(asker_mac, frame + 6, 6);
  std::memcpy(frame, dad ? kAllNodesMac : asker_mac, 6);
  std::memcpy(frame + 6, gateway_mac, 6);
  constexpr uint32_t kNaLen = kNeighborAdvertisementFrameLen - kEthLen - kIpv6Len;  // 32
  putAnswerHeader(ip, kNaLen, asked, dad ? kAllNodes : asker);
  icmp[0] = kIcmpv6NeighborAdvertisement;
  icmp[1] = 0;
  icmp[2] = icmp[3] = 0;
  icmp[4] = static_cast<uint8_t>((for_gateway && router ? kFlagRouter : 0) | (dad ? 0 : kFlagSolicited) | kFlagOverride);
  icmp[5] = icmp[6] = icmp[7] = 0;
  std::memcpy(icmp + 8, asked, 16);
  icmp[24] = kOptionTargetLinkLayer;
  icmp[25] = 1;  // 8 bytes
  std::memcpy(icmp + 26, gateway_mac, 6);
  putChecksum(ip, icmp, kNaLen);
  *new_len = kNeighborAdvertisementFrameLen;
  return {true, DropReason{}};
}

}  // namespace sluice
