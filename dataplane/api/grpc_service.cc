#include "dataplane/api/grpc_service.h"

#include "dataplane/api/grpc_guard.h"

namespace sluice {
namespace {

void fillPort(const PortView& p, v1::Port* out) {
  out->set_port_no(p.port_no);
  out->mutable_attachment()->set_container_id(p.request.attachment.container_id);
  out->mutable_attachment()->set_ifname(p.request.attachment.ifname);
  out->set_pod_namespace(p.request.pod_namespace);
  out->set_pod_name(p.request.pod_name);
  out->set_ip(p.request.ip.toString());
  out->set_mac(p.request.mac.toString());
  out->set_type(p.request.kind == PortKind::kVhostUser ? v1::PORT_TYPE_VHOST_USER
                : p.request.kind == PortKind::kDpdkVdev ? v1::PORT_TYPE_DPDK_VDEV
                                                        : v1::PORT_TYPE_SRIOV_VF);
  out->set_devargs(p.request.devargs);
  out->set_vhost_mode(p.request.vhost_mode == VhostMode::kClient ? v1::VHOST_MODE_CLIENT : v1::VHOST_MODE_SERVER);
  out->set_socket_path(p.socket_path);
  out->set_pmd(p.pmd);
  out->set_dpdk_name(p.dpdk_name);
  out->set_link_up(p.link_up);
  out->set_netns(p.netns);
}

}  // namespace

grpc::Status toGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

grpc::Status DataplaneService::AddPort(grpc::ServerContext*, const v1::AddPortRequest* req,
                                       v1::AddPortResponse* resp) {
  return guarded([&] {
    if (req->type() == v1::PORT_TYPE_SRIOV_VF) return addVfPort(*req, resp);
    RawPortRequest raw;
    raw.container_id = req->attachment().container_id();
    raw.ifname = req->attachment().ifname();
    raw.pod_namespace = req->pod_namespace();
    raw.pod_name = req->pod_name();
    raw.ip = req->ip();
    raw.mac = req->mac();
    raw.socket_subdir = req->socket_subdir();
    raw.devargs = req->devargs();
    switch (req->type()) {
      case v1::PORT_TYPE_UNSPECIFIED:
      case v1::PORT_TYPE_VHOST_USER: raw.kind = PortKind::kVhostUser; break;
      case v1::PORT_TYPE_SRIOV_VF: raw.kind = PortKind::kSriovVf; break;
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
    fillPort(result->port, resp->mutable_port());
    resp->mutable_port()->set_overlay_mtu(overlayMtu());
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
    const uint32_t overlay_mtu = overlayMtu();
    for (const PortView& p : control_.listPorts()) {
      fillPort(p, resp->add_ports());
      resp->mutable_ports(resp->ports_size() - 1)->set_overlay_mtu(overlay_mtu);
    }
    // SR-IOV VF attachments after the ports (no port number, socket or PMD).
    if (modules_.sriov != nullptr) {
      for (const sriov::VfAttachment& a : modules_.sriov->attachments()) {
        PortView v;
        v.request = a.request;
        v1::Port* out = resp->add_ports();
        fillPort(v, out);
        fillVfFields(a, out);
        out->set_overlay_mtu(overlay_mtu);
      }
    }
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
    }
    if (modules_.overlay != nullptr)
      for (const RemoteNodeView& n : modules_.overlay->listNodes()) fillRemoteNode(n, resp->add_tunnels());
    for (size_t r = 0; r < kDropReasonCount; ++r) {
      v1::DropCounter* d = resp->add_drops();
      d->set_reason(std::string(kDropReasonNames[r]));
      d->set_packets(s.drops[r]);
    }
    if (modules_.offload != nullptr) {
      const offload::OffloadStatsView f = modules_.offload->stats();
      v1::OffloadStats* o = resp->mutable_offload();
      o->set_provider(f.provider);
      o->set_port_attached(f.port_attached);
      o->set_port_no(f.port_no);
      o->set_capable(f.capable);
      o->set_capability_reason(f.capability_reason);
      o->set_max_flows(f.max_flows);
      o->set_offloaded(f.offloaded);
      o->set_installed(f.installed);
      o->set_removed(f.removed);
      o->set_retries(f.retries);
      o->set_cap_retries(f.cap_retries);
      o->set_engine_cycles(f.engine_cycles);
      o->set_engine_packets(f.engine_packets);
      for (const auto& [reason, n] : f.refused) {
        v1::DropCounter* d = o->add_refused();
        d->set_reason(reason);
        d->set_packets(n);
      }
      for (const auto& [reason, n] : f.failures) {
        v1::DropCounter* d = o->add_failures();
        d->set_reason(reason);
        d->set_packets(n);
      }
    }
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
    resp->set_restored_ports(h.restored_ports);
    resp->set_garbage_collected_attachments(h.garbage_collected);
    if (modules_.overlay != nullptr) fillOverlay(modules_.overlay->view(), resp->mutable_overlay());
    return grpc::Status::OK;
  });
}

}  // namespace sluice
