// The megaflow listing calls of the gRPC service: ListFlows (one message) and
// StreamFlows (the same listing in chunks that each fit gRPC's default 4 MiB
// message limit, whatever the table's size). Translation only.
#include "dataplane/api/grpc_flows.h"

#include "dataplane/api/grpc_guard.h"
#include "dataplane/api/grpc_service.h"

namespace sluice {
namespace {

void fillFlow(const FlowView& f, v1::Flow* o) {
  o->set_pmd(f.pmd);
  o->set_index(f.index);
  o->set_match(f.match);
  o->set_mask(f.mask);
  o->set_actions(f.actions);
  o->set_packets(f.packets);
  o->set_bytes(f.bytes);
  o->set_idle_seconds(f.idle_seconds);
  o->set_age_seconds(f.age_seconds);
  o->set_offload(f.offload);
}

}  // namespace

bool writeFlowChunks(const std::vector<FlowView>& flows, size_t chunk_bytes,
                     grpc::ServerWriterInterface<v1::ListFlowsResponse>& out) {
  v1::ListFlowsResponse chunk;
  size_t bytes = 0;
  for (const FlowView& f : flows) {
    v1::Flow one;
    fillFlow(f, &one);
    // A repeated field's element costs its size, a length prefix and a tag.
    const size_t cost = one.ByteSizeLong() + 16;
    if (chunk.flows_size() != 0 && bytes + cost > chunk_bytes) {
      if (!out.Write(chunk)) return false;
      chunk.clear_flows();
      bytes = 0;
    }
    *chunk.add_flows() = std::move(one);
    bytes += cost;
  }
  // An empty table is one empty chunk, so the client always sees a reply.
  return out.Write(chunk);
}

grpc::Status DataplaneService::ListFlows(grpc::ServerContext*, const v1::ListFlowsRequest*,
                                         v1::ListFlowsResponse* resp) {
  return guarded([&] {
    for (const FlowView& f : control_.listFlows()) fillFlow(f, resp->add_flows());
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::StreamFlows(grpc::ServerContext*, const v1::ListFlowsRequest*,
                                           grpc::ServerWriter<v1::ListFlowsResponse>* writer) {
  return guarded([&] {
    if (!writeFlowChunks(control_.listFlows(), kFlowChunkBytes, *writer))
      return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away during the listing");
    return grpc::Status::OK;
  });
}

}  // namespace sluice
