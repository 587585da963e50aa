// libFuzzer target: the neighbor discovery responder on arbitrary input.
// The first byte picks the mode: raw (the rest is the whole frame), or built
// (the rest is an ICMPv6 message put behind a plausible Ethernet and IPv6
// header with a correct checksum, so that inputs reach the option walk and
// the answer). The frame sits in a heap buffer of exactly its length plus
// the room the first byte gives, so AddressSanitizer reports any access past
// it. An answer must be a well-formed advertisement (neighbor or router)
// with a valid checksum.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/datapath/nd/neighbor_discovery.h"

namespace {

using sluice::Ipv6Address;

const sluice::Ipv6PodNet& podNet() {
  static const sluice::Ipv6PodNet net = [] {
    sluice::Ipv6PodNet n;
    n.enabled = true;
    n.router_lifetime_s = 1800;  // router solicitations are answered too
    n.prefix_len = 64;
    std::memcpy(n.net, Ipv6Address::parse("fd00:10:244:1::")->bytes.data(), 16);
    std::memcpy(n.gateway, Ipv6Address::parse("fd00:10:244:1::1")->bytes.data(), 16);
    std::memcpy(n.gateway_link_local, Ipv6Address::parse("fe80::ff:fe00:1")->bytes.data(), 16);
    return n;
  }();
  return net;
}

constexpr uint8_t kGatewayMac[6] = {0x02, 0, 0, 0, 0, 1};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  const uint8_t mode = data[0];
  ++data;
  --size;
  std::vector<uint8_t> frame;
  if ((mode & 1) == 0) {
    frame.assign(data, data + size);
  } else {
    // Ethernet, then IPv6 from one of a few sources to the target's
    // solicited-node group (or the target itself), then the message.
    frame.assign(54 + size, 0);
    frame[12] = 0x86;
    frame[13] = 0xdd;
    frame[14] = 0x60;
    frame[18] = static_cast<uint8_t>(size >> 8);
    frame[19] = static_cast<uint8_t>(size);
    frame[20] = 58;
    frame[21] = (mode & 2) ? 255 : static_cast<uint8_t>(mode);
    static const char* const kSources[] = {"fd00:10:244:1::a", "::", "fe80::1", "fd00:10:244:1::1"};
    std::memcpy(&frame[22], Ipv6Address::parse(kSources[(mode >> 2) & 3])->bytes.data(), 16);
    uint8_t target[16] = {};
    if (size >= 24) std::memcpy(target, data + 8, 16);
    uint8_t dst[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target[13], target[14], target[15]};
    std::memcpy(&frame[38], (mode & 16) ? target : dst, 16);
    std::memcpy(&frame[54], data, size);
    if (size >= 4 && (mode & 32) == 0) {
      frame[56] = frame[57] = 0;
      const uint16_t sum = sluice::icmpv6Checksum(&frame[22], &frame[38], &frame[54], static_cast<uint32_t>(size));
      frame[56] = static_cast<uint8_t>(sum >> 8);
      frame[57] = static_cast<uint8_t>(sum);
    }
  }
  const uint32_t len = static_cast<uint32_t>(frame.size());
  const uint32_t room = len + ((mode & 64) ? 32 : 0);
  auto buf = std::make_unique<uint8_t[]>(room == 0 ? 1 : room);
  if (len != 0) std::memcpy(buf.get(), frame.data(), len);
  uint32_t new_len = 0;
  const uint16_t link_mtu = (mode & 128) ? 1500 : 0;
  const sluice::NdVerdict v =
      sluice::answerNeighborDiscovery(podNet(), kGatewayMac, buf.get(), len, room, &new_len, true, link_mtu);
  if (!v.answered) {
    const bool nd_reason = v.reason == sluice::DropReason::kNdMalformed ||
                           v.reason == sluice::DropReason::kNdNotAnswered ||
                           v.reason == sluice::DropReason::kNdNotServed;
    if (!nd_reason) __builtin_trap();
    return 0;
  }
  const uint8_t* out = buf.get();
  if (new_len > room || std::memcmp(out + 6, kGatewayMac, 6) != 0 || out[20] != 58 || out[21] != 255) __builtin_trap();
  if (out[54] == sluice::kIcmpv6RouterAdvertisement) {
    // A router advertisement, from the gateway's link-local address, with
    // the MTU option exactly when the port has an MTU.
    const uint32_t want = link_mtu != 0 ? sluice::kRouterAdvertisementFrameLen
                                        : sluice::kRouterAdvertisementNoMtuFrameLen;
    if (new_len != want || std::memcmp(out + 22, podNet().gateway_link_local, 16) != 0) __builtin_trap();
  } else {
    // A neighbor advertisement for the gateway or an address of the pod CIDR, from it.
    if (new_len != sluice::kNeighborAdvertisementFrameLen || out[54] != 136) __builtin_trap();
    if (!podNet().isGateway(out + 22) && !podNet().contains(out + 22)) __builtin_trap();
  }
  if (sluice::icmpv6Checksum(out + 22, out + 38, out + 54, new_len - 54) != 0) __builtin_trap();
  return 0;
}
