// libFuzzer target: the ICMP/ICMPv6 error builders (icmp_error.h) on
// arbitrary bytes. The first byte chooses the family, the error's type and
// the headroom; the rest is the frame, in a heap buffer that ends where the
// frame ends and begins where the headroom begins, so AddressSanitizer
// reports any access outside it. A refused frame must be left exactly as it
// was; a built error must be well formed: the right length, the sender's
// MAC and address as destination, both checksums valid (summed here
// independently), the quote the original's leading bytes.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/datapath/icmp/icmp_error.h"

namespace {

using sluice::icmp::Refusal;

uint16_t sum16(const uint8_t* p, size_t len, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}
size_t be16(const uint8_t* p) { return static_cast<size_t>(p[0] << 8 | p[1]); }

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 9001) return 0;  // jumbo frame bound
  const uint8_t choice = data[0];
  const std::vector<uint8_t> frame(data + 1, data + size);
  const bool v6 = choice & 1;
  const uint16_t headroom = static_cast<uint16_t>((choice >> 1) * 2);  // 0..254: below and above what is needed
  static constexpr uint8_t kV4Types[] = {11, 3, 11, 3};
  static constexpr uint8_t kV6Types[] = {3, 1, 2, 2};
  const uint8_t type = v6 ? kV6Types[(choice >> 5) & 3] : kV4Types[(choice >> 5) & 3];

  const size_t buf_len = headroom + frame.size();
  auto buf = std::make_unique<uint8_t[]>(buf_len == 0 ? 1 : buf_len);
  std::memset(buf.get(), 0xa5, headroom);
  if (!frame.empty()) std::memcpy(buf.get() + headroom, frame.data(), frame.size());
  auto mbuf = std::make_unique<rte_mbuf>();
  std::memset(mbuf.get(), 0, sizeof(rte_mbuf));
  rte_mbuf* m = mbuf.get();
  m->buf_addr = buf.get();
  m->buf_len = static_cast<uint16_t>(buf_len);
  m->data_off = headroom;
  m->data_len = static_cast<uint16_t>(frame.size());
  m->pkt_len = static_cast<uint32_t>(frame.size());
  m->nb_segs = 1;
  rte_mbuf_refcnt_set(m, 1);

  const uint8_t gw4[4] = {10, 0, 0, 1};
  const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
  Refusal r;
  Refusal pure;
  if (v6) {
    sluice::icmp::Ipv6ErrorParams p;
    p.source[0] = 0x20;
    p.source[15] = 1;
    std::memcpy(p.mac.addr_bytes, mac, 6);
    p.type = type;
    p.mtu = 1400;
    pure = sluice::icmp::ipv6ErrorRefusal(frame.data(), static_cast<uint32_t>(frame.size()), type);
    r = sluice::icmp::buildIpv6Error(m, p);
  } else {
    sluice::icmp::Ipv4ErrorParams p;
    std::memcpy(&p.source_be, gw4, 4);
    std::memcpy(p.mac.addr_bytes, mac, 6);
    p.type = type;
    p.code = type == 3 ? 4 : 0;
    p.next_hop_mtu = 1400;
    pure = sluice::icmp::ipv4ErrorRefusal(frame.data(), static_cast<uint32_t>(frame.size()));
    r = sluice::icmp::buildIpv4Error(m, p);
  }
  // The frame's verdict is the builder's, unless the mbuf was the reason.
  check(r == pure || (pure == Refusal::kNone && r == Refusal::kNotWritable));
  const uint8_t* out = static_cast<const uint8_t*>(m->buf_addr) + m->data_off;
  if (r != Refusal::kNone) {
    check(m->data_off == headroom && m->data_len == frame.size() && m->pkt_len == frame.size());
    check(frame.empty() || std::memcmp(out, frame.data(), frame.size()) == 0);
    return 0;
  }
  const size_t len = m->data_len;
  check(m->pkt_len == len && len >= 14);
  check(std::memcmp(out, frame.data() + 6, 6) == 0 && std::memcmp(out + 6, mac, 6) == 0);
  if (!v6) {
    const size_t datagram = be16(frame.data() + 16);
    const size_t quote = datagram < 548 ? datagram : 548;
    check(m->data_off == headroom - 28 && len == 14 + 28 + quote);
    check(be16(out + 12) == 0x0800 && out[14] == 0x45 && be16(out + 16) == 28 + quote && out[23] == 1);
    check(std::memcmp(out + 26, gw4, 4) == 0 && std::memcmp(out + 30, frame.data() + 26, 4) == 0);
    check(sum16(out + 14, 20) == 0xffff);
    check(sum16(out + 34, 8 + quote) == 0xffff);
    check(out[34] == type && std::memcmp(out + 42, frame.data() + 14, quote) == 0);
  } else {
    const size_t packet = 40 + be16(frame.data() + 18);
    const size_t quote = packet < 1232 ? packet : 1232;
    check(m->data_off == headroom - 48 && len == 14 + 48 + quote);
    check(be16(out + 12) == 0x86dd && (out[14] >> 4) == 6 && be16(out + 18) == 8 + quote && out[20] == 58);
    check(std::memcmp(out + 38, frame.data() + 22, 16) == 0);
    const size_t icmp_len = 8 + quote;
    uint32_t pseudo = sum16(out + 22, 32);
    pseudo += static_cast<uint32_t>(icmp_len) + 58;
    check(sum16(out + 54, icmp_len, pseudo) == 0xffff);
    check(out[54] == type && std::memcmp(out + 62, frame.data() + 14, quote) == 0);
  }
  return 0;
}
