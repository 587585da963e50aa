#include "dataplane/api/grpc_service.h"

#include "dataplane/api/grpc_guard.h"

namespace sluice {
namespace {

// A deprecated call: what the module's own service answers.
template <typename Request, typename Response>
grpc::Status forward(const ForwardedCall<Request, Response>& call, grpc::ServerContext* context,
                     const Request* req, Response* resp) {
  if (!call)
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this sluiced is built without the module serving this call");
  return call(context, req, resp);
}

}  // namespace

void fillPortMessage(const PortView& p, v1::Port* out) {
  out->set_port_no(p.port_no);
  out->mutable_attachment()->set_container_id(p.request.attachment.container_id);
  out->mutable_attachment()->set_ifname(p.request.attachment.ifname);
  out->set_pod_namespace(p.request.pod_namespace);
  out->set_pod_name(p.request.pod_name);
  if (p.request.hasIpv4()) out->set_ip(p.request.ip.toString());
  if (p.request.ipv6) out->set_ipv6(p.request.ipv6->toString());
  out->set_mac(p.request.mac.toString());
  out->set_mtu(p.request.mtu);
  out->set_type(p.request.kind == PortKind::kVhostUser ? v1::PORT_TYPE_VHOST_USER
                : p.request.kind == PortKind::kDpdkVdev ? v1::PORT_TYPE_DPDK_VDEV
                                                        : v1::PORT_TYPE_SRIOV_VF);
  out->set_devargs(p.request.devargs);
  out->set_vhost_mode(p.request.vhost_mode == VhostMode::kClient ? v1::VHOST_MODE_CLIENT : v1::VHOST_MODE_SERVER);
  out->set_socket_path(p.socket_path);
  out->set_pmd(p.pmd);
  out->set_pmd_pinned(p.request.pmd.has_value());
  out->set_queues(p.request.queues);
  for (unsigned pmd : p.queue_pmds) out->add_queue_pmds(pmd);
  if (p.numa_socket) out->set_numa_socket(*p.numa_socket);
  out->set_dpdk_name(p.dpdk_name);
  out->set_link_up(p.link_up);
  out->set_netns(p.netns);
  out->set_source_validation(p.request.source_validation);
  for (const Ipv4Cidr& c : p.request.routed_prefixes) out->add_routed_prefixes(c.toString());
  for (const Ipv6Cidr& c : p.request.routed_prefixes_v6) out->add_routed_prefixes(c.toString());
}

grpc::Status toGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

grpc::Status DataplaneService::AddPort(grpc::ServerContext*, const v1::AddPortRequest* req,
                                       v1::AddPortResponse* resp) {
  return guarded([&] {
    // A port type a module attaches itself (its answer is the module's own).
    for (ServiceExtension* e : extensions_)
      if (std::optional<grpc::Status> served = e->addPort(*req, resp)) return *served;
    RawPortRequest raw;
    raw.container_id = req->attachment().container_id();
    raw.ifname = req->attachment().ifname();
    raw.pod_namespace = req->pod_namespace();
    raw.pod_name = req->pod_name();
    raw.ip = req->ip();
    raw.ipv6 = req->ipv6();
    raw.mtu = req->mtu();
    raw.mac = req->mac();
    raw.socket_subdir = req->socket_subdir();
    raw.devargs = req->devargs();
    if (req->has_socket_group()) raw.socket_group = req->socket_group();
    if (req->has_source_validation()) raw.source_validation = req->source_validation();
    raw.routed_prefixes.assign(req->routed_prefixes().begin(), req->routed_prefixes().end());
    if (req->has_pmd()) raw.pmd = req->pmd();
    if (req->has_queues()) raw.queues = req->queues();
    switch (req->type()) {
      case v1::PORT_TYPE_UNSPECIFIED:
      case v1::PORT_TYPE_VHOST_USER: raw.kind = PortKind::kVhostUser; break;
      case v1::PORT_TYPE_SRIOV_VF: raw.kind = PortKind::kSriovVf; break;  // refused: no module serves it
      case v1::PORT_TYPE_DPDK_VDEV: raw.kind = PortKind::kDpdkVdev; break;
      default:
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "type: unknown port type");
    }
    switch (req->vhost_mode()) {
      case v1::VHOST_MODE_UNSPECIFIED:
      case v1::VHOST_MODE_SERVER: raw.vhost_mode = VhostMode::kServer; break;
      case v1::VHOST_MODE_CLIENT: raw.vhost_mode = VhostMode::kClient; break;
      default:
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "vhost_mode: unknown mode");
    }
    auto result = control_.addPort(raw, req->netns());
    if (!result.ok()) return toGrpcStatus(result.status());
    v1::Port* port = resp->mutable_port();
    fillPortMessage(result->port, port);
    for (ServiceExtension* e : extensions_) e->fillPorts({&port, 1});
    resp->set_created(result->created);
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::DeletePort(grpc::ServerContext*, const v1::DeletePortRequest* req,
                                          v1::DeletePortResponse* resp) {
  return guarded([&] {
    auto deleted = control_.deletePort({req->attachment().container_id(), req->attachment().ifname()});
    if (!deleted.ok()) return toGrpcStatus(deleted.status());
    resp->set_deleted(*deleted);
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::ListPorts(grpc::ServerContext*, const v1::ListPortsRequest*,
                                         v1::ListPortsResponse* resp) {
  return guarded([&] {
    for (const PortView& p : control_.listPorts()) fillPortMessage(p, resp->add_ports());
    for (ServiceExtension* e : extensions_) e->listPorts(resp);
    std::vector<v1::Port*> ports(resp->mutable_ports()->pointer_begin(), resp->mutable_ports()->pointer_end());
    for (ServiceExtension* e : extensions_) e->fillPorts(ports);
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::GetStats(grpc::ServerContext*, const v1::GetStatsRequest*,
                                        v1::GetStatsResponse* resp) {
  return guarded([&] {
    StatsView s = control_.stats();
    resp->set_tsc_hz(s.tsc_hz);
    resp->set_seconds_since_clear(s.seconds_since_clear);
    resp->set_tx_flush_interval_us(s.tx_flush_interval_us);
    for (const PmdStatsView& p : s.pmds) {
      v1::PmdStats* o = resp->add_pmds();
      o->set_index(p.index);
      o->set_lcore(p.lcore);
      o->set_numa_socket(p.numa_socket);
#define SLUICE_PMD_COUNTER(field, proto_field, help) o->set_##proto_field(p.field);
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
      o->set_megaflows(p.megaflows);
    }
    for (const PortStatsView& p : s.ports) {
      v1::PortStats* o = resp->add_ports();
      o->set_port_no(p.port_no);
      o->mutable_attachment()->set_container_id(p.attachment.container_id);
      o->mutable_attachment()->set_ifname(p.attachment.ifname);
      o->set_rx_packets(p.rx_packets);
      o->set_tx_packets(p.tx_packets);
      o->set_tx_dropped(p.tx_dropped);
      o->set_rx_dropped(p.rx_dropped);
      o->set_rx_bytes(p.rx_bytes);
      o->set_tx_bytes(p.tx_bytes);
    }
    for (const RxQueueStatsView& q : s.rx_queues) {
      v1::RxQueueStats* o = resp->add_rx_queues();
      o->set_port_no(q.port_no);
      o->set_queue(q.queue);
      o->set_pmd(q.pmd);
      o->set_packets(q.packets);
    }
    for (size_t r = 0; r < kDropReasonCount; ++r) {
      v1::DropCounter* d = resp->add_drops();
      d->set_reason(std::string(kDropReasonNames[r]));
      d->set_packets(s.drops[r]);
    }
    for (ServiceExtension* e : extensions_) e->fillStats(resp);
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::ClearStats(grpc::ServerContext*, const v1::ClearStatsRequest*,
                                          v1::ClearStatsResponse*) {
  return guarded([&] {
    control_.clearStats();
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::Health(grpc::ServerContext*, const v1::HealthRequest*,
                                      v1::HealthResponse* resp) {
  return guarded([&] {
    HealthView h = control_.health();
    resp->set_ready(h.ready);
    resp->set_version(version_);
    resp->set_uptime_seconds(h.uptime_seconds);
    resp->set_ports(h.ports);
    resp->set_max_ports(h.max_ports);
    resp->set_pmds(h.pmds);
    resp->set_pod_cidr(h.pod_cidr.toString());
    resp->set_gateway(h.gateway.toString());
    resp->set_gateway_mac(h.gateway_mac.toString());
    if (h.v6) {
      resp->set_pod_cidr_v6(h.v6->cidr.toString());
      resp->set_gateway_v6(h.v6->gateway.toString());
    }
    resp->set_restored_ports(h.restored_ports);
    resp->set_garbage_collected_attachments(h.garbage_collected);
    resp->set_ipv4_fragmented(h.ipv4_fragmented);
    resp->set_ipv4_fragments(h.ipv4_fragments);
    for (ServiceExtension* e : extensions_) e->fillHealth(resp);
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::ListVfs(grpc::ServerContext* c, const v1::ListVfsRequest* req,
                                       v1::ListVfsResponse* resp) {
  return forward(forwards_.list_vfs, c, req, resp);
}

grpc::Status DataplaneService::AddNode(grpc::ServerContext* c, const v1::AddNodeRequest* req,
                                       v1::AddNodeResponse* resp) {
  return forward(forwards_.add_node, c, req, resp);
}

grpc::Status DataplaneService::DeleteNode(grpc::ServerContext* c, const v1::DeleteNodeRequest* req,
                                          v1::DeleteNodeResponse* resp) {
  return forward(forwards_.delete_node, c, req, resp);
}

grpc::Status DataplaneService::ListNodes(grpc::ServerContext* c, const v1::ListNodesRequest* req,
                                         v1::ListNodesResponse* resp) {
  return forward(forwards_.list_nodes, c, req, resp);
}

}  // namespace sluice
