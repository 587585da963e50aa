// For the tests of the megaflow decision (translateFlow): the flow key of a
// UDP test frame as the PMD would extract it, and the check that a decision
// is a drop for a named reason.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow_translate.h"
#include "tests/support/frames.h"

namespace sluice::test {

inline flow::FlowKey udpKey4(uint16_t in_port, const MacAddress& src_mac, const MacAddress& dst_mac, Ipv4Address src,
                             Ipv4Address dst, uint8_t ttl = 64) {
  UdpFrameSpec s{src_mac, dst_mac, src, dst};
  s.ttl = ttl;
  const Frame f = udpFrame(s);
  flow::FlowKey k;
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), in_port, std::nullopt, k),
            flow::ParseResult::kOk);
  return k;
}

inline flow::FlowKey udpKey6(uint16_t in_port, const MacAddress& src_mac, const MacAddress& dst_mac,
                             const Ipv6Address& src, const Ipv6Address& dst) {
  const Frame f = udp6Frame(Udp6FrameSpec{src_mac, dst_mac, src, dst});
  flow::FlowKey k;
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), in_port, std::nullopt, k),
            flow::ParseResult::kOk);
  return k;
}

inline void expectDrop(const FlowTranslation& t, DropReason r) {
  EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop);
  EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(r)) << kDropReasonNames[t.actions.drop_reason];
}

}  // namespace sluice::test
