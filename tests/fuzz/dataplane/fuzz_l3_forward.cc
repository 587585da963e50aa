// libFuzzer target: the forwarding stage on arbitrary bytes as one frame
// (IPv4, ARP, IPv6 and its neighbor discovery).
// The frame sits in a heap buffer of exactly its length, so AddressSanitizer
// reports any read past its end; verdicts must name a real port or a reason.
#include <cstdint>
#include <cstring>
#include <memory>

#include "dataplane/datapath/l3_forward.h"

namespace {

const sluice::PmdSnapshot& snapshot() {
  static const sluice::PmdSnapshot snap = [] {
    sluice::PmdSnapshot s;
    using sluice::Ipv4Address;
    s.fib = std::make_shared<sluice::ForwardingTable>(std::vector<sluice::ForwardingTable::Entry>{
        {*Ipv4Address::parse("10.244.1.10"), 1, sluice::MacAddress::fromIpv4(*Ipv4Address::parse("10.244.1.10"))},
        {*Ipv4Address::parse("10.244.1.11"), 2, sluice::MacAddress::fromIpv4(*Ipv4Address::parse("10.244.1.11"))}});
    s.gateway_ip_be = Ipv4Address::parse("10.244.1.1")->networkOrder();
    s.pod_net_be = Ipv4Address::parse("10.244.1.0")->networkOrder();
    s.pod_mask_be = Ipv4Address{0xffffff00}.networkOrder();
    // IPv6: two pods' /128 routes and the pod network, so that IPv6 frames
    // reach the routing and neighbor discovery code too.
    using sluice::Ipv6Address;
    const Ipv6Address a = *Ipv6Address::parse("fd00:10:244:1::a"), b = *Ipv6Address::parse("fd00:10:244:1::b");
    s.fib6 = std::make_shared<sluice::Ipv6ForwardingTable>(std::vector<sluice::Ipv6ForwardingTable::Entry>{
        {a, 1, sluice::MacAddress::fromIpv6(a)}, {b, 2, sluice::MacAddress::fromIpv6(b)}});
    s.v6.enabled = true;
    s.v6.prefix_len = 64;
    std::memcpy(s.v6.net, Ipv6Address::parse("fd00:10:244:1::")->bytes.data(), 16);
    std::memcpy(s.v6.gateway, Ipv6Address::parse("fd00:10:244:1::1")->bytes.data(), 16);
    std::memcpy(s.v6.gateway_link_local, Ipv6Address::parse("fe80::ff:fe00:1")->bytes.data(), 16);
    return s;
  }();
  return snap;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 9000) return 0;  // jumbo frame bound; mbuf data_len is 16-bit anyway
  auto buf = std::make_unique<uint8_t[]>(size == 0 ? 1 : size);
  if (size != 0) std::memcpy(buf.get(), data, size);
  auto mbuf = std::make_unique<rte_mbuf>();
  std::memset(mbuf.get(), 0, sizeof(rte_mbuf));
  mbuf->buf_addr = buf.get();
  mbuf->data_len = static_cast<uint16_t>(size);
  mbuf->pkt_len = static_cast<uint32_t>(size);
  mbuf->nb_segs = 1;
  rte_mbuf* pkts[1] = {mbuf.get()};
  uint16_t next[1];
  sluice::DropReason reason[1];
  constexpr uint16_t kInPort = 1;
  uint16_t forwarded = sluice::l3ForwardBurst(snapshot(), kInPort, pkts, 1, next, reason);
  bool ok = forwarded == 1 ? (next[0] == 1 || next[0] == 2)
                           : (next[0] == sluice::kNextDrop &&
                              static_cast<size_t>(reason[0]) < sluice::kDropReasonCount);
  if (!ok) __builtin_trap();
  return 0;
}
