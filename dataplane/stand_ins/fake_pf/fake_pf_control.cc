// See fake_pf_control.h.
#include "dataplane/stand_ins/fake_pf/fake_pf_control.h"

#include <absl/strings/str_cat.h>

#include <memory>

#include "dataplane/modules/sriov/pf_control_registry.h"

namespace sluice::sriov {

absl::Status FakePfControl::record(const std::string& kind, const std::string& pf, uint32_t vf,
                                   const std::string& arg) {
  calls_.push_back(absl::StrCat(kind, " ", pf, " ", vf, arg.empty() ? "" : " ", arg));
  if (kind == fail_on_) return absl::InternalError(absl::StrCat("fake PF: ", kind, " on ", pf, " vf ", vf, " fails"));
  return absl::OkStatus();
}

absl::Status FakePfControl::setVfMac(const std::string& pf, uint32_t vf, const MacAddress& mac) {
  std::lock_guard lock(mu_);
  if (absl::Status s = record("mac", pf, vf, mac.toString()); !s.ok()) return s;
  state_[{pf, vf}].mac = mac;
  return absl::OkStatus();
}

absl::Status FakePfControl::setVfVlan(const std::string& pf, uint32_t vf, const VfVlan& vlan) {
  std::lock_guard lock(mu_);
  std::string arg = std::to_string(vlan.id);
  if (vlan.qos != 0 || vlan.proto != VlanProto::k8021Q)
    absl::StrAppend(&arg, " qos ", vlan.qos, " proto ", vlan.proto == VlanProto::k8021Q ? "802.1Q" : "802.1ad");
  if (absl::Status s = record("vlan", pf, vf, arg); !s.ok()) return s;
  state_[{pf, vf}].vlan = vlan;
  return absl::OkStatus();
}

absl::Status FakePfControl::setVfTrust(const std::string& pf, uint32_t vf, bool on) {
  std::lock_guard lock(mu_);
  if (absl::Status s = record("trust", pf, vf, on ? "on" : "off"); !s.ok()) return s;
  state_[{pf, vf}].trust = on;
  return absl::OkStatus();
}

absl::Status FakePfControl::setVfSpoofCheck(const std::string& pf, uint32_t vf, bool on) {
  std::lock_guard lock(mu_);
  if (absl::Status s = record("spoofchk", pf, vf, on ? "on" : "off"); !s.ok()) return s;
  state_[{pf, vf}].spoof_check = on;
  return absl::OkStatus();
}

absl::Status FakePfControl::setVfLinkState(const std::string& pf, uint32_t vf, VfLinkState state) {
  std::lock_guard lock(mu_);
  const char* name = state == VfLinkState::kAuto ? "auto" : state == VfLinkState::kEnable ? "enable" : "disable";
  if (absl::Status s = record("link_state", pf, vf, name); !s.ok()) return s;
  state_[{pf, vf}].link_state = state;
  return absl::OkStatus();
}

absl::Status FakePfControl::setVfRate(const std::string& pf, uint32_t vf, uint32_t min_tx_rate,
                                      uint32_t max_tx_rate) {
  std::lock_guard lock(mu_);
  if (absl::Status s = record("rate", pf, vf, absl::StrCat("min ", min_tx_rate, " max ", max_tx_rate)); !s.ok())
    return s;
  state_[{pf, vf}].min_tx_rate = min_tx_rate;
  state_[{pf, vf}].max_tx_rate = max_tx_rate;
  return absl::OkStatus();
}

absl::Status FakePfControl::resetVf(const std::string& pf, uint32_t vf) {
  std::lock_guard lock(mu_);
  if (absl::Status s = record("reset", pf, vf, ""); !s.ok()) return s;
  state_[{pf, vf}] = VfState{};
  return absl::OkStatus();
}

std::vector<std::string> FakePfControl::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

FakePfControl::VfState FakePfControl::state(const std::string& pf, uint32_t vf) const {
  std::lock_guard lock(mu_);
  auto it = state_.find({pf, vf});
  return it == state_.end() ? VfState{} : it->second;
}

void FakePfControl::failOn(std::string kind) {
  std::lock_guard lock(mu_);
  fail_on_ = std::move(kind);
}

}  // namespace sluice::sriov

namespace {
std::unique_ptr<sluice::sriov::PfControl> makeFakePfControl() { return std::make_unique<sluice::sriov::FakePfControl>(); }
}  // namespace

SLUICE_REGISTER_PF_CONTROL_STAND_IN(fake, makeFakePfControl,
                                    "*** sriov-pf-control is \"fake\": VF MAC, VLAN, trust and spoof-check are NOT "
                                    "programmed on any PF. This is for tests only; never use it on a real node. ***");
