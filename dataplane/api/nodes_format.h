// Human-readable renderings of the VXLAN overlay's replies for sluicectl
// (`sluicectl nodes`, the tunnel section of `sluicectl stats`). Pure.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <string>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {

std::string formatNodes(const v1::ListNodesResponse& nodes);
std::string formatNode(const v1::RemoteNode& node);
std::string formatTunnelCounters(const google::protobuf::RepeatedPtrField<v1::RemoteNode>& tunnels);

}  // namespace sluice
