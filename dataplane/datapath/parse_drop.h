// The drop reason of a packet whose flow key could not be extracted, shared
// by the PMD's screen stage and the control path's "what would happen"
// trace, so that both name the same reason.
#pragma once

#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/flow/parse_result.h"

namespace sluice {

// Why a key could not be extracted, in the drop reasons sluiced has always
// reported (the flow key's finer ParseResult is one level below them).
inline DropReason parseDropReason(flow::ParseResult r) {
  using flow::ParseResult;
  switch (r) {
    case ParseResult::kIpv4BadVersion:
    case ParseResult::kIpv4BadIhl:
    case ParseResult::kIpv4BadTotalLength:
      return DropReason::kBadIpv4Header;
    case ParseResult::kIpv6BadVersion:
    case ParseResult::kIpv6TooManyExt:
      return DropReason::kBadIpv6Header;
    case ParseResult::kTcpBadOffset:
      return DropReason::kBadL4Header;
    case ParseResult::kArpUnsupported:
      return DropReason::kArpNotAnswered;
    default:
      return DropReason::kTruncated;  // every *_truncated result
  }
}

}  // namespace sluice
