// libFuzzer target for the ARP frames the control path reads from the
// uplink (punted by the PMD: any host on the underlay chooses their bytes).
// parseArp must never read past the frame and must accept only Ethernet/IPv4
// ARP; what it returns must be the frame's own fields. A request built from
// the input's fields must parse back to them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dataplane/modules/overlay/arp_frames.h"

namespace {

constexpr size_t kEth = 14, kArp = 28;

bool sameMac(const sluice::MacAddress& m, const uint8_t* p) { return std::memcmp(m.bytes.data(), p, 6) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 2048) return 0;
  // A heap copy of exactly `size` bytes, so ASan sees any over-read.
  std::vector<uint8_t> frame(data, data + size);
  const std::optional<sluice::ArpSender> s = sluice::parseArp(frame.data(), frame.size());
  if (s) {
    // Only an Ethernet/IPv4 ARP frame long enough for its fields parses.
    if (size < kEth + kArp || frame[12] != 0x08 || frame[13] != 0x06) std::abort();
    const uint8_t* arp = frame.data() + kEth;
    if (arp[0] != 0 || arp[1] != 1 || arp[2] != 0x08 || arp[3] != 0 || arp[4] != 6 || arp[5] != 4) std::abort();
    if (s->op != ((arp[6] << 8) | arp[7])) std::abort();
    if (!sameMac(s->mac, arp + 8) || !sameMac(s->eth_dst, frame.data())) std::abort();
    uint32_t ip = 0, target = 0;
    std::memcpy(&ip, arp + 14, 4);
    std::memcpy(&target, arp + 24, 4);
    if (s->ip.networkOrder() != ip || s->target.networkOrder() != target) std::abort();
  }
  // Round trip: a request made of the input's first 14 bytes.
  if (size >= 14) {
    sluice::MacAddress mac;
    std::memcpy(mac.bytes.data(), data, 6);
    uint32_t ip = 0, target = 0;
    std::memcpy(&ip, data + 6, 4);
    std::memcpy(&target, data + 10, 4);
    const std::vector<uint8_t> request =
        sluice::buildArpRequest(mac, sluice::Ipv4Address::fromNetworkOrder(ip), sluice::Ipv4Address::fromNetworkOrder(target));
    const std::optional<sluice::ArpSender> back = sluice::parseArp(request.data(), request.size());
    if (!back || back->op != 1 || !sameMac(back->mac, data) || back->ip.networkOrder() != ip ||
        back->target.networkOrder() != target)
      std::abort();
  }
  return 0;
}
