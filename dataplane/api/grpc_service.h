// The sluice.v1.Dataplane gRPC service: decode, validate, call the control
// core or a module, map the result to one status code. No logic of its own
// beyond translation, and no exception escapes into gRPC. Runs on gRPC's
// threads. One proto service, so one class; each module's calls are
// translated in a file of their own (grpc_nodes.cc, grpc_sriov.cc).
#pragma once

#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/offload/offload_module.h"
#include "dataplane/modules/overlay/overlay_module.h"
#include "dataplane/modules/sriov/sriov_module.h"
#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice {

// The modules the service reaches (null: not on this node).
struct ServiceModules {
  OverlayModule* overlay = nullptr;
  SriovModule* sriov = nullptr;
  OffloadModule* offload = nullptr;
};

class DataplaneService final : public sluice::v1::Dataplane::Service {
 public:
  DataplaneService(DataplaneControl& control, std::string version, ServiceModules modules = {})
      : control_(control), version_(std::move(version)), modules_(modules) {}

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
  uint32_t overlayMtu() const { return modules_.overlay != nullptr ? modules_.overlay->overlayMtu() : 0; }

  DataplaneControl& control_;
  std::string version_;
  ServiceModules modules_;
};

// absl status → gRPC status, code for code (their numbering is the same).
grpc::Status toGrpcStatus(const absl::Status& s);

// A VF attachment's fields of a Port message (grpc_sriov.cc).
void fillVfFields(const sriov::VfAttachment& vf, v1::Port* out);

// Overlay views → messages (grpc_nodes.cc; shared by ListNodes, GetStats, Health).
void fillRemoteNode(const RemoteNodeView& n, v1::RemoteNode* out);
void fillOverlay(const OverlayView& o, v1::Overlay* out);

}  // namespace sluice
