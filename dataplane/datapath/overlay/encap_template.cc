#include "dataplane/datapath/overlay/encap_template.h"

#include "dataplane/datapath/overlay/encap_template6.h"

#include <cstring>

namespace sluice::vxlan {

EncapTemplate buildEncapTemplate(const EncapParams& p) {
  EncapTemplate t;
  uint8_t* e = t.outer;
  std::memcpy(e, p.dst_mac, 6);
  std::memcpy(e + 6, p.src_mac, 6);
  encapStore16be(e + 12, 0x0800);
  uint8_t* ip = e + kEthLen;
  ip[0] = 0x45;  // version 4, 5 words
  ip[1] = 0;     // TOS
  // total length (2..3) per packet; identification (4..5) zero: DF is set.
  encapStore16be(ip + 6, 0x4000);  // DF: the overlay MTU is enforced before encapsulation
  ip[8] = kOuterTtl;
  ip[9] = 17;  // UDP
  std::memcpy(ip + 12, &p.src_ip_be, 4);
  std::memcpy(ip + 16, &p.dst_ip_be, 4);
  uint8_t* udp = ip + kIpv4Len;
  encapStore16be(udp + 2, kVxlanUdpPort);
  uint8_t* vx = udp + kUdpLen;
  vx[0] = kVxlanFlagI;
  vx[4] = static_cast<uint8_t>(p.vni >> 16);
  vx[5] = static_cast<uint8_t>(p.vni >> 8);
  vx[6] = static_cast<uint8_t>(p.vni);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < kIpv4Len; i += 2) sum += (uint32_t{ip[i]} << 8) | ip[i + 1];
  t.ip_sum = sum;
  std::memcpy(t.inner_dst, p.inner_dst, 6);
  t.valid = p.resolved;
  t.tunnel = p.tunnel;
  return t;
}

EncapTemplate6 buildEncapTemplate6(const EncapParams6& p) {
  EncapTemplate6 t;
  uint8_t* e = t.outer;
  std::memcpy(e, p.dst_mac, 6);
  std::memcpy(e + 6, p.src_mac, 6);
  encapStore16be(e + 12, 0x86dd);
  uint8_t* ip = e + kEthLen;
  ip[0] = 0x60;  // version 6, traffic class 0; flow label and payload length per packet
  ip[6] = decap_detail::kProtoUdp;
  ip[7] = kOuterTtl;  // hop limit, as the IPv4 outer TTL
  std::memcpy(ip + 8, p.src_ip, 16);
  std::memcpy(ip + 24, p.dst_ip, 16);
  uint8_t* udp = ip + decap_detail::kIpv6Len;
  encapStore16be(udp + 2, kVxlanUdpPort);
  uint8_t* vx = udp + kUdpLen;
  vx[0] = kVxlanFlagI;
  vx[4] = static_cast<uint8_t>(p.vni >> 16);
  vx[5] = static_cast<uint8_t>(p.vni >> 8);
  vx[6] = static_cast<uint8_t>(p.vni);
  uint32_t sum = decap_detail::kProtoUdp;
  for (uint32_t i = 8; i < decap_detail::kIpv6Len; i += 2) sum += (uint32_t{ip[i]} << 8) | ip[i + 1];
  // The UDP header with source port, length and checksum zero, then VXLAN.
  for (uint32_t i = 0; i < kUdpLen + kVxlanLen; i += 2) sum += (uint32_t{udp[i]} << 8) | udp[i + 1];
  t.udp_sum = sum;
  std::memcpy(t.inner_dst, p.inner_dst, 6);
  t.valid = p.resolved;
  t.tunnel = p.tunnel;
  return t;
}

}  // namespace sluice::vxlan
