// See sriov_control.h.
#include "dataplane/modules/sriov/sriov_control.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <set>

#include "common/log.h"

namespace sluice::sriov {
namespace {

constexpr uint32_t kMaxVlan = 4094;  // 802.1Q: 4095 is reserved

// Every IPv4 address but 0.0.0.0 and 255.255.255.255 is a possible VF
// address: parsePortRequest's pod-CIDR rules are for sluiced-routed ports.
const Ipv4Cidr kAnyNetwork{Ipv4Address{0}, 0};

constexpr uint32_t kMaxQos = 7;  // 802.1p priorities are 3 bits

bool sameSettings(const VfRequest& a, VfRequest b, const VfInfo& held) {
  if (!b.device_id.empty() && b.device_id != held.pci_address) return false;
  b.device_id = a.device_id;
  return a == b;
}

bool hasRate(const VfRequest& vf) { return vf.min_tx_rate != 0 || vf.max_tx_rate != 0; }

absl::Status validateSettings(const VfRequest& vf) {
  if (vf.vlan > kMaxVlan)
    return absl::InvalidArgumentError(absl::StrCat("vlan: ", vf.vlan, " is not a VLAN id 0..", kMaxVlan));
  if (vf.vlan_qos > kMaxQos)
    return absl::InvalidArgumentError(absl::StrCat("vlanQoS: ", vf.vlan_qos, " is not a priority 0..", kMaxQos));
  if (vf.vlan == 0 && (vf.vlan_qos != 0 || vf.vlan_proto != VlanProto::k8021Q))
    return absl::InvalidArgumentError("vlanQoS, vlanProto: need a vlan");
  if (vf.max_tx_rate != 0 && vf.min_tx_rate > vf.max_tx_rate)
    return absl::InvalidArgumentError(
        absl::StrCat("min_tx_rate: ", vf.min_tx_rate, " is above max_tx_rate ", vf.max_tx_rate));
  return absl::OkStatus();
}

// What attach() set beyond resetVf()'s reach, put back as every free VF has it.
absl::Status undoExtras(PfControl& pf, const VfInfo& held, const VfRequest& vf) {
  absl::Status first;
  if (vf.link_state) first = pf.setVfLinkState(held.pf, held.index, VfLinkState::kAuto);
  if (hasRate(vf))
    if (absl::Status s = pf.setVfRate(held.pf, held.index, 0, 0); first.ok()) first = s;
  return first;
}

}  // namespace

absl::string_view sriovModeName(SriovMode mode) { return mode == SriovMode::kKernel ? "kernel" : "dpdk"; }

absl::StatusOr<std::unique_ptr<SriovControl>> SriovControl::create(const std::vector<PoolConfig>& pools,
                                                                   const std::string& sysfs_root, PfControl& pf) {
  std::vector<VfInfo> all;
  std::set<std::string> seen;
  for (const PoolConfig& pool : pools) {
    if (!seen.insert(pool.pf).second)
      return absl::InvalidArgumentError(absl::StrCat("sriov-pools: pf ", pool.pf, " is configured twice"));
    auto vfs = discoverVfs(pool.sysfs_root.empty() ? sysfs_root : pool.sysfs_root, pool.pf);
    if (!vfs.ok()) return absl::Status(vfs.status().code(), absl::StrCat("sriov-pools: ", vfs.status().message()));
    all.insert(all.end(), vfs->begin(), vfs->end());
  }
  return std::make_unique<SriovControl>(std::move(all), pf);
}

SriovControl::SriovControl(std::vector<VfInfo> vfs, PfControl& pf) : pf_(pf), pool_(std::move(vfs)) {}

absl::StatusOr<VfAttachResult> SriovControl::attach(const RawPortRequest& raw, const VfRequest& vf,
                                                    const std::string& netns) {
  RawPortRequest r = raw;
  r.kind = PortKind::kSriovVf;
  r.socket_subdir.clear();  // a VF has no socket
  auto parsed = parsePortRequest(r, kAnyNetwork, Ipv4Address{0});
  if (!parsed.ok()) return parsed.status();
  PortRequest& req = *parsed;
  if (absl::Status s = validateSettings(vf); !s.ok()) return s;

  for (const VfAttachment& a : attachments_) {
    if (a.request.attachment == req.attachment) {
      if (a.request.sameParameters(req) && sameSettings(a.settings, vf, a.vf)) return VfAttachResult{a, false};
      return absl::AlreadyExistsError(absl::StrCat("attachment ", req.attachment.container_id, "/",
                                                   req.attachment.ifname,
                                                   " already holds VF ", a.vf.pci_address,
                                                   " with different parameters"));
    }
    if (a.request.mac == req.mac)
      return absl::AlreadyExistsError(absl::StrCat("mac: ", req.mac.toString(), " belongs to VF ",
                                                   a.vf.pci_address, " of ", a.request.attachment.container_id,
                                                   "/", a.request.attachment.ifname));
  }

  auto allocated = pool_.allocate(req.attachment, vf.device_id);
  if (!allocated.ok()) return allocated.status();
  VfInfo held = *allocated;
  held.netdev = currentNetdev(held);
  if (vf.mode == SriovMode::kKernel && held.netdev.empty()) {
    pool_.release(req.attachment);
    return absl::FailedPreconditionError(
        absl::StrCat("VF ", held.pci_address, " (", held.pf, " vf ", held.index,
                     ") has no kernel netdev in the host namespace (bound to a userspace driver?); "
                     "kernel mode needs one, dpdk mode does not"));
  }

  absl::Status s = pf_.setVfMac(held.pf, held.index, req.mac);
  if (s.ok())
    s = pf_.setVfVlan(held.pf, held.index,
                      VfVlan{static_cast<uint16_t>(vf.vlan), static_cast<uint8_t>(vf.vlan_qos), vf.vlan_proto});
  if (s.ok()) s = pf_.setVfSpoofCheck(held.pf, held.index, vf.spoof_check);
  if (s.ok()) s = pf_.setVfTrust(held.pf, held.index, vf.trust);
  if (s.ok() && vf.link_state) s = pf_.setVfLinkState(held.pf, held.index, *vf.link_state);
  if (s.ok() && hasRate(vf)) s = pf_.setVfRate(held.pf, held.index, vf.min_tx_rate, vf.max_tx_rate);
  if (!s.ok()) {
    if (absl::Status extras = undoExtras(pf_, held, vf); !extras.ok())
      logError("SR-IOV: restoring ", held.pf, " vf ", held.index, " after a failed set-up: ", extras.message());
    if (absl::Status reset = pf_.resetVf(held.pf, held.index); !reset.ok())
      logError("SR-IOV: resetting ", held.pf, " vf ", held.index, " after a failed set-up: ", reset.message());
    pool_.release(req.attachment);
    return s;
  }
  VfAttachment a{req, held, vf, netns};
  attachments_.push_back(a);
  logInfo("SR-IOV: VF ", held.pci_address, " (", held.pf, " vf ", held.index, ", netdev ",
          held.netdev.empty() ? "-" : held.netdev, ") handed to ", req.attachment.container_id, "/",
          req.attachment.ifname, " ", sriovModeName(vf.mode), " mac ", req.mac.toString(), " vlan ", vf.vlan,
          " trust ", vf.trust ? "on" : "off", " spoofchk ", vf.spoof_check ? "on" : "off");
  return VfAttachResult{a, true};
}

bool SriovControl::detach(const AttachmentId& id) {
  auto it = std::find_if(attachments_.begin(), attachments_.end(),
                         [&](const VfAttachment& a) { return a.request.attachment == id; });
  if (it == attachments_.end()) return false;
  if (absl::Status s = undoExtras(pf_, it->vf, it->settings); !s.ok())
    logError("SR-IOV: restoring ", it->vf.pf, " vf ", it->vf.index, "'s link state and rates: ", s.message());
  if (absl::Status s = pf_.resetVf(it->vf.pf, it->vf.index); !s.ok())
    logError("SR-IOV: resetting ", it->vf.pf, " vf ", it->vf.index, ": ", s.message(),
             "; returned to the pool anyway (the next attachment programs it afresh)");
  pool_.release(id);
  logInfo("SR-IOV: VF ", it->vf.pci_address, " returned by ", id.container_id, "/", id.ifname);
  attachments_.erase(it);
  return true;
}

nlohmann::json SriovControl::checkpointRecords() const {
  nlohmann::json out = nlohmann::json::array();
  for (const VfAttachment& a : attachments_) {
    out.push_back({{"container_id", a.request.attachment.container_id},
                   {"ifname", a.request.attachment.ifname},
                   {"pod_namespace", a.request.pod_namespace},
                   {"pod_name", a.request.pod_name},
                   {"ip", a.request.ip.toString()},
                   {"mac", a.request.mac.toString()},
                   {"pf", a.vf.pf},
                   {"vf_index", a.vf.index},
                   {"pci_address", a.vf.pci_address},
                   {"netdev", a.vf.netdev},
                   {"device_id", a.settings.device_id},
                   {"vlan", a.settings.vlan},
                   {"mode", std::string(sriovModeName(a.settings.mode))},
                   {"trust", a.settings.trust},
                   {"spoof_check", a.settings.spoof_check},
                   {"netns", a.netns}});
    // The settings a pod may leave unset are written only when set: a VF
    // without them keeps the record older sluiceds wrote (and read).
    nlohmann::json& rec = out.back();
    if (a.settings.vlan_qos != 0) rec["vlan_qos"] = a.settings.vlan_qos;
    if (a.settings.vlan_proto != VlanProto::k8021Q) rec["vlan_proto"] = "802.1ad";
    if (a.settings.link_state) rec["link_state"] = static_cast<int>(*a.settings.link_state);
    if (a.settings.min_tx_rate != 0) rec["min_tx_rate"] = a.settings.min_tx_rate;
    if (a.settings.max_tx_rate != 0) rec["max_tx_rate"] = a.settings.max_tx_rate;
  }
  return out;
}

void SriovControl::restore(const nlohmann::json& records) {
  if (!records.is_array()) return;
  for (const nlohmann::json& rec : records) {
    auto str = [&rec](const char* key) {
      auto it = rec.find(key);
      return it != rec.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    auto num = [&rec](const char* key) {
      auto it = rec.find(key);
      return it != rec.end() && it->is_number_unsigned() ? it->get<uint32_t>() : 0u;
    };
    auto flag = [&rec](const char* key, bool fallback) {
      auto it = rec.find(key);
      return it != rec.end() && it->is_boolean() ? it->get<bool>() : fallback;
    };
    RawPortRequest raw;
    raw.container_id = str("container_id");
    raw.ifname = str("ifname");
    raw.pod_namespace = str("pod_namespace");
    raw.pod_name = str("pod_name");
    raw.ip = str("ip");
    raw.mac = str("mac");
    raw.kind = PortKind::kSriovVf;
    auto req = parsePortRequest(raw, kAnyNetwork, Ipv4Address{0});
    const std::string pci = str("pci_address");
    if (!req.ok() || (str("mode") != "kernel" && str("mode") != "dpdk")) {
      logWarning("SR-IOV: skipping a malformed checkpoint record for VF ", pci);
      continue;
    }
    const VfPool::Slot* slot = nullptr;
    for (const VfPool::Slot& s : pool_.slots())
      if (s.vf.pci_address == pci) slot = &s;
    if (slot == nullptr || !pool_.claim(pci, req->attachment)) {
      logWarning("SR-IOV: checkpointed VF ", pci, " of ", raw.container_id, "/", raw.ifname,
                 " is not free in the configured pools; not restored");
      continue;
    }
    VfInfo vf = slot->vf;
    vf.netdev = str("netdev");
    VfRequest settings{str("device_id"), num("vlan"), str("mode") == "kernel" ? SriovMode::kKernel : SriovMode::kDpdk,
                       flag("trust", false), flag("spoof_check", true)};
    settings.vlan_qos = num("vlan_qos");
    settings.vlan_proto = str("vlan_proto") == "802.1ad" ? VlanProto::k8021AD : VlanProto::k8021Q;
    if (uint32_t ls = num("link_state"); rec.contains("link_state") && rec["link_state"].is_number_unsigned() && ls <= 2)
      settings.link_state = static_cast<VfLinkState>(ls);
    settings.min_tx_rate = num("min_tx_rate");
    settings.max_tx_rate = num("max_tx_rate");
    attachments_.push_back({*req, vf, settings, str("netns")});
    logInfo("SR-IOV: restored VF ", pci, " of ", raw.container_id, "/", raw.ifname);
  }
}

}  // namespace sluice::sriov
