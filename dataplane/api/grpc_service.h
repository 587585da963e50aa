// The sluice.v1.Dataplane gRPC service: decode, validate, call control, map
// the result to one status code (STYLE §13). No logic of its own beyond
// translation, and no exception escapes into gRPC. Runs on gRPC's threads.
#pragma once

#include "dataplane/control/dataplane_control.h"
#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice {

class DataplaneService final : public sluice::v1::Dataplane::Service {
 public:
  DataplaneService(DataplaneControl& control, std::string version)
      : control_(control), version_(std::move(version)) {}

  grpc::Status AddPort(grpc::ServerContext*, const v1::AddPortRequest*, v1::AddPortResponse*) override;
  grpc::Status DeletePort(grpc::ServerContext*, const v1::DeletePortRequest*, v1::DeletePortResponse*) override;
  grpc::Status ListPorts(grpc::ServerContext*, const v1::ListPortsRequest*, v1::ListPortsResponse*) override;
  grpc::Status GetStats(grpc::ServerContext*, const v1::GetStatsRequest*, v1::GetStatsResponse*) override;
  grpc::Status ClearStats(grpc::ServerContext*, const v1::ClearStatsRequest*, v1::ClearStatsResponse*) override;
  grpc::Status Health(grpc::ServerContext*, const v1::HealthRequest*, v1::HealthResponse*) override;
  // The megaflow listing (grpc_flows.cc): in one message, and in chunks.
  grpc::Status ListFlows(grpc::ServerContext*, const v1::ListFlowsRequest*, v1::ListFlowsResponse*) override;
  grpc::Status StreamFlows(grpc::ServerContext*, const v1::ListFlowsRequest*,
                           grpc::ServerWriter<v1::ListFlowsResponse>*) override;
  // SR-IOV (grpc_sriov.cc): the VF pool, and AddPort of a VF.
  grpc::Status ListVfs(grpc::ServerContext*, const v1::ListVfsRequest*, v1::ListVfsResponse*) override;
  // The VXLAN overlay's node table (grpc_nodes.cc).
  grpc::Status AddNode(grpc::ServerContext*, const v1::AddNodeRequest*, v1::AddNodeResponse*) override;
  grpc::Status DeleteNode(grpc::ServerContext*, const v1::DeleteNodeRequest*, v1::DeleteNodeResponse*) override;
  grpc::Status ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*, v1::ListNodesResponse*) override;

 private:
  grpc::Status addVfPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp);
  DataplaneControl& control_;
  std::string version_;
};

// absl status → gRPC status, code for code (their numbering is the same).
grpc::Status toGrpcStatus(const absl::Status& s);

// A VF attachment's fields of a Port message (grpc_sriov.cc).
void fillVfFields(const sriov::VfAttachment& vf, v1::Port* out);

// Overlay views → messages (grpc_nodes.cc; shared by ListNodes, GetStats, Health).
void fillRemoteNode(const RemoteNodeView& n, v1::RemoteNode* out);
void fillOverlay(const OverlayView& o, v1::Overlay* out);

}  // namespace sluice
