// The node controller's side of sluiced's API socket: sluice.v1.RemoteNodes
// (the node table, the overlay block, the controller report) and the local
// ports' listing. Calls carry a
// deadline; a sluiced that is down or restarting is an error value, and gRPC
// reconnects the channel by itself. Used by the reconcile loop only.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "sluice/v1/dataplane.grpc.pb.h"
#include "sluice/v1/overlay.grpc.pb.h"

namespace sluice::agent {

class SluicedClient {
 public:
  SluicedClient(const std::string& socket, std::chrono::milliseconds deadline);
  grpc::Status listNodes(v1::ListNodesResponse* out);
  grpc::Status applyNodes(const v1::ApplyNodesRequest& req, v1::ApplyNodesResponse* out);
  grpc::Status report(const v1::ControllerState& state, v1::ReportControllerResponse* out);
  // The local ports (sluice.v1.Dataplane), for the prefixes this node publishes.
  grpc::Status listPorts(v1::ListPortsResponse* out);

 private:
  std::unique_ptr<grpc::ClientContext> context() const;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RemoteNodes::Stub> stub_;
  std::unique_ptr<v1::Dataplane::Stub> ports_stub_;
};

}  // namespace sluice::agent
