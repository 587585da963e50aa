// An rte_flow pattern that owns its item specs, masks and ranges, plus the
// MARK(id) + RSS action list of partial offload. What the megaflow
// translator produces and both offload providers consume (the real one hands
// it to rte_flow_validate/create, the software engine compiles it).
// Control path only (the offload thread and its tests).
#pragma once

#include <rte_flow.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::offload {

// One item with its storage. Only the union member named by `type` is used.
struct PatternItem {
  rte_flow_item_type type = RTE_FLOW_ITEM_TYPE_END;
  union Header {
    rte_flow_item_eth eth;
    rte_flow_item_ipv4 ipv4;
    rte_flow_item_ipv6 ipv6;
    rte_flow_item_udp udp;
    rte_flow_item_tcp tcp;
    rte_flow_item_icmp icmp;
    rte_flow_item_vxlan vxlan;
  };
  Header spec{};
  Header mask{};
  Header last{};
  bool has_last = false;  // a range spec..last (e.g. TTL 2..255)
};

class FlowPattern {
 public:
  // ETH, IPv4/IPv6, L4; a VXLAN decap pattern: outer ETH, IPV4, UDP, VXLAN
  // + inner ETH, IP, L4 = 7.
  static constexpr size_t kMaxItems = 10;

  PatternItem& add(rte_flow_item_type type) {
    PatternItem& it = items_[count_++];
    it = PatternItem{};
    it.type = type;
    return it;
  }
  size_t size() const { return count_; }
  bool full() const { return count_ == kMaxItems; }
  const PatternItem& at(size_t i) const { return items_[i]; }
  PatternItem& at(size_t i) { return items_[i]; }

  // The END-terminated rte_flow_item array pointing into this pattern's
  // storage (valid while the pattern lives and is not modified).
  std::vector<rte_flow_item> items() const;
  // e.g. "eth type=0x0800 / ipv4 dst=10.0.0.2 ttl=2..255 / end" (logs, tests).
  std::string describe() const;

 private:
  std::array<PatternItem, kMaxItems> items_{};
  size_t count_ = 0;
};

// MARK(mark) + RSS over queues [0, rx_queues) + END, with its storage.
class MarkRssActions {
 public:
  MarkRssActions(uint32_t mark, uint16_t rx_queues);
  MarkRssActions(const MarkRssActions&) = delete;
  MarkRssActions& operator=(const MarkRssActions&) = delete;
  const rte_flow_action* actions() const { return actions_.data(); }

 private:
  rte_flow_action_mark mark_{};
  std::vector<uint16_t> queues_;
  rte_flow_action_rss rss_{};
  std::array<rte_flow_action, 3> actions_{};
};

}  // namespace sluice::offload
