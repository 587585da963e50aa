// Human-readable renderings of the VXLAN overlay's replies for sluicectl
// (`sluicectl nodes`, the tunnel section of `sluicectl stats`). Pure.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <cstdint>
#include <string>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {

// `now_unix`: the current time in Unix seconds, for the nodes' ages.
std::string formatNodes(const v1::ListNodesResponse& nodes, int64_t now_unix);
std::string formatNode(const v1::RemoteNode& node, int64_t now_unix);
// "45s", "12m", "3h", "2d" (as kubectl prints ages); "-" for an unknown time.
std::string formatAge(int64_t since_unix, int64_t now_unix);
std::string formatTunnelCounters(const google::protobuf::RepeatedPtrField<v1::RemoteNode>& tunnels);

}  // namespace sluice
