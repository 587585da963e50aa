// Helpers of the partial-offload unit tests: mbufs over plain memory (no
// EAL) and megaflow-like keys and masks. Test-only.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "dataplane/datapath/flow/flow_key.h"

namespace sluice::offload::testing {

// An rte_mbuf whose data is a heap copy of the frame.
struct FakeMbuf {
  explicit FakeMbuf(const std::vector<uint8_t>& frame)
      : storage(std::make_unique<rte_mbuf>()), data(new uint8_t[std::max<size_t>(frame.size(), 1)]) {
    rte_mbuf& m = *storage;
    std::memset(&m, 0, sizeof m);
    if (!frame.empty()) std::memcpy(data.get(), frame.data(), frame.size());
    m.buf_addr = data.get();
    m.data_len = static_cast<uint16_t>(frame.size());
    m.pkt_len = static_cast<uint32_t>(frame.size());
    m.nb_segs = 1;
  }
  rte_mbuf* mbuf() { return storage.get(); }
  // Held by pointer: rte_mbuf ends in zero-length marker arrays.
  std::unique_ptr<rte_mbuf> storage;
  std::unique_ptr<uint8_t[]> data;
};

// The mask of the router's L3 decision (flow_translate.h): EtherType, TTL
// class and IPv4 destination.
inline flow::FlowMask l3Mask() {
  flow::FlowMask m = flow::zeroKey();
  m.eth_type = 0xffff;
  m.ttl_class = 0xff;
  m.ipv4_dst = 0xffffffffU;
  return m;
}

inline flow::FlowKey l3Key(uint32_t dst_be, flow::TtlClass ttl = flow::TtlClass::kMany) {
  flow::FlowKey k = flow::zeroKey();
  k.eth_type = 0x0008;  // 0x0800 in network order
  k.ttl_class = static_cast<uint8_t>(ttl);
  k.ipv4_dst = dst_be;
  return k;
}

}  // namespace sluice::offload::testing
