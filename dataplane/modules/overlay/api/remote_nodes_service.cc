#include "dataplane/modules/overlay/api/remote_nodes_service.h"

#include <absl/strings/str_cat.h>

#include <random>
#include <vector>

#include "dataplane/api/grpc_guard.h"
#include "dataplane/api/grpc_service.h"
#include "dataplane/modules/overlay/api/remote_node_decode.h"

namespace sluice {
namespace {

grpc::Status invalid(const std::string& why) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why); }

v1::NodeSource toProto(NodeSource s) {
  switch (s) {
    case NodeSource::kStatic: return v1::NODE_SOURCE_STATIC;
    case NodeSource::kApi: return v1::NODE_SOURCE_API;
    case NodeSource::kKubernetes: return v1::NODE_SOURCE_KUBERNETES;
  }
  return v1::NODE_SOURCE_UNSPECIFIED;
}

std::string randomInstance() {
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return absl::StrCat(absl::Hex(v, absl::kZeroPad16));
}

int64_t unixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

void fillRemoteNode(const RemoteNodeView& n, v1::RemoteNode* out) {
  out->set_name(n.node.name);
  out->set_vtep(vtepText(n.node));
  for (const Ipv4Cidr& c : n.node.pod_cidrs) out->add_pod_cidrs(c.toString());
  for (const Ipv6Cidr& c : n.node.pod_cidrs_v6) out->add_pod_cidrs(c.toString());
  for (const Ipv4Cidr& c : n.node.routed_prefixes) out->add_routed_prefixes(c.toString());
  for (const Ipv6Cidr& c : n.node.routed_prefixes_v6) out->add_routed_prefixes(c.toString());
  if (n.node.mac) out->set_mac(n.node.mac->toString());
  out->set_tunnel(n.tunnel);
  out->set_next_hop(n.next_hop6 ? n.next_hop6->toString() : n.next_hop.toString());
  if (n.next_hop_mac) out->set_next_hop_mac(n.next_hop_mac->toString());
  out->set_neighbor_state(n.neighbor_state);
  out->set_rx_packets(n.rx_packets);
  out->set_rx_bytes(n.rx_bytes);
  out->set_tx_packets(n.tx_packets);
  out->set_tx_bytes(n.tx_bytes);
  out->set_source(toProto(n.source));
  out->set_added_unix_seconds(unixSeconds(n.added));
}

void fillOverlay(const OverlayView& o, v1::Overlay* out) {
  out->set_vtep(o.vtep6 ? o.vtep6->toString() : o.vtep.toString());
  out->set_vtep_mac(o.vtep_mac.toString());
  out->set_vni(o.vni);
  out->set_overlay_mtu(o.overlay_mtu);
  out->set_uplink_port(o.uplink_port);
  out->set_ip_checksum_offload(o.ip_checksum_offload);
  out->set_link_up(o.link_up);
  if (o.external_gateway) {
    v1::ExternalNetwork* x = out->mutable_external();
    x->set_gateway(o.external_gateway->toString());
    x->set_vlan(o.external_vlan);
    if (o.external_gateway_mac) x->set_gateway_mac(o.external_gateway_mac->toString());
    x->set_neighbor_state(o.external_gateway_state);
  }
}

RemoteNodesService::RemoteNodesService(OverlayModule* overlay) : overlay_(overlay), instance_(randomInstance()) {}

grpc::Status RemoteNodesService::AddNode(grpc::ServerContext*, const v1::AddNodeRequest* req,
                                         v1::AddNodeResponse* resp) {
  return guarded([&] {
    std::vector<NodeOp> ops(1);
    ops[0].replace = req->replace();
    if (grpc::Status s = decodeNode(req->node(), ops[0].node, ops[0].source); !s.ok()) return s;
    if (overlay_ == nullptr) return toGrpcStatus(OverlayModule::absent());
    const std::string name = ops[0].node.name;
    absl::StatusOr<NodeChange> change = std::move(overlay_->applyNodes(std::move(ops))[0]);
    if (!change.ok()) return toGrpcStatus(change.status());
    resp->set_created(*change == NodeChange::kCreated);
    resp->set_updated(*change == NodeChange::kUpdated);
    // The one node, not a listing of the table: a controller adds thousands.
    if (std::optional<RemoteNodeView> n = overlay_->nodeView(name)) fillRemoteNode(*n, resp->mutable_node());
    return grpc::Status::OK;
  });
}

grpc::Status RemoteNodesService::DeleteNode(grpc::ServerContext*, const v1::DeleteNodeRequest* req,
                                            v1::DeleteNodeResponse* resp) {
  return guarded([&] {
    if (overlay_ == nullptr) return toGrpcStatus(OverlayModule::absent());
    std::vector<NodeOp> ops(1);
    ops[0].kind = NodeOp::Kind::kRemove;
    ops[0].node.name = req->name();
    absl::StatusOr<NodeChange> change = std::move(overlay_->applyNodes(std::move(ops))[0]);
    if (!change.ok()) return toGrpcStatus(change.status());
    resp->set_deleted(*change == NodeChange::kRemoved);
    return grpc::Status::OK;
  });
}

grpc::Status RemoteNodesService::ApplyNodes(grpc::ServerContext*, const v1::ApplyNodesRequest* req,
                                            v1::ApplyNodesResponse* resp) {
  return guarded([&] {
    if (overlay_ == nullptr) return toGrpcStatus(OverlayModule::absent());
    if (req->ops_size() > kMaxApplyOps)
      return invalid(absl::StrCat("ops: ", req->ops_size(), " in one request, at most ", kMaxApplyOps));
    resp->set_instance(instance_);
    // Ops that decode go to the table as one batch; the others are answered
    // here, in their place.
    std::vector<NodeOp> ops;
    std::vector<v1::NodeOpResult*> pending;  // ops[i]'s result
    ops.reserve(req->ops_size());
    for (const v1::NodeOp& in : req->ops()) {
      v1::NodeOpResult* result = resp->add_results();
      NodeOp op;
      op.replace = in.replace();
      grpc::Status decoded;
      if (in.has_put()) {
        decoded = decodeNode(in.put(), op.node, op.source);
      } else if (in.op_case() == v1::NodeOp::kRemove) {
        op.kind = NodeOp::Kind::kRemove;
        op.node.name = in.remove();
      } else {
        decoded = invalid("op: neither put nor remove");
      }
      result->set_name(in.has_put() ? in.put().name() : in.remove());
      if (!decoded.ok()) {
        result->set_code(decoded.error_code());
        result->set_message(decoded.error_message());
        continue;
      }
      ops.push_back(std::move(op));
      pending.push_back(result);
    }
    std::vector<absl::StatusOr<NodeChange>> changes = overlay_->applyNodes(std::move(ops));
    for (size_t i = 0; i < changes.size(); ++i) {
      v1::NodeOpResult* result = pending[i];
      if (!changes[i].ok()) {
        const grpc::Status s = toGrpcStatus(changes[i].status());
        result->set_code(s.error_code());
        result->set_message(s.error_message());
        continue;
      }
      result->set_created(*changes[i] == NodeChange::kCreated);
      result->set_updated(*changes[i] == NodeChange::kUpdated);
      result->set_removed(*changes[i] == NodeChange::kRemoved);
    }
    return grpc::Status::OK;
  });
}

grpc::Status RemoteNodesService::ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*,
                                           v1::ListNodesResponse* resp) {
  return guarded([&] {
    if (overlay_ == nullptr) return toGrpcStatus(OverlayModule::absent());
    for (const RemoteNodeView& n : overlay_->listNodes()) fillRemoteNode(n, resp->add_nodes());
    fillOverlay(overlay_->view(), resp->mutable_overlay());
    resp->set_instance(instance_);
    std::lock_guard lock(controller_mutex_);
    if (controller_) *resp->mutable_controller() = *controller_;
    return grpc::Status::OK;
  });
}

grpc::Status RemoteNodesService::ReportController(grpc::ServerContext*, const v1::ReportControllerRequest* req,
                                                  v1::ReportControllerResponse* resp) {
  return guarded([&] {
    if (overlay_ == nullptr) return toGrpcStatus(OverlayModule::absent());
    resp->set_instance(instance_);
    v1::ControllerState state = req->state();
    state.set_reported_unix_seconds(unixSeconds(std::chrono::system_clock::now()));
    std::lock_guard lock(controller_mutex_);
    controller_ = std::move(state);
    return grpc::Status::OK;
  });
}

}  // namespace sluice
