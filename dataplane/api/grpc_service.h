// The core's gRPC service, sluice.v1.Dataplane: ports, stats, health,
// flows and settings. Decode, validate, call the control core, map the result to one
// status code; no logic of its own beyond translation, and no exception
// escapes into gRPC. Feature modules serve their own services beside it and
// add to its answers through ServiceExtension; it knows none by name. Runs
// on gRPC's threads.
#pragma once

#include <string>
#include <vector>

#include "dataplane/api/deprecated_forwards.h"
#include "dataplane/api/service_extension.h"
#include "dataplane/config/runtime_config.h"
#include "dataplane/core/dataplane_control.h"
#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice {

class DataplaneService final : public sluice::v1::Dataplane::Service {
 public:
  // `settings`: sluiced's run-time settings (null: GetConfig and SetConfig
  // are UNIMPLEMENTED, as in tests of other calls).
  DataplaneService(DataplaneControl& control, std::string version, std::vector<ServiceExtension*> extensions = {},
                   DeprecatedForwards forwards = {}, RuntimeConfig* settings = nullptr)
      : control_(control),
        version_(std::move(version)),
        extensions_(std::move(extensions)),
        forwards_(std::move(forwards)),
        settings_(settings) {}

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
  // sluiced's settings (grpc_config.cc).
  grpc::Status GetConfig(grpc::ServerContext*, const v1::GetConfigRequest*, v1::GetConfigResponse*) override;
  grpc::Status SetConfig(grpc::ServerContext*, const v1::SetConfigRequest*, v1::SetConfigResponse*) override;
  // Deprecated calls a module's service answers (deprecated_forwards.h).
  grpc::Status ListVfs(grpc::ServerContext*, const v1::ListVfsRequest*, v1::ListVfsResponse*) override;
  grpc::Status AddNode(grpc::ServerContext*, const v1::AddNodeRequest*, v1::AddNodeResponse*) override;
  grpc::Status DeleteNode(grpc::ServerContext*, const v1::DeleteNodeRequest*, v1::DeleteNodeResponse*) override;
  grpc::Status ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*, v1::ListNodesResponse*) override;

 private:
  DataplaneControl& control_;
  std::string version_;
  std::vector<ServiceExtension*> extensions_;
  DeprecatedForwards forwards_;
  RuntimeConfig* settings_;
};

// absl status → gRPC status, code for code (their numbering is the same).
grpc::Status toGrpcStatus(const absl::Status& s);

// A port's fields of a Port message (a module's attachment fills the
// request's part from a PortView too).
void fillPortMessage(const PortView& p, v1::Port* out);

}  // namespace sluice
