#include "bench/node/node_traffic.h"

#include <absl/strings/str_cat.h>

namespace sluice::bench {
namespace {

Ipv4Address ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return Ipv4Address{static_cast<uint32_t>(a) << 24 | static_cast<uint32_t>(b) << 16 | static_cast<uint32_t>(c) << 8 | d};
}
// Locally administered unicast MACs that spell the address they belong to.
MacAddress macFor(Ipv4Address a) {
  return MacAddress{{0x02, 0x00, static_cast<uint8_t>(a.value >> 24), static_cast<uint8_t>(a.value >> 16),
                     static_cast<uint8_t>(a.value >> 8), static_cast<uint8_t>(a.value)}};
}
Ipv4Cidr cidr(Ipv4Address network, uint8_t len) { return Ipv4Cidr{network, len}; }

uint8_t index(uint32_t k) { return static_cast<uint8_t>(k); }

void put16(test::Frame& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}
void put32(test::Frame& f, size_t at, uint32_t v) {
  put16(f, at, static_cast<uint16_t>(v >> 16));
  put16(f, at + 2, static_cast<uint16_t>(v));
}
void putMac(test::Frame& f, size_t at, const MacAddress& m) {
  for (size_t i = 0; i < 6; ++i) f[at + i] = m.bytes[i];
}

// Outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8.
constexpr size_t kOuterLen = 50;

// A 32-bit mix of the inner 5-tuple (murmur3's finaliser): any hash that
// spreads flows would do; this one is fixed so files are reproducible.
uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

test::Frame vxlanWrap(const test::Frame& inner, uint32_t k, uint32_t inner_hash) {
  test::Frame f(kOuterLen + inner.size(), 0);
  putMac(f, 0, vtepMac());
  putMac(f, 6, remoteVtepMac(k));
  put16(f, 12, 0x0800);
  const size_t ipo = 14;
  f[ipo] = 0x45;
  put16(f, ipo + 2, static_cast<uint16_t>(f.size() - ipo));
  f[ipo + 8] = 64;  // TTL
  f[ipo + 9] = 17;  // UDP
  put32(f, ipo + 12, remoteVtepIp(k).value);
  put32(f, ipo + 16, vtepIp().value);
  put16(f, ipo + 10, test::internetChecksum(&f[ipo], 20));
  const size_t udp = ipo + 20;
  // RFC 7348: source port from a hash of the inner headers, in the dynamic range.
  put16(f, udp, static_cast<uint16_t>(49152 + (inner_hash & 0x3fff)));
  put16(f, udp + 2, kVxlanPort);
  put16(f, udp + 4, static_cast<uint16_t>(f.size() - udp));
  const size_t vx = udp + 8;
  f[vx] = 0x08;  // I flag: the VNI is valid
  put32(f, vx + 4, kVni << 8);
  for (size_t i = 0; i < inner.size(); ++i) f[kOuterLen + i] = inner[i];
  return f;
}

}  // namespace

std::optional<Scenario> parseScenario(std::string_view name) {
  if (name == "l3") return Scenario::kL3;
  if (name == "decap") return Scenario::kDecap;
  if (name == "encap") return Scenario::kEncap;
  if (name == "l3v6") return Scenario::kL3v6;
  return std::nullopt;
}

Ipv4Cidr podCidr() { return cidr(ip(10, 244, 0, 0), 16); }
Ipv4Address gatewayIp() { return ip(10, 244, 0, 1); }
MacAddress gatewayMac() { return macFor(gatewayIp()); }
Ipv4Address sourcePodIp() { return ip(10, 244, 0, 10); }
MacAddress sourcePodMac() { return macFor(sourcePodIp()); }
Ipv4Address localPodIp(uint32_t k) { return ip(10, 244, index(k + 1), 10); }
MacAddress localPodMac(uint32_t k) { return macFor(localPodIp(k)); }
Ipv4Cidr localPodSubnet(uint32_t k) { return cidr(ip(10, 244, index(k + 1), 0), 24); }
Ipv4Cidr vtepSubnet() { return cidr(ip(172, 31, 0, 0), 24); }
Ipv4Address vtepIp() { return ip(172, 31, 0, 1); }
MacAddress vtepMac() { return macFor(vtepIp()); }
Ipv4Address remoteVtepIp(uint32_t k) { return ip(172, 31, 0, index(k + 2)); }
MacAddress remoteVtepMac(uint32_t k) { return macFor(remoteVtepIp(k)); }
Ipv4Cidr remotePodCidr(uint32_t k) { return cidr(ip(10, 245, index(k), 0), 24); }
Ipv4Address remotePodIp(uint32_t k) { return ip(10, 245, index(k), 10); }
MacAddress remotePodMac(uint32_t k) { return macFor(remotePodIp(k)); }

Ipv6Cidr podCidr6() { return *Ipv6Cidr::parse("fd00:10:244::/64"); }
Ipv6Address gatewayIp6() { return podCidr6().host(1); }
Ipv6Address sourcePodIp6() { return podCidr6().host(0x10); }
Ipv6Address localPodIp6(uint32_t k) { return podCidr6().host(uint64_t{k + 1} << 16 | 0x10); }

std::string describePlan() {
  std::string out = absl::StrCat("pod_cidr ", podCidr().toString(), "\n", "gateway ", gatewayIp().toString(), " ",
                                 gatewayMac().toString(), "\n", "source_pod ", sourcePodIp().toString(), " ",
                                 sourcePodMac().toString(), "\n", "vtep ", vtepIp().toString(), " ",
                                 vtepMac().toString(), " ", vtepSubnet().toString(), "\n", "vni ", kVni, "\n",
                                 "pod_cidr_v6 ", podCidr6().toString(), "\n", "gateway_v6 ", gatewayIp6().toString(),
                                 "\n", "source_pod_v6 ", sourcePodIp6().toString(), "\n");
  for (uint32_t k = 0; k < kPods; ++k)
    absl::StrAppend(&out, "pod ", k, " ", localPodIp(k).toString(), " ", localPodMac(k).toString(), " ",
                    localPodSubnet(k).toString(), " ", localPodIp6(k).toString(), "\n");
  for (uint32_t k = 0; k < kRemoteNodes; ++k)
    absl::StrAppend(&out, "remote ", k, " ", remoteVtepIp(k).toString(), " ", remoteVtepMac(k).toString(), " ",
                    remotePodCidr(k).toString(), " ", remotePodIp(k).toString(), "\n");
  return out;
}

test::Frame flowFrame(Scenario s, uint32_t flow, uint32_t frame_len) {
  static_assert(kPods == kRemoteNodes, "flow i pairs pod k with remote node k");
  const uint32_t k = flow % kPods;
  test::UdpFrameSpec spec;
  spec.dst_mac = gatewayMac();
  spec.src_port = static_cast<uint16_t>(1024 + flow / kPods);
  spec.dst_port = 5001;
  spec.sequence = flow;
  switch (s) {
    case Scenario::kL3:
      spec.src_mac = sourcePodMac();
      spec.src_ip = sourcePodIp();
      spec.dst_ip = localPodIp(k);
      spec.frame_len = frame_len;
      return test::udpFrame(spec);
    case Scenario::kL3v6: {
      test::Udp6FrameSpec v6{sourcePodMac(), gatewayMac(), sourcePodIp6(), localPodIp6(k)};
      v6.src_port = spec.src_port;
      v6.dst_port = spec.dst_port;
      v6.sequence = flow;
      v6.frame_len = 66;
      return test::udp6Frame(v6);
    }
    case Scenario::kEncap:
      spec.src_mac = sourcePodMac();
      spec.src_ip = sourcePodIp();
      spec.dst_ip = remotePodIp(k);
      return test::udpFrame(spec);
    case Scenario::kDecap: {
      spec.src_mac = remotePodMac(k);
      spec.src_ip = remotePodIp(k);
      spec.dst_ip = localPodIp(k);
      const uint32_t hash =
          mix(spec.src_ip.value ^ mix(spec.dst_ip.value ^ (static_cast<uint32_t>(spec.src_port) << 16 | spec.dst_port)));
      return vxlanWrap(test::udpFrame(spec), k, hash);
    }
  }
  return {};
}

uint32_t packetsForFlows(uint32_t flows) {
  if (flows == 0) return 0;
  const uint32_t rounds = (kMinPackets + flows - 1) / flows;
  return rounds * flows;
}

}  // namespace sluice::bench
