#include "dataplane/modules/overlay/nd_frames.h"

#include <cstring>

#include "common/big_endian.h"
#include "dataplane/datapath/nd/neighbor_discovery.h"

namespace sluice {
namespace {

constexpr size_t kEthLen = 14;
constexpr size_t kIpv6Len = 40;
constexpr size_t kNdBodyLen = 24;        // type, code, checksum, flags/reserved, target
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kNdHopLimit = 255;
constexpr uint8_t kOptionSourceLinkLayer = 1;
constexpr uint8_t kOptionTargetLinkLayer = 2;
constexpr uint8_t kFlagSolicited = 0x40;


}  // namespace

std::vector<uint8_t> buildNeighborSolicitation(MacAddress mac, const Ipv6Address& ip, const Ipv6Address& target) {
  constexpr size_t kBody = kNdBodyLen + 8;  // the solicitation and a source link-layer option
  std::vector<uint8_t> f(kEthLen + kIpv6Len + kBody, 0);
  uint8_t group[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};
  std::memcpy(group + 13, target.bytes.data() + 13, 3);
  const uint8_t group_mac[6] = {0x33, 0x33, 0xff, target.bytes[13], target.bytes[14], target.bytes[15]};
  std::memcpy(f.data(), group_mac, 6);
  std::memcpy(f.data() + 6, mac.bytes.data(), 6);
  f[12] = 0x86;
  f[13] = 0xdd;
  uint8_t* ipv6 = f.data() + kEthLen;
  ipv6[0] = 0x60;
  ipv6[5] = static_cast<uint8_t>(kBody);
  ipv6[6] = kProtoIcmpv6;
  ipv6[7] = kNdHopLimit;
  std::memcpy(ipv6 + 8, ip.bytes.data(), 16);
  std::memcpy(ipv6 + 24, group, 16);
  uint8_t* icmp = ipv6 + kIpv6Len;
  icmp[0] = kIcmpv6NeighborSolicitation;
  std::memcpy(icmp + 8, target.bytes.data(), 16);
  icmp[24] = kOptionSourceLinkLayer;
  icmp[25] = 1;  // 8 bytes
  std::memcpy(icmp + 26, mac.bytes.data(), 6);
  const uint16_t sum = icmpv6Checksum(ipv6 + 8, ipv6 + 24, icmp, kBody);
  icmp[2] = static_cast<uint8_t>(sum >> 8);
  icmp[3] = static_cast<uint8_t>(sum);
  return f;
}

std::optional<NeighborAdvertisement> parseNeighborAdvertisement(const uint8_t* data, size_t len) {
  if (len < kEthLen + kIpv6Len + kNdBodyLen || loadBe16(data + 12) != 0x86dd) return std::nullopt;
  const uint8_t* ipv6 = data + kEthLen;
  const size_t payload = loadBe16(ipv6 + 4);
  if ((ipv6[0] >> 4) != 6 || ipv6[6] != kProtoIcmpv6 || ipv6[7] != kNdHopLimit) return std::nullopt;
  if (payload < kNdBodyLen || payload > len - kEthLen - kIpv6Len) return std::nullopt;
  const uint8_t* icmp = ipv6 + kIpv6Len;
  if (icmp[0] != kIcmpv6NeighborAdvertisement || icmp[1] != 0) return std::nullopt;
  if (icmpv6Checksum(ipv6 + 8, ipv6 + 24, icmp, static_cast<uint32_t>(payload)) != 0) return std::nullopt;
  NeighborAdvertisement na;
  std::memcpy(na.target.bytes.data(), icmp + 8, 16);
  if (na.target.isMulticast()) return std::nullopt;
  bool have_mac = false;
  for (size_t ofs = kNdBodyLen; ofs < payload;) {
    if (payload - ofs < 2 || icmp[ofs + 1] == 0) return std::nullopt;
    const size_t opt_len = icmp[ofs + 1] * size_t{8};
    if (opt_len > payload - ofs) return std::nullopt;
    if (icmp[ofs] == kOptionTargetLinkLayer && opt_len == 8) {
      std::memcpy(na.target_mac.bytes.data(), icmp + ofs + 2, 6);
      have_mac = true;
    }
    ofs += opt_len;
  }
  if (!have_mac) return std::nullopt;
  std::memcpy(na.dst.bytes.data(), ipv6 + 24, 16);
  std::memcpy(na.eth_dst.bytes.data(), data, 6);
  na.solicited = (icmp[4] & kFlagSolicited) != 0;
  return na;
}

}  // namespace sluice
