// What sluiced asks of an SR-IOV physical function for one of its VFs: the
// VF's MAC, VLAN (id, QoS priority, protocol), trust, spoof checking, link
// state and tx rate limits, and a reset to what a free VF has. An interface so everything above it runs without SR-IOV
// hardware: NetlinkPfControl is the real one (rtnetlink RTM_SETLINK on the
// PF), FakePfControl records calls for tests. Control path only; callers
// serialise (the control core's writer lock).
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <string>

#include "common/net_address.h"

namespace sluice::sriov {

// The tag protocol the PF pushes on the VF's traffic.
enum class VlanProto { k8021Q, k8021AD };
// IFLA_VF_LINK_STATE's values: follow the PF's link, force up, force down.
enum class VfLinkState : uint32_t { kAuto = 0, kEnable = 1, kDisable = 2 };

struct VfVlan {
  uint16_t id = 0;   // 0 removes the tag (VID 1..4094 otherwise)
  uint8_t qos = 0;   // 802.1p priority 0..7
  VlanProto proto = VlanProto::k8021Q;
  bool operator==(const VfVlan&) const = default;
};

class PfControl {
 public:
  virtual ~PfControl() = default;
  virtual absl::Status setVfMac(const std::string& pf, uint32_t vf, const MacAddress& mac) = 0;
  virtual absl::Status setVfVlan(const std::string& pf, uint32_t vf, const VfVlan& vlan) = 0;
  virtual absl::Status setVfTrust(const std::string& pf, uint32_t vf, bool on) = 0;
  virtual absl::Status setVfSpoofCheck(const std::string& pf, uint32_t vf, bool on) = 0;
  virtual absl::Status setVfLinkState(const std::string& pf, uint32_t vf, VfLinkState state) = 0;
  // Mbit/s; 0 = no limit.
  virtual absl::Status setVfRate(const std::string& pf, uint32_t vf, uint32_t min_tx_rate, uint32_t max_tx_rate) = 0;
  // Back to a free VF's settings: zero MAC, no VLAN, trust off, spoof
  // checking on (link state and rates are put back by whoever set them). Tries every setting; returns the first error.
  virtual absl::Status resetVf(const std::string& pf, uint32_t vf) = 0;
};

}  // namespace sluice::sriov
