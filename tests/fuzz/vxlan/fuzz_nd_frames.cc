// libFuzzer target for the neighbor advertisements the control path reads
// from an IPv6 underlay's uplink (punted by the PMD: any host on the
// underlay chooses their bytes). parseNeighborAdvertisement must never read
// past the frame and must accept only what RFC 4861 7.1.2 lets a node learn
// from; what it returns must be the frame's own fields. A solicitation
// built from the input's first bytes must be well formed (its ICMPv6
// checksum verifies) and never parse as an advertisement.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dataplane/datapath/nd/neighbor_discovery.h"
#include "dataplane/modules/overlay/nd_frames.h"

namespace {

constexpr size_t kEth = 14, kIpv6 = 40, kNdBody = 24;

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 2048) return 0;
  // A heap copy of exactly `size` bytes, so ASan sees any over-read.
  std::vector<uint8_t> frame(data, data + size);
  const std::optional<sluice::NeighborAdvertisement> na = sluice::parseNeighborAdvertisement(frame.data(), size);
  if (na) {
    check(size >= kEth + kIpv6 + kNdBody && frame[12] == 0x86 && frame[13] == 0xdd);
    const uint8_t* ip = frame.data() + kEth;
    const size_t payload = static_cast<size_t>(ip[4] << 8 | ip[5]);
    check((ip[0] >> 4) == 6 && ip[6] == 58 && ip[7] == 255 && payload >= kNdBody && kEth + kIpv6 + payload <= size);
    const uint8_t* icmp = ip + kIpv6;
    check(icmp[0] == sluice::kIcmpv6NeighborAdvertisement && icmp[1] == 0);
    check(sluice::icmpv6Checksum(ip + 8, ip + 24, icmp, static_cast<uint32_t>(payload)) == 0);
    check(std::memcmp(na->target.bytes.data(), icmp + 8, 16) == 0 && !na->target.isMulticast());
    check(std::memcmp(na->dst.bytes.data(), ip + 24, 16) == 0);
    check(std::memcmp(na->eth_dst.bytes.data(), frame.data(), 6) == 0);
    check(na->solicited == ((icmp[4] & 0x40) != 0));
    // The MAC is a target link-layer option's, inside the message.
    bool found = false;
    for (size_t ofs = kNdBody; ofs + 8 <= payload && icmp[ofs + 1] != 0; ofs += icmp[ofs + 1] * size_t{8})
      found |= icmp[ofs] == 2 && icmp[ofs + 1] == 1 && std::memcmp(icmp + ofs + 2, na->target_mac.bytes.data(), 6) == 0;
    check(found);
  }
  if (size >= 6 + 16 + 16) {
    sluice::MacAddress mac;
    sluice::Ipv6Address ip, target;
    std::memcpy(mac.bytes.data(), data, 6);
    std::memcpy(ip.bytes.data(), data + 6, 16);
    std::memcpy(target.bytes.data(), data + 22, 16);
    const std::vector<uint8_t> ns = sluice::buildNeighborSolicitation(mac, ip, target);
    check(ns.size() == kEth + kIpv6 + kNdBody + 8);
    const uint8_t* h = ns.data() + kEth;
    check(sluice::icmpv6Checksum(h + 8, h + 24, h + kIpv6, static_cast<uint32_t>(kNdBody + 8)) == 0);
    check(h[kIpv6] == sluice::kIcmpv6NeighborSolicitation && h[7] == 255);
    check(std::memcmp(h + kIpv6 + 8, target.bytes.data(), 16) == 0);
    check(!sluice::parseNeighborAdvertisement(ns.data(), ns.size()));
  }
  return 0;
}
