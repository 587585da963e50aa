// A RemoteNode of an AddNode or ApplyNodes request → the table's settings:
// the syntax of each field and the bounds of what one node may claim
// (common/remote_node_limits.h), checked before anything is parsed at
// length; the table checks the rest (validateRemoteNode). Pure; gRPC's
// threads (and the fuzz target).
#pragma once

#include <grpcpp/support/status.h>

#include "dataplane/config/overlay_config.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "sluice/v1/overlay.pb.h"

namespace sluice {

// INVALID_ARGUMENT naming the bad field: a VTEP that is no address, a CIDR
// that is none, more than kMaxPodCidrsPerFamily pod CIDRs of a family or
// more than kMaxRoutedPrefixesPerNode routed prefixes, a MAC that is no
// unicast MAC.
grpc::Status decodeNode(const v1::RemoteNode& in, RemoteNodeConfig& node, NodeSource& source);

}  // namespace sluice
