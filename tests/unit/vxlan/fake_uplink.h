// An uplink for OverlayControl tests: records what control sends, hands it
// the frames a test punts, and is always up. MAC 02:00:00:00:77:01, port 7.
#pragma once

#include <absl/status/status.h>

#include <functional>
#include <vector>

#include "dataplane/modules/overlay/uplink_io.h"

namespace sluice::test {

class FakeUplink final : public UplinkIo {
 public:
  MacAddress mac() const override { return *MacAddress::parse("02:00:00:00:77:01"); }
  bool ipChecksumOffload() const override { return false; }
  uint16_t dpdkPort() const override { return 7; }
  rte_spinlock_t* txLock() override { return nullptr; }
  rte_ring* puntRing() override { return nullptr; }
  absl::Status send(const std::vector<uint8_t>& frame) override {
    sent.push_back(frame);
    return absl::OkStatus();
  }
  void drainPunted(const std::function<void(const uint8_t*, size_t)>& f) override {
    for (const auto& p : punted) f(p.data(), p.size());
    punted.clear();
  }
  bool linkUp() override { return true; }
  std::vector<std::vector<uint8_t>> sent, punted;
};

}  // namespace sluice::test
