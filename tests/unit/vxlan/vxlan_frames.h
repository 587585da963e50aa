// Builds VXLAN-encapsulated frames for the overlay's tests: an outer
// Ethernet/IPv4/UDP/VXLAN header (fields overridable to make them wrong)
// around an inner frame. Plain bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/support/frames.h"

namespace sluice::test {

struct OuterSpec {
  Ipv4Address src = *Ipv4Address::parse("192.168.77.2");
  Ipv4Address dst = *Ipv4Address::parse("192.168.77.1");
  uint32_t vni = 42;
  uint8_t flags = 0x08;
  uint16_t udp_dst = 4789;
  uint8_t version_ihl = 0x45;
  uint16_t frag = 0x4000;  // DF
  uint8_t proto = 17;
};

inline Frame vxlanFrame(const Frame& inner, const OuterSpec& o = {}) {
  const size_t ihl = (o.version_ihl & 0x0f) * 4u;
  const size_t ip_hdr = ihl < 20 ? 20 : ihl;
  Frame f(14 + ip_hdr + 16 + inner.size(), 0);
  uint8_t* p = f.data();
  for (int i = 0; i < 6; ++i) p[i] = static_cast<uint8_t>(0x02 + i);
  for (int i = 0; i < 6; ++i) p[6 + i] = static_cast<uint8_t>(0x12 + i);
  p[12] = 0x08;
  p[13] = 0x00;
  uint8_t* ip = p + 14;
  ip[0] = o.version_ihl;
  const size_t total = ip_hdr + 16 + inner.size();
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total);
  ip[6] = static_cast<uint8_t>(o.frag >> 8);
  ip[7] = static_cast<uint8_t>(o.frag);
  ip[8] = 64;
  ip[9] = o.proto;
  const uint32_t s = o.src.value, d = o.dst.value;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<uint8_t>(s >> (24 - 8 * i));
    ip[16 + i] = static_cast<uint8_t>(d >> (24 - 8 * i));
  }
  uint8_t* udp = ip + ip_hdr;
  udp[0] = 0xc0;
  udp[1] = 0x01;
  udp[2] = static_cast<uint8_t>(o.udp_dst >> 8);
  udp[3] = static_cast<uint8_t>(o.udp_dst);
  const size_t ulen = 16 + inner.size();
  udp[4] = static_cast<uint8_t>(ulen >> 8);
  udp[5] = static_cast<uint8_t>(ulen);
  uint8_t* vx = udp + 8;
  vx[0] = o.flags;
  vx[4] = static_cast<uint8_t>(o.vni >> 16);
  vx[5] = static_cast<uint8_t>(o.vni >> 8);
  vx[6] = static_cast<uint8_t>(o.vni);
  for (size_t i = 0; i < inner.size(); ++i) vx[8 + i] = inner[i];
  return f;
}

}  // namespace sluice::test
