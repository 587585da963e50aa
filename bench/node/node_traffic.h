// The node benchmark's traffic: the addressing plan every dataplane
// under test is configured from, and the frames of each scenario for N
// round-robin flows. Plain bytes, no DPDK; run once at set-up time by the
// pcap generator (node_pcap_gen), never on a PMD.
//
// The plan, one node:
//  - pod CIDR 10.244.0.0/16, gateway 10.244.0.1 with a fixed MAC;
//  - the sending pod ("source pod") 10.244.0.10;
//  - kPods local pods, pod k at 10.244.(k+1).10, each alone in its /24
//    (destinations spread over many pod /24s);
//  - our VTEP 172.31.0.1/24 on the uplink, VNI kVni;
//  - IPv6 (the l3v6 scenario): pod CIDR fd00:10:244::/64, gateway ::1 (the
//    same gateway MAC), the source pod ::10 and pod k ::<k+1>:10 (pods and
//    the source pod are dual-stack: the same ports and MACs as for IPv4);
//  - kRemoteNodes remote nodes, node k with VTEP 172.31.0.(k+2) and pod CIDR
//    10.245.k.0/24 holding the remote pod 10.245.k.10.
// Flow i of N goes to pod (or remote node) k = i % 16 and differs from the
// other flows of that k in its UDP source port (1024 + i / 16): N distinct
// 5-tuples, sent in round-robin order (flow 0, 1, ..., N-1, 0, ...), the
// worst case for per-flow caches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/net_address.h"
#include "tests/support/frames.h"

namespace sluice::bench {

enum class Scenario {
  kL3,     // source pod -> local pod k (routed: MACs rewritten, TTL - 1)
  kDecap,  // remote pod on node k -> local pod k, VXLAN to our VTEP
  kEncap,  // source pod -> remote pod on node k (to be encapsulated)
  kL3v6,   // as kL3 over IPv6 (MACs rewritten, hop limit - 1)
};

std::optional<Scenario> parseScenario(std::string_view name);

inline constexpr uint32_t kPods = 16;
inline constexpr uint32_t kRemoteNodes = 16;
inline constexpr uint32_t kVni = 100;
inline constexpr uint16_t kVxlanPort = 4789;
// Source ports 1024.. give each k 64,000 flows: 1,024,000 in all.
inline constexpr uint32_t kMaxFlows = 1'000'000;
// Replayed files hold at least this many packets (whole rounds of the N
// flows), so the input port's per-file costs are alike for small N.
inline constexpr uint32_t kMinPackets = 1024;

Ipv4Cidr podCidr();
Ipv4Address gatewayIp();
MacAddress gatewayMac();
Ipv4Address sourcePodIp();
MacAddress sourcePodMac();
Ipv4Address localPodIp(uint32_t k);
MacAddress localPodMac(uint32_t k);
Ipv4Cidr localPodSubnet(uint32_t k);  // the /24 pod k is alone in
Ipv4Cidr vtepSubnet();                // 172.31.0.0/24
Ipv4Address vtepIp();
MacAddress vtepMac();
Ipv4Address remoteVtepIp(uint32_t k);
MacAddress remoteVtepMac(uint32_t k);
Ipv4Cidr remotePodCidr(uint32_t k);
Ipv4Address remotePodIp(uint32_t k);
MacAddress remotePodMac(uint32_t k);
Ipv6Cidr podCidr6();
Ipv6Address gatewayIp6();
Ipv6Address sourcePodIp6();
Ipv6Address localPodIp6(uint32_t k);

// The plan as lines of "<what> <fields...>" for the benchmark scripts (one
// source of truth for both dataplanes' configuration).
std::string describePlan();

// The frame of flow `flow` (0 <= flow < kMaxFlows): 60 bytes (64 on the wire)
// for l3 and encap; 66 bytes for l3v6 (the smallest IPv6/UDP frame with
// the 4-byte sequence the payload carries); for decap the same 60-byte inner frame plus 50 bytes of
// outer Ethernet/IPv4/UDP/VXLAN (outer UDP source port from a hash of the
// inner 5-tuple, as a VTEP does for the receiver's RSS; outer IPv4 checksum
// set, UDP checksum 0). The l3 scenario's frames may be longer:
// frame_len bytes (60..kMaxL3FrameLen), the UDP payload padded.
inline constexpr uint32_t kMinL3FrameLen = 60;
inline constexpr uint32_t kMaxL3FrameLen = 9014;  // a 9000-byte IP packet
test::Frame flowFrame(Scenario s, uint32_t flow, uint32_t frame_len = kMinL3FrameLen);

// Packets in the replayed file for N flows: whole rounds, at least kMinPackets.
uint32_t packetsForFlows(uint32_t flows);

}  // namespace sluice::bench
