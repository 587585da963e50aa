// libFuzzer target for the uplink's decap path: any byte string as
// a frame received on the uplink. classifyUplinkFrame must never read past
// the frame, and when it decapsulates, the inner frame it names must lie
// inside the outer one and parse as a flow key with the tunnel metadata, as
// the PMD does next (datapath/overlay/uplink_stage.cc), and must not be IPv6
// neighbor discovery (the seeds hold inner IPv4, inner IPv6 and inner ND).
// Every input is classified as an IPv6 underlay would too
// (classifyUplinkFrame6, seeds outer IPv6 toward fd00:77::1): the same
// promises, the sender's address inside the frame.
// What the IPv4 underlay refuses is then classified for the external network
// (classifyExternalFrame) untagged and in the VLAN the frame's first byte
// picks (seeds: tagged IPv4 in VLAN 100): a frame it keeps must carry the
// tag it names, and with the tag popped parses as a flow key, as the PMD
// does next.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dataplane/datapath/external_network.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/overlay/vxlan_decap.h"
#include "dataplane/datapath/overlay/vxlan_decap6.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65535) return 0;
  // A heap copy of exactly `size` bytes, so ASan sees any over-read.
  std::vector<uint8_t> frame(data, data + size);
  // VTEP 192.168.77.1, VNI 42: the corpus' frames are addressed to them.
  const sluice::vxlan::DecapConfig cfg{0x014da8c0u, 42};
  const sluice::vxlan::DecapInfo d =
      sluice::vxlan::classifyUplinkFrame(frame.data(), static_cast<uint32_t>(frame.size()), cfg);
  // The frame as a chained mbuf: a first segment of a length the last two
  // input bytes choose, the whole length as frame_len. Decapsulated so, it
  // must name what the contiguous frame names, with the inner headers read
  // (Ethernet and an IPv6 header's first byte beyond) in the segment.
  if (size >= 2) {
    const size_t split = (data[size - 2] | size_t{data[size - 1]} << 8) % (size + 1);
    std::vector<uint8_t> head(data, data + split);
    const sluice::vxlan::DecapInfo c = sluice::vxlan::classifyUplinkFrame(
        head.data(), static_cast<uint32_t>(split), cfg, static_cast<uint32_t>(size));
    if (c.cls == sluice::vxlan::UplinkClass::kVxlan &&
        (d.cls != c.cls || d.inner_ofs != c.inner_ofs || d.inner_len != c.inner_len || d.vni != c.vni ||
         (split != size && c.inner_ofs + 14u + 40u + 1u > split)))
      std::abort();
  }
  if (d.cls == sluice::vxlan::UplinkClass::kVxlan) {
    if (d.inner_ofs + d.inner_len > size || d.inner_len < 14 || d.vni != cfg.vni || d.outer_dst_be != cfg.vtep_ip_be)
      std::abort();
    std::vector<uint8_t> inner(frame.begin() + d.inner_ofs, frame.begin() + d.inner_ofs + d.inner_len);
    sluice::flow::FlowKey key;
    (void)sluice::flow::extractFlowKey(inner.data(), static_cast<uint32_t>(inner.size()), 31, std::nullopt, key);
    // Neighbor discovery right behind an untagged inner IPv6 header is never
    // decapsulated (answering it would reply outside the tunnel).
    if (inner[12] == 0x86 && inner[13] == 0xdd && inner.size() > 14 + 40 && inner[14 + 6] == 58 &&
        sluice::isNeighborDiscoveryType(inner[14 + 40]))
      std::abort();
    key.tun_src = d.outer_src_be;
    key.tun_dst = d.outer_dst_be;
    key.tun_vni = d.vni;
  } else if (d.cls == sluice::vxlan::UplinkClass::kDrop) {
    if (static_cast<size_t>(d.reason) >= sluice::kDropReasonCount) std::abort();
    const uint16_t picked = size != 0 && data[0] % 2 == 0 ? 100 : static_cast<uint16_t>(size != 0 ? data[0] : 0);
    for (const uint16_t vlan : {uint16_t{0}, picked}) {
      const sluice::vxlan::ExternalRxInfo x =
          sluice::vxlan::classifyExternalFrame(frame.data(), static_cast<uint32_t>(frame.size()), vlan, d.reason);
      if (static_cast<size_t>(x.reason) >= sluice::kDropReasonCount) std::abort();
      if (x.cls == sluice::vxlan::ExternalRx::kDrop) continue;
      if (x.tagged != (vlan != 0) || (x.tagged && (size < 18 || ((frame[14] << 8 | frame[15]) & 0xfff) != vlan)))
        std::abort();
      std::vector<uint8_t> untagged(frame);
      if (x.tagged) untagged.erase(untagged.begin() + 12, untagged.begin() + 16);
      const uint16_t type = static_cast<uint16_t>(untagged[12] << 8 | untagged[13]);
      if (type != (x.cls == sluice::vxlan::ExternalRx::kIpv4 ? 0x0800 : 0x0806)) std::abort();
      sluice::flow::FlowKey key;
      (void)sluice::flow::extractFlowKey(untagged.data(), static_cast<uint32_t>(untagged.size()), 31, std::nullopt,
                                         key);
    }
  }

  // VTEP fd00:77::1, VNI 42.
  sluice::vxlan::DecapConfig6 cfg6;
  cfg6.vtep[0] = 0xfd;
  cfg6.vtep[3] = 0x77;
  cfg6.vtep[15] = 1;
  cfg6.vni = 42;
  const sluice::vxlan::DecapInfo6 d6 =
      sluice::vxlan::classifyUplinkFrame6(frame.data(), static_cast<uint32_t>(frame.size()), cfg6);
  if (d6.cls == sluice::vxlan::UplinkClass6::kVxlan) {
    if (d6.inner_ofs + d6.inner_len > size || d6.inner_len < 14 || d6.vni != cfg6.vni ||
        d6.udp_len != d6.inner_len + 16u || d6.outer_src != frame.data() + 22 ||
        std::memcmp(frame.data() + 38, cfg6.vtep, 16) != 0)
      std::abort();
    std::vector<uint8_t> inner(frame.begin() + d6.inner_ofs, frame.begin() + d6.inner_ofs + d6.inner_len);
    sluice::flow::FlowKey key;
    (void)sluice::flow::extractFlowKey(inner.data(), static_cast<uint32_t>(inner.size()), 31, std::nullopt, key);
    if (inner[12] == 0x86 && inner[13] == 0xdd && inner.size() > 14 + 40 && inner[14 + 6] == 58 &&
        sluice::isNeighborDiscoveryType(inner[14 + 40]))
      std::abort();
  } else if (d6.cls == sluice::vxlan::UplinkClass6::kNd) {
    if (size < 14 + 40 + 1 || frame[20] != 58 || !sluice::isNeighborDiscoveryType(frame[54])) std::abort();
  } else if (static_cast<size_t>(d6.reason) >= sluice::kDropReasonCount) {
    std::abort();
  }
  return 0;
}
