// Building echo replies in place (icmp_echo.h).
#include "dataplane/datapath/icmp/icmp_echo.h"

#include <rte_byteorder.h>

#include <cstring>

#include "dataplane/datapath/icmp/icmp_wire.h"

namespace sluice::icmp {
namespace {

using wire::addBytes;
using wire::finish;

constexpr uint32_t kEth = sizeof(rte_ether_hdr);
constexpr uint32_t kIpv4Header = 20;
constexpr uint32_t kIpv6Header = 40;
constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoIcmpv6 = 58;

bool groupMac(const uint8_t* mac) { return (mac[0] & 0x01) != 0; }

bool writable(const rte_mbuf* m) {
  return RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 && m->nb_segs == 1 && m->next == nullptr;
}

// Ethernet back to the sender, from the gateway.
void turnEthernet(uint8_t* f, const rte_ether_addr& gateway_mac) {
  std::memcpy(f, f + 6, RTE_ETHER_ADDR_LEN);
  std::memcpy(f + 6, gateway_mac.addr_bytes, RTE_ETHER_ADDR_LEN);
}

// The frame ends after `frame_len` bytes (trailing padding dropped); the
// received frame's offload results no longer hold.
void reshape(rte_mbuf* m, uint32_t frame_len, uint32_t ptype) {
  m->data_len = static_cast<uint16_t>(frame_len);
  m->pkt_len = frame_len;
  m->ol_flags = 0;  // direct (checked): no attachment flag to keep
  m->packet_type = ptype;
  m->tx_offload = 0;
}

bool ipv6Unspecified(const uint8_t* a) {
  static constexpr uint8_t kZero[16] = {};
  return std::memcmp(a, kZero, 16) == 0;
}
bool ipv6Loopback(const uint8_t* a) {
  static constexpr uint8_t kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(a, kLoopback, 16) == 0;
}

}  // namespace

Refusal buildIpv4EchoReply(rte_mbuf* m, const rte_ether_addr& gateway_mac) {
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len < kEth + kIpv4Header || loadBe16(f + 12) != RTE_ETHER_TYPE_IPV4) return Refusal::kMalformed;
  uint8_t* ip = f + kEth;
  const uint32_t ihl = (ip[0] & 0x0fu) * 4u;
  const uint32_t total = loadBe16(ip + 2);
  if ((ip[0] >> 4) != 4 || ihl < kIpv4Header || total < ihl + 8 || total > len - kEth || ip[9] != kProtoIcmp)
    return Refusal::kMalformed;
  // Any fragment (more-fragments or an offset): the request is not whole here.
  if ((loadBe16(ip + 6) & 0x3fff) != 0) return Refusal::kNotFirstFragment;
  uint8_t* icmp = ip + ihl;
  if (icmp[0] != kIpv4EchoRequest || icmp[1] != 0) return Refusal::kMalformed;
  if (groupMac(f)) return Refusal::kMulticastDestination;
  const uint32_t src = loadBe32(ip + 12);
  const uint32_t top = src >> 24;
  if (groupMac(f + 6) || top == 0 || top == 127 || top >= 224) return Refusal::kSourceNotUnique;
  if (!writable(m)) return Refusal::kNotWritable;

  turnEthernet(f, gateway_mac);
  uint8_t addr[4];
  std::memcpy(addr, ip + 12, 4);
  std::memcpy(ip + 12, ip + 16, 4);
  std::memcpy(ip + 16, addr, 4);
  ip[8] = kEchoReplyTtl;
  storeBe16(ip + 10, 0);
  storeBe16(ip + 10, finish(addBytes(0, ip, ihl)));
  icmp[0] = kIpv4EchoReply;
  storeBe16(icmp + 2, 0);
  storeBe16(icmp + 2, finish(addBytes(0, icmp, total - ihl)));
  reshape(m, kEth + total, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_ICMP);
  return Refusal::kNone;
}

Refusal buildIpv6EchoReply(rte_mbuf* m, const rte_ether_addr& gateway_mac) {
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len < kEth + kIpv6Header || loadBe16(f + 12) != RTE_ETHER_TYPE_IPV6) return Refusal::kMalformed;
  uint8_t* ip = f + kEth;
  const uint32_t payload = loadBe16(ip + 4);
  if ((ip[0] >> 4) != 6 || ip[6] != kProtoIcmpv6 || payload < 8 || kIpv6Header + payload > len - kEth)
    return Refusal::kMalformed;
  uint8_t* icmp = ip + kIpv6Header;
  if (icmp[0] != kIpv6EchoRequest || icmp[1] != 0) return Refusal::kMalformed;
  if (groupMac(f) || ip[24] == 0xff) return Refusal::kMulticastDestination;
  if (groupMac(f + 6) || ipv6Unspecified(ip + 8) || ip[8] == 0xff || ipv6Loopback(ip + 8))
    return Refusal::kSourceNotUnique;
  if (!writable(m)) return Refusal::kNotWritable;

  turnEthernet(f, gateway_mac);
  uint8_t addr[16];
  std::memcpy(addr, ip + 8, 16);
  std::memcpy(ip + 8, ip + 24, 16);
  std::memcpy(ip + 24, addr, 16);
  ip[7] = kEchoReplyTtl;
  icmp[0] = kIpv6EchoReply;
  storeBe16(icmp + 2, 0);
  // RFC 4443 2.3: the pseudo-header (source, destination, upper-layer
  // length, next header) and the whole ICMPv6 message.
  uint32_t sum = addBytes(0, ip + 8, 32);
  sum += payload;
  sum += kProtoIcmpv6;
  sum = addBytes(sum, icmp, payload);
  storeBe16(icmp + 2, finish(sum));
  reshape(m, kEth + kIpv6Header + payload, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_ICMP);
  return Refusal::kNone;
}

}  // namespace sluice::icmp
