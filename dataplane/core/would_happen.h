// The "what would happen" trace: a frame run through the PMD's screen stage
// and, if it reaches lookup, translated from the tables in force (the
// decision a miss gets, which the megaflow it installs then caches), with
// nothing sent. Control threads.
#pragma once

#include <cstdint>
#include <span>

#include "dataplane/core/dataplane_control.h"
#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow_translate.h"

namespace sluice {

struct WouldHappen {
  flow::FlowKey key{};
  flow::ParseResult parse = flow::ParseResult::kOk;
  // Decided before lookup: dropped (reason), or ARP, answered per packet
  // from the port's addresses (not predicted here: arp true).
  bool screened = false;
  bool arp = false;
  bool neighbor_discovery = false;  // IPv6 neighbor discovery, likewise per packet
  DropReason reason = DropReason::kTruncated;
  // Otherwise the translation: actions and the mask of the megaflow it makes.
  FlowTranslation translation;
};

WouldHappen wouldHappen(DataplaneControl& control, uint16_t in_port, std::span<const uint8_t> frame);

}  // namespace sluice
