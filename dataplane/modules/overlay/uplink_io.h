// The uplink device as the overlay's control path uses it: its MAC and
// offloads, the tx lock the PMDs share, the ring the PMD punts ARP replies
// into, and sending a control frame (ARP requests). An interface so
// overlay_control is tested on a fake without EAL; DpdkUplink
// (dpdk_uplink.h) is the real one. Control thread only.
#pragma once

#include <absl/status/status.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "common/net_address.h"

namespace sluice {

class UplinkIo {
 public:
  virtual ~UplinkIo() = default;
  virtual MacAddress mac() const = 0;
  // Whether the device computes outer IPv4 header checksums on transmit.
  virtual bool ipChecksumOffload() const = 0;
  virtual uint16_t dpdkPort() const = 0;
  // Taken by PMDs once per output batch: they share the uplink's single tx
  // queue. Never by control: a control thread descheduled while holding it
  // would stall every PMD sending to the uplink.
  virtual rte_spinlock_t* txLock() = 0;
  // Where the PMD puts ARP replies for our VTEP (rte_mbufs).
  virtual rte_ring* puntRing() = 0;
  // Where send() puts control frames (rte_mbufs) for a PMD to transmit in
  // its uplink batch; null where send() transmits by itself (test stand-ins).
  virtual rte_ring* controlTxRing() { return nullptr; }
  virtual absl::Status send(const std::vector<uint8_t>& frame) = 0;
  // Hands every punted frame's bytes to f, then frees it.
  virtual void drainPunted(const std::function<void(const uint8_t*, size_t)>& f) = 0;
  virtual bool linkUp() = 0;
};

}  // namespace sluice
