// The overlay module's gRPC service, sluice.v1.RemoteNodes: the node table
// (AddNode, DeleteNode, ApplyNodes, ListNodes; the first two are batches of
// one of the third). Decode, validate, call the module, map the status; on
// a node without an uplink every call answers FAILED_PRECONDITION. Also
// keeps the node controller's last report (ReportController) for ListNodes.
// Runs on gRPC's threads.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "dataplane/modules/overlay/overlay_module.h"
#include "sluice/v1/overlay.grpc.pb.h"

namespace sluice {

class RemoteNodesService final : public v1::RemoteNodes::Service {
 public:
  // `overlay` null: this node has no uplink.
  explicit RemoteNodesService(OverlayModule* overlay);
  // The most ops one ApplyNodes takes: the table's size.
  static constexpr int kMaxApplyOps = 8192;

  grpc::Status AddNode(grpc::ServerContext*, const v1::AddNodeRequest*, v1::AddNodeResponse*) override;
  grpc::Status DeleteNode(grpc::ServerContext*, const v1::DeleteNodeRequest*, v1::DeleteNodeResponse*) override;
  grpc::Status ApplyNodes(grpc::ServerContext*, const v1::ApplyNodesRequest*, v1::ApplyNodesResponse*) override;
  grpc::Status ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*, v1::ListNodesResponse*) override;
  grpc::Status ReportController(grpc::ServerContext*, const v1::ReportControllerRequest*,
                                v1::ReportControllerResponse*) override;

 private:
  OverlayModule* const overlay_;
  const std::string instance_;  // random per process: see ListNodesResponse.instance
  // What the node controller last said about itself: shown, never acted on,
  // so it lives here beside the calls that show it rather than in a table
  // of the core (a restart forgets it; the controller reports again).
  std::mutex controller_mutex_;
  std::optional<v1::ControllerState> controller_;  // under controller_mutex_
};

// Overlay views → messages (also what the overlay adds to GetStats and
// Health).
void fillRemoteNode(const RemoteNodeView& n, v1::RemoteNode* out);
void fillOverlay(const OverlayView& o, v1::Overlay* out);

}  // namespace sluice
