// The real UplinkIo: the DPDK ethdev named by the uplink's devargs (a vdev
// hot-plugged here, or a PCI device EAL already probed), configured with one
// rx and one tx queue, promiscuous (VXLAN and ARP for our VTEP MAC, which
// may differ from the device's), the IPv4 checksum offload when offered.
// Control thread only (opening, queueing ARP for a PMD to send, draining the
// punt ring).
#pragma once

#include <absl/status/statusor.h>
#include <rte_mempool.h>

#include <memory>
#include <string>

#include "dataplane/config/overlay_config.h"
#include "dataplane/modules/overlay/uplink_io.h"

namespace sluice {

class DpdkUplink final : public UplinkIo {
 public:
  static absl::StatusOr<std::unique_ptr<DpdkUplink>> open(const UplinkConfig& config, rte_mempool* pool);
  ~DpdkUplink() override;

  MacAddress mac() const override { return mac_; }
  bool ipChecksumOffload() const override { return ip_cksum_offload_; }
  uint16_t dpdkPort() const override { return port_; }
  rte_spinlock_t* txLock() override { return &tx_lock_; }
  rte_ring* puntRing() override { return punt_; }
  rte_ring* controlTxRing() override { return control_tx_; }
  absl::Status send(const std::vector<uint8_t>& frame) override;
  void drainPunted(const std::function<void(const uint8_t*, size_t)>& f) override;
  bool linkUp() override;
  const std::string& name() const { return name_; }

 private:
  DpdkUplink() { rte_spinlock_init(&tx_lock_); }
  std::string name_;
  bool hotplugged_ = false;
  uint16_t port_ = 0;
  bool started_ = false;
  MacAddress mac_;
  bool ip_cksum_offload_ = false;
  rte_mempool* pool_ = nullptr;
  rte_ring* punt_ = nullptr;
  rte_ring* control_tx_ = nullptr;
  rte_spinlock_t tx_lock_;
};

}  // namespace sluice
