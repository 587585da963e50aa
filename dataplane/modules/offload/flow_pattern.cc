// FlowPattern's views and MARK + RSS actions. Control path.
#include "dataplane/modules/offload/flow_pattern.h"

#include <absl/strings/str_cat.h>
#include <arpa/inet.h>

namespace sluice::offload {
namespace {

std::string ipv4Text(rte_be32_t be) {
  char buf[INET_ADDRSTRLEN];
  ::inet_ntop(AF_INET, &be, buf, sizeof(buf));
  return buf;
}

std::string ipv6Text(const uint8_t* a) {
  char buf[INET6_ADDRSTRLEN];
  ::inet_ntop(AF_INET6, a, buf, sizeof(buf));
  return buf;
}

}  // namespace

std::vector<rte_flow_item> FlowPattern::items() const {
  std::vector<rte_flow_item> out;
  for (size_t i = 0; i < count_; ++i) {
    const PatternItem& it = items_[i];
    out.push_back({it.type, &it.spec, it.has_last ? &it.last : nullptr, &it.mask});
  }
  out.push_back({RTE_FLOW_ITEM_TYPE_END, nullptr, nullptr, nullptr});
  return out;
}

std::string FlowPattern::describe() const {
  std::string out;
  for (size_t i = 0; i < count_; ++i) {
    const PatternItem& it = items_[i];
    std::string fields;
    auto add = [&](const std::string& f) { absl::StrAppend(&fields, " ", f); };
    switch (it.type) {
      case RTE_FLOW_ITEM_TYPE_ETH:
        absl::StrAppend(&out, "eth");
        if (it.mask.eth.hdr.ether_type != 0)
          add(absl::StrCat("type=0x", absl::Hex(ntohs(it.spec.eth.hdr.ether_type), absl::kZeroPad4)));
        if (it.mask.eth.has_vlan) add(it.spec.eth.has_vlan ? "vlan" : "untagged");
        break;
      case RTE_FLOW_ITEM_TYPE_IPV4: {
        absl::StrAppend(&out, "ipv4");
        const rte_ipv4_hdr& s = it.spec.ipv4.hdr;
        const rte_ipv4_hdr& m = it.mask.ipv4.hdr;
        if (m.src_addr) add(absl::StrCat("src=", ipv4Text(s.src_addr), "/", ipv4Text(m.src_addr)));
        if (m.dst_addr) add(absl::StrCat("dst=", ipv4Text(s.dst_addr), "/", ipv4Text(m.dst_addr)));
        if (m.version_ihl) add(absl::StrCat("version_ihl=0x", absl::Hex(s.version_ihl)));
        if (m.next_proto_id) add(absl::StrCat("proto=", s.next_proto_id));
        if (m.fragment_offset) add(absl::StrCat("frag=", ntohs(s.fragment_offset), "/0x", absl::Hex(ntohs(m.fragment_offset))));
        if (m.type_of_service) add(absl::StrCat("tos=", s.type_of_service));
        if (m.time_to_live)
          add(absl::StrCat("ttl=", s.time_to_live,
                           it.has_last ? absl::StrCat("..", it.last.ipv4.hdr.time_to_live) : ""));
        break;
      }
      case RTE_FLOW_ITEM_TYPE_IPV6: {
        absl::StrAppend(&out, "ipv6");
        const rte_ipv6_hdr& s = it.spec.ipv6.hdr;
        if (it.mask.ipv6.hdr.src_addr[0] | it.mask.ipv6.hdr.src_addr[15]) add("src=" + ipv6Text(s.src_addr));
        if (it.mask.ipv6.hdr.dst_addr[0] | it.mask.ipv6.hdr.dst_addr[15]) add("dst=" + ipv6Text(s.dst_addr));
        if (it.mask.ipv6.hdr.proto) add(absl::StrCat("proto=", s.proto));
        if (it.mask.ipv6.hdr.hop_limits)
          add(absl::StrCat("hlim=", s.hop_limits,
                           it.has_last ? absl::StrCat("..", it.last.ipv6.hdr.hop_limits) : ""));
        break;
      }
      case RTE_FLOW_ITEM_TYPE_UDP:
      case RTE_FLOW_ITEM_TYPE_TCP: {
        const bool udp = it.type == RTE_FLOW_ITEM_TYPE_UDP;
        absl::StrAppend(&out, udp ? "udp" : "tcp");
        const uint16_t sm = udp ? it.mask.udp.hdr.src_port : it.mask.tcp.hdr.src_port;
        const uint16_t dm = udp ? it.mask.udp.hdr.dst_port : it.mask.tcp.hdr.dst_port;
        if (sm) add(absl::StrCat("src=", ntohs(udp ? it.spec.udp.hdr.src_port : it.spec.tcp.hdr.src_port)));
        if (dm) add(absl::StrCat("dst=", ntohs(udp ? it.spec.udp.hdr.dst_port : it.spec.tcp.hdr.dst_port)));
        break;
      }
      case RTE_FLOW_ITEM_TYPE_ICMP:
        absl::StrAppend(&out, "icmp");
        if (it.mask.icmp.hdr.icmp_type) add(absl::StrCat("type=", it.spec.icmp.hdr.icmp_type));
        if (it.mask.icmp.hdr.icmp_code) add(absl::StrCat("code=", it.spec.icmp.hdr.icmp_code));
        break;
      case RTE_FLOW_ITEM_TYPE_VXLAN:
        absl::StrAppend(&out, "vxlan");
        if (it.mask.vxlan.flags) add(absl::StrCat("flags=0x", absl::Hex(it.spec.vxlan.flags)));
        add(absl::StrCat("vni=", (it.spec.vxlan.vni[0] << 16) | (it.spec.vxlan.vni[1] << 8) | it.spec.vxlan.vni[2]));
        break;
      default:
        absl::StrAppend(&out, "item", static_cast<int>(it.type));
    }
    absl::StrAppend(&out, fields, " / ");
  }
  absl::StrAppend(&out, "end");
  return out;
}

MarkRssActions::MarkRssActions(uint32_t mark, uint16_t rx_queues) {
  mark_.id = mark;
  for (uint16_t q = 0; q < (rx_queues == 0 ? 1 : rx_queues); ++q) queues_.push_back(q);
  rss_.func = RTE_ETH_HASH_FUNCTION_DEFAULT;
  rss_.level = 0;
  rss_.types = 0;  // the port's configured RSS types
  rss_.key_len = 0;
  rss_.key = nullptr;
  rss_.queue_num = static_cast<uint32_t>(queues_.size());
  rss_.queue = queues_.data();
  actions_[0] = {RTE_FLOW_ACTION_TYPE_MARK, &mark_};
  actions_[1] = {RTE_FLOW_ACTION_TYPE_RSS, &rss_};
  actions_[2] = {RTE_FLOW_ACTION_TYPE_END, nullptr};
}

}  // namespace sluice::offload
