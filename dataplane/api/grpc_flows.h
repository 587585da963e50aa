// StreamFlows' chunking of a megaflow listing (grpc_flows.cc). API threads.
#pragma once

#include <grpcpp/support/sync_stream.h>

#include <cstddef>
#include <vector>

#include "dataplane/core/flow_control.h"
#include "sluice/v1/dataplane.pb.h"

namespace sluice {

// Bytes of flows per StreamFlows message: a quarter of gRPC's default 4 MiB
// receive limit, so no chunk comes near it, and large enough that even a
// million megaflows take only a few hundred messages.
inline constexpr size_t kFlowChunkBytes = 1 << 20;

// Writes `flows` in order as ListFlowsResponse chunks of at most about
// `chunk_bytes` serialized bytes each (a single flow larger than that goes
// alone); an empty listing is one empty chunk. False when a write failed
// (the client went away).
bool writeFlowChunks(const std::vector<FlowView>& flows, size_t chunk_bytes,
                     grpc::ServerWriterInterface<v1::ListFlowsResponse>& out);

}  // namespace sluice
