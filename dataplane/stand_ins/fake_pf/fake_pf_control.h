// A PfControl that changes nothing and remembers what it was asked, for unit
// tests and for sluiced's end-to-end tests on machines without SR-IOV
// hardware (config `sriov-pf-control: "fake"`, test-only; sluiced warns
// loudly at start). It also keeps each VF's resulting settings, and can be
// told to fail a kind of call. Thread-safe (tests read it while sluiced's API
// threads call it).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/modules/sriov/pf_control.h"

namespace sluice::sriov {

class FakePfControl : public PfControl {
 public:
  struct VfState {
    MacAddress mac;
    VfVlan vlan;
    bool trust = false;
    bool spoof_check = true;
    VfLinkState link_state = VfLinkState::kAuto;
    uint32_t min_tx_rate = 0;
    uint32_t max_tx_rate = 0;
  };

  absl::Status setVfMac(const std::string& pf, uint32_t vf, const MacAddress& mac) override;
  absl::Status setVfVlan(const std::string& pf, uint32_t vf, const VfVlan& vlan) override;
  absl::Status setVfTrust(const std::string& pf, uint32_t vf, bool on) override;
  absl::Status setVfSpoofCheck(const std::string& pf, uint32_t vf, bool on) override;
  absl::Status setVfLinkState(const std::string& pf, uint32_t vf, VfLinkState state) override;
  absl::Status setVfRate(const std::string& pf, uint32_t vf, uint32_t min_tx_rate, uint32_t max_tx_rate) override;
  absl::Status resetVf(const std::string& pf, uint32_t vf) override;

  // Every call so far, e.g. "mac pf0 1 02:00:00:00:00:01", "vlan pf0 1 100"
  // (with " qos 3 proto 802.1ad" when either is not the default),
  // "trust pf0 1 on", "spoofchk pf0 1 off", "link_state pf0 1 disable",
  // "rate pf0 1 min 10 max 100", "reset pf0 1".
  std::vector<std::string> calls() const;
  // The settings a VF has after the calls (defaults when never touched).
  VfState state(const std::string& pf, uint32_t vf) const;
  // Calls whose kind ("mac", "vlan", "trust", "spoofchk", "link_state",
  // "rate", "reset") equals
  // `kind` fail with Internal from now on (empty: none fail).
  void failOn(std::string kind);

 private:
  absl::Status record(const std::string& kind, const std::string& pf, uint32_t vf, const std::string& arg);

  mutable std::mutex mu_;
  std::vector<std::string> calls_;
  std::map<std::pair<std::string, uint32_t>, VfState> state_;
  std::string fail_on_;
};

}  // namespace sluice::sriov
