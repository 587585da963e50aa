// PfControl over rtnetlink, the way `ip link set <pf> vf N ...` does it: one
// RTM_SETLINK request on the PF's ifindex carrying IFLA_VFINFO_LIST →
// IFLA_VF_INFO → one of IFLA_VF_MAC / IFLA_VF_VLAN (802.1Q) or
// IFLA_VF_VLAN_LIST → IFLA_VF_VLAN_INFO (802.1ad) / IFLA_VF_TRUST /
// IFLA_VF_SPOOFCHK / IFLA_VF_LINK_STATE / IFLA_VF_RATE, then the kernel's NLMSG_ERROR acknowledgement. Raw
// NETLINK_ROUTE sockets, no libnl. Message building and ack parsing are pure
// functions, unit-tested to the byte; the socket part needs a PF driver that
// implements ndo_set_vf_* (none on machines without SR-IOV NICs, where the
// kernel answers EOPNOTSUPP). Control path only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dataplane/modules/sriov/pf_control.h"

namespace sluice::sriov {

enum class VfSetting { kMac, kVlan, kTrust, kSpoofCheck, kLinkState, kRate };

struct VfSettingValue {
  VfSetting setting = VfSetting::kMac;
  uint32_t vf = 0;
  MacAddress mac;                              // kMac
  VfVlan vlan;                                 // kVlan
  bool on = false;                             // kTrust, kSpoofCheck
  VfLinkState link_state = VfLinkState::kAuto;  // kLinkState
  uint32_t min_tx_rate = 0;                    // kRate, Mbit/s
  uint32_t max_tx_rate = 0;                    // kRate, Mbit/s
};

// The complete RTM_SETLINK request (NLM_F_REQUEST | NLM_F_ACK, port id 0 =
// the kernel) for one VF setting on the PF with ifindex `pf_ifindex`.
std::vector<uint8_t> buildVfSetLinkRequest(uint32_t seq, int pf_ifindex, const VfSettingValue& value);

// Reads the kernel's answer to request `seq`: OK for an NLMSG_ERROR with
// error 0; the errno as a status otherwise (EOPNOTSUPP → Unimplemented,
// EPERM → PermissionDenied, ENODEV → NotFound, EINVAL/ERANGE →
// InvalidArgument, anything else Internal). A truncated or foreign message
// (wrong seq, wrong type) is Internal. Defensive: the bytes are read
// bounds-checked although they come from the kernel.
absl::Status parseNetlinkAck(std::span<const uint8_t> reply, uint32_t seq);

class NetlinkPfControl : public PfControl {
 public:
  absl::Status setVfMac(const std::string& pf, uint32_t vf, const MacAddress& mac) override;
  absl::Status setVfVlan(const std::string& pf, uint32_t vf, const VfVlan& vlan) override;
  absl::Status setVfTrust(const std::string& pf, uint32_t vf, bool on) override;
  absl::Status setVfSpoofCheck(const std::string& pf, uint32_t vf, bool on) override;
  absl::Status setVfLinkState(const std::string& pf, uint32_t vf, VfLinkState state) override;
  absl::Status setVfRate(const std::string& pf, uint32_t vf, uint32_t min_tx_rate, uint32_t max_tx_rate) override;
  absl::Status resetVf(const std::string& pf, uint32_t vf) override;

 private:
  // Resolves the PF, sends one request on a fresh socket, waits for its ack.
  absl::Status apply(const std::string& pf, const VfSettingValue& value);
  uint32_t seq_ = 1;
};

}  // namespace sluice::sriov
