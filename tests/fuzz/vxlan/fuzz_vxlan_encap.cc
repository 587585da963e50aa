// libFuzzer target: the encap builders (buildEncapTemplate,
// buildEncapTemplate6) and the encap action (encapOne) on arbitrary inner
// frames, as the PMD runs it: only frames whose key parses (an untagged IPv4
// or IPv6 frame with a TTL / hop limit of 2 or more, not neighbor
// discovery) reach it. The first bytes choose the underlay family, the
// checksum offload, the headroom, the overlay MTU, the VNI and the tunnel's
// addresses; the rest is the inner frame, in a heap buffer that begins
// where the headroom begins and ends where the frame ends, so
// AddressSanitizer reports any access outside it.
// A refused frame must be left as it was, with the refusal's reason. A
// built one must be what decapsulation takes back: the same VNI, our VTEP
// as sender, the inner frame whole behind the outer headers, its Ethernet
// addresses rewritten, its TTL (hop limit) one less, a valid IPv4 inner
// header checksum still valid; the outer IPv4 checksum valid when computed in
// software, the outer UDP checksum over IPv6 valid (both summed here apart).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/overlay/overlay_snapshot.h"
#include "dataplane/datapath/overlay/uplink_stage.h"
#include "dataplane/datapath/overlay/vxlan_decap.h"
#include "dataplane/datapath/overlay/vxlan_decap6.h"

namespace {

using namespace sluice;
using namespace sluice::vxlan;

void check(bool ok) {
  if (!ok) std::abort();
}

uint32_t sum16(const uint8_t* p, size_t len, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1] << 8);
  return sum;
}
uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

// Per-tunnel counters the encap action adds to (one block, 256 KiB).
OverlayCounters& counters() {
  static auto* c = new OverlayCounters();
  return *c;
}

constexpr size_t kParamBytes = 1 + 1 + 2 + 3 + 6 + 6 + 16 + 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kParamBytes || size - kParamBytes > 9216 + 14) return 0;
  const uint8_t choice = data[0];
  const bool outer6 = (choice & 1) != 0;
  const bool offload = (choice & 2) != 0;
  const bool resolved = (choice & 4) != 0;
  // 0..254, below and above the 50 or 70 bytes needed; even, as DPDK's
  // headroom and the decap's adjustments keep a frame (rte_ether_hdr is
  // 2-byte aligned).
  const uint16_t headroom = data[1] & 0xfe;
  const uint32_t overlay_mtu = 68 + (uint32_t{data[2]} << 8 | data[3]) % 9200;
  const uint32_t vni = 1 + (uint32_t{data[4]} << 16 | uint32_t{data[5]} << 8 | data[6]) % 0xfffffe;
  const uint8_t* next_hop_mac = data + 7;
  const uint8_t* inner_dst = data + 13;
  const uint8_t* src_ip = data + 19;
  const uint8_t* dst_ip = data + 35;
  const std::vector<uint8_t> frame(data + kParamBytes, data + size);

  // What reaches the encap action: a key that parses, its TTL class many.
  flow::FlowKey key;
  if (flow::extractFlowKey(frame.data(), static_cast<uint32_t>(frame.size()), 0, std::nullopt, key) !=
          flow::ParseResult::kOk ||
      key.ttl_class != static_cast<uint8_t>(flow::TtlClass::kMany))
    return 0;
  const bool inner6 = key.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV6);
  if (!inner6 && key.eth_type != RTE_BE16(RTE_ETHER_TYPE_IPV4)) return 0;
  if (inner6 && decap_detail::isInnerNeighborDiscovery(frame.data(), static_cast<uint32_t>(frame.size()))) return 0;

  const uint8_t our_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
  constexpr uint16_t kTunnel = 1;
  std::vector<OverlayTables::Tunnel> tunnels(2);
  std::vector<EncapTemplate6> templates6;
  uint32_t src_be = 0, dst_be = 0;
  std::memcpy(&src_be, src_ip, 4);
  std::memcpy(&dst_be, dst_ip, 4);
  if (outer6) {
    EncapParams6 p{};
    std::memcpy(p.src_mac, our_mac, 6);
    std::memcpy(p.dst_mac, next_hop_mac, 6);
    std::memcpy(p.src_ip, src_ip, 16);
    std::memcpy(p.dst_ip, dst_ip, 16);
    p.vni = vni;
    std::memcpy(p.inner_dst, inner_dst, 6);
    p.resolved = resolved;
    p.tunnel = kTunnel;
    templates6.resize(2);
    templates6[kTunnel] = buildEncapTemplate6(p);
    tunnels[kTunnel].vtep_be = tunnelKeyId(kTunnel);
    std::memcpy(tunnels[kTunnel].vtep6.data(), dst_ip, 16);
  } else {
    EncapParams p{};
    std::memcpy(p.src_mac, our_mac, 6);
    std::memcpy(p.dst_mac, next_hop_mac, 6);
    p.src_ip_be = src_be;
    p.dst_ip_be = dst_be;
    p.vni = vni;
    std::memcpy(p.inner_dst, inner_dst, 6);
    p.resolved = resolved;
    p.tunnel = kTunnel;
    tunnels[kTunnel].vtep_be = dst_be == 0 ? 1 : dst_be;
    tunnels[kTunnel].tmpl = buildEncapTemplate(p);
  }
  OverlaySnapshot ov;
  ov.enabled = true;
  ov.uplink_port = 31;
  ov.underlay_ipv6 = outer6;
  ov.overlay_mtu = overlay_mtu;
  ov.tx_ip_checksum_offload = offload;
  ov.tables = std::make_shared<const OverlayTables>(std::move(tunnels), std::vector<RemoteRoute>{},
                                                    std::vector<RemoteRoute6>{}, std::move(templates6));
  ov.counters = &counters();

  const size_t buf_len = headroom + frame.size();
  auto buf = std::make_unique<uint8_t[]>(buf_len);
  std::memset(buf.get(), 0xa5, headroom);
  std::memcpy(buf.get() + headroom, frame.data(), frame.size());
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

  rte_ether_addr gateway_mac{};
  gateway_mac.addr_bytes[0] = 0x02;
  gateway_mac.addr_bytes[5] = 0x99;
  DropReason reason{};
  const uint32_t hash = sum16(frame.data(), frame.size());
  const uint16_t next = outer6 ? (inner6 ? encapOne<true, true>(ov, gateway_mac, m, kTunnel, hash, &reason)
                                         : encapOne<false, true>(ov, gateway_mac, m, kTunnel, hash, &reason))
                               : (inner6 ? encapOne<true, false>(ov, gateway_mac, m, kTunnel, hash, &reason)
                                         : encapOne<false, false>(ov, gateway_mac, m, kTunnel, hash, &reason));
  const uint32_t outer_len = outer6 ? kOuterLen6 : kOuterLen;
  if (next == kNextDrop) {
    const bool why = (!resolved && reason == DropReason::kNeighborUnresolved) ||
                     (resolved && reason == DropReason::kOverlayMtuExceeded && frame.size() - 14 > overlay_mtu) ||
                     (resolved && reason == DropReason::kEncapNoHeadroom && headroom < outer_len);
    check(why);
    check(m->data_off == headroom && m->pkt_len == frame.size());
    check(std::memcmp(buf.get() + headroom, frame.data(), frame.size()) == 0);
    return 0;
  }
  check(next == 31 && resolved && frame.size() - 14 <= overlay_mtu && headroom >= outer_len);
  check(m->pkt_len == frame.size() + outer_len && m->data_len == m->pkt_len);
  const uint8_t* out = rte_pktmbuf_mtod(m, const uint8_t*);
  // The outer Ethernet header: to the next hop, from us.
  check(std::memcmp(out, next_hop_mac, 6) == 0 && std::memcmp(out + 6, our_mac, 6) == 0);

  // Decapsulation takes it back: our VTEP is the template's destination.
  uint16_t inner_ofs = 0, inner_len = 0;
  if (outer6) {
    DecapConfig6 cfg{};
    std::memcpy(cfg.vtep, dst_ip, 16);
    cfg.vni = vni;
    const DecapInfo6 d = classifyUplinkFrame6(out, m->pkt_len, cfg);
    check(d.cls == UplinkClass6::kVxlan && d.vni == vni && std::memcmp(d.outer_src, src_ip, 16) == 0);
    inner_ofs = d.inner_ofs;
    inner_len = d.inner_len;
    // The UDP checksum over the pseudo-header (addresses, length, next
    // header 17) and the UDP header and payload folds to all ones.
    check(d.udp_checksummed);
    const uint8_t* udp = out + 14 + 40;
    uint32_t s = sum16(out + 14 + 8, 32);
    s += d.udp_len;
    s += 17;
    s = sum16(udp, d.udp_len, s);
    check(fold(s) == 0xffff);
  } else {
    const DecapConfig cfg{dst_be, vni};
    const DecapInfo d = classifyUplinkFrame(out, m->pkt_len, cfg);
    check(d.cls == UplinkClass::kVxlan && d.vni == vni && d.outer_src_be == src_be);
    inner_ofs = d.inner_ofs;
    inner_len = d.inner_len;
    if (!offload) check(fold(sum16(out + 14, 20)) == 0xffff);
  }
  check(inner_ofs == outer_len && inner_len == frame.size());
  const uint8_t* in = out + inner_ofs;
  check(std::memcmp(in, inner_dst, 6) == 0 && std::memcmp(in + 6, gateway_mac.addr_bytes, 6) == 0);
  check(std::memcmp(in + 12, frame.data() + 12, 2) == 0);
  if (inner6) {
    check(in[14 + 7] == frame[14 + 7] - 1);
    check(std::memcmp(in + 14, frame.data() + 14, 7) == 0);
    check(std::memcmp(in + 22, frame.data() + 22, frame.size() - 22) == 0);
  } else {
    const size_t ihl = (frame[14] & 0x0f) * 4u;
    check(in[14 + 8] == frame[14 + 8] - 1);
    // An incremental update keeps a valid checksum valid (key extraction
    // does not verify it: a wrong one stays wrong).
    if (fold(sum16(frame.data() + 14, ihl)) == 0xffff) check(fold(sum16(in + 14, ihl)) == 0xffff);
    check(std::memcmp(in + 14 + ihl, frame.data() + 14 + ihl, frame.size() - 14 - ihl) == 0);
  }
  return 0;
}
