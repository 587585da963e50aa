// What sluiced asks of an SR-IOV physical function for one of its VFs: the
// VF's MAC, VLAN, trust and spoof checking, and a reset to what a free VF
// has. An interface so everything above it runs without SR-IOV
// hardware: NetlinkPfControl is the real one (rtnetlink RTM_SETLINK on the
// PF), FakePfControl records calls for tests. Control path only; callers
// serialise (the control core's writer lock).
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <string>

#include "common/net_address.h"

namespace sluice::sriov {

class PfControl {
 public:
  virtual ~PfControl() = default;
  virtual absl::Status setVfMac(const std::string& pf, uint32_t vf, const MacAddress& mac) = 0;
  // 0 removes the VLAN tag (802.1Q VID 1..4094 otherwise).
  virtual absl::Status setVfVlan(const std::string& pf, uint32_t vf, uint16_t vlan) = 0;
  virtual absl::Status setVfTrust(const std::string& pf, uint32_t vf, bool on) = 0;
  virtual absl::Status setVfSpoofCheck(const std::string& pf, uint32_t vf, bool on) = 0;
  // Back to a free VF's settings: zero MAC, no VLAN, trust off, spoof
  // checking on. Tries every setting; returns the first error.
  virtual absl::Status resetVf(const std::string& pf, uint32_t vf) = 0;
};

}  // namespace sluice::sriov
