#include "dataplane/modules/sriov/api/sriov_service.h"

#include "dataplane/api/grpc_guard.h"
#include "dataplane/api/grpc_service.h"

namespace sluice {

void fillVfFields(const sriov::VfAttachment& vf, v1::Port* out) {
  out->set_type(v1::PORT_TYPE_SRIOV_VF);
  out->set_pci_id(vf.vf.pci_address);
  out->set_pf(vf.vf.pf);
  out->set_vf_index(vf.vf.index);
  out->set_vf_netdev(vf.vf.netdev);
  out->set_vlan(vf.settings.vlan);
  out->set_sriov_mode(vf.settings.mode == sriov::SriovMode::kKernel ? v1::SRIOV_MODE_KERNEL : v1::SRIOV_MODE_DPDK);
  out->set_vf_trust(vf.settings.trust);
  out->set_vf_spoof_check(vf.settings.spoof_check);
  out->set_vlan_qos(vf.settings.vlan_qos);
  out->set_vlan_proto(vf.settings.vlan_proto == sriov::VlanProto::k8021AD ? v1::VLAN_PROTO_8021AD
                                                                          : v1::VLAN_PROTO_8021Q);
  if (vf.settings.link_state) {
    switch (*vf.settings.link_state) {
      case sriov::VfLinkState::kAuto: out->set_vf_link_state(v1::VF_LINK_STATE_AUTO); break;
      case sriov::VfLinkState::kEnable: out->set_vf_link_state(v1::VF_LINK_STATE_ENABLE); break;
      case sriov::VfLinkState::kDisable: out->set_vf_link_state(v1::VF_LINK_STATE_DISABLE); break;
    }
  }
  out->set_min_tx_rate(vf.settings.min_tx_rate);
  out->set_max_tx_rate(vf.settings.max_tx_rate);
}

grpc::Status SriovService::addVfPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp) {
  RawPortRequest raw;
  raw.container_id = req.attachment().container_id();
  raw.ifname = req.attachment().ifname();
  raw.pod_namespace = req.pod_namespace();
  raw.pod_name = req.pod_name();
  raw.ip = req.ip();
  raw.mac = req.mac();
  raw.kind = PortKind::kSriovVf;
  sriov::VfRequest vf;
  vf.device_id = req.device_id();
  vf.vlan = req.vlan();
  switch (req.sriov_mode()) {
    case v1::SRIOV_MODE_UNSPECIFIED:
    case v1::SRIOV_MODE_KERNEL: vf.mode = sriov::SriovMode::kKernel; break;
    case v1::SRIOV_MODE_DPDK: vf.mode = sriov::SriovMode::kDpdk; break;
    default: return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "sriov_mode: unknown mode");
  }
  vf.trust = req.vf_trust();
  vf.spoof_check = req.has_vf_spoof_check() ? req.vf_spoof_check() : true;  // unset: on
  vf.vlan_qos = req.vlan_qos();
  switch (req.vlan_proto()) {
    case v1::VLAN_PROTO_UNSPECIFIED:
    case v1::VLAN_PROTO_8021Q: vf.vlan_proto = sriov::VlanProto::k8021Q; break;
    case v1::VLAN_PROTO_8021AD: vf.vlan_proto = sriov::VlanProto::k8021AD; break;
    default: return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "vlan_proto: unknown protocol");
  }
  switch (req.vf_link_state()) {
    case v1::VF_LINK_STATE_UNSPECIFIED: break;
    case v1::VF_LINK_STATE_AUTO: vf.link_state = sriov::VfLinkState::kAuto; break;
    case v1::VF_LINK_STATE_ENABLE: vf.link_state = sriov::VfLinkState::kEnable; break;
    case v1::VF_LINK_STATE_DISABLE: vf.link_state = sriov::VfLinkState::kDisable; break;
    default: return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "vf_link_state: unknown state");
  }
  vf.min_tx_rate = req.min_tx_rate();
  vf.max_tx_rate = req.max_tx_rate();
  auto result = sriov_.addVf(raw, vf, req.netns());
  if (!result.ok()) return toGrpcStatus(result.status());
  const PortRequest& r = result->attachment.request;
  v1::Port* out = resp->mutable_port();
  out->mutable_attachment()->set_container_id(r.attachment.container_id);
  out->mutable_attachment()->set_ifname(r.attachment.ifname);
  out->set_pod_namespace(r.pod_namespace);
  out->set_pod_name(r.pod_name);
  out->set_ip(r.ip.toString());
  out->set_mac(r.mac.toString());
  fillVfFields(result->attachment, out);
  resp->set_created(result->created);
  return grpc::Status::OK;
}

grpc::Status SriovService::ListVfs(grpc::ServerContext*, const v1::ListVfsRequest*, v1::ListVfsResponse* resp) {
  return guarded([&] {
    for (const sriov::VfPool::Slot& s : sriov_.listVfs()) {
      v1::Vf* o = resp->add_vfs();
      o->set_pf(s.vf.pf);
      o->set_vf_index(s.vf.index);
      o->set_pci_address(s.vf.pci_address);
      o->set_netdev(s.vf.netdev);
      o->set_in_use(s.holder.has_value());
      if (s.holder) {
        o->mutable_attachment()->set_container_id(s.holder->container_id);
        o->mutable_attachment()->set_ifname(s.holder->ifname);
      }
    }
    return grpc::Status::OK;
  });
}

void SriovService::listAttachments(v1::ListPortsResponse* resp) {
  // No port number, socket or PMD: a VF is not a port of the PMDs.
  for (const sriov::VfAttachment& a : sriov_.attachments()) {
    PortView v;
    v.request = a.request;
    v1::Port* out = resp->add_ports();
    fillPortMessage(v, out);
    fillVfFields(a, out);
  }
}

}  // namespace sluice
