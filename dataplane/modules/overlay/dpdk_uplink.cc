#include "dataplane/modules/overlay/dpdk_uplink.h"

#include <absl/strings/str_cat.h>
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstring>

#include "common/log.h"
#include "dataplane/core/ethdev_open.h"
#include "dataplane/core/rx_marks.h"
#include "dataplane/datapath/tsan_dpdk.h"

namespace sluice {
namespace {

// ARP replies waiting for the control thread (drained every millisecond):
// far more than a handful of next hops ever answer at once.
constexpr unsigned kPuntRingSize = 256;
// Control frames waiting for a PMD: ARP requests and neighbor solicitations
// come a few per second per next hop.
constexpr unsigned kControlTxRingSize = 64;

absl::Status dpdkError(const std::string& what, int rc) {
  return absl::InternalError(absl::StrCat("uplink: ", what, ": ", rte_strerror(rc < 0 ? -rc : rc)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DpdkUplink>> DpdkUplink::open(const UplinkConfig& config, rte_mempool* pool) {
  std::unique_ptr<DpdkUplink> u(new DpdkUplink());
  u->pool_ = pool;
  const std::string& devargs = config.devargs;
  const size_t comma = devargs.find(',');
  u->name_ = devargs.substr(0, comma);
  const std::string args = comma == std::string::npos ? "" : devargs.substr(comma + 1);
  if (rte_eth_dev_get_port_by_name(u->name_.c_str(), &u->port_) != 0) {
    // Not probed at EAL start: a vdev to hot-plug (PCI devices come from EAL's
    // allow-list, which the chart sets).
    if (u->name_.rfind("net_", 0) != 0)
      return absl::InvalidArgumentError(absl::StrCat("uplink: no DPDK port ", u->name_,
                                                     " (a PCI uplink must be probed by EAL: allow it with -a)"));
    if (int rc = rte_eal_hotplug_add("vdev", u->name_.c_str(), args.c_str()); rc != 0)
      return dpdkError(absl::StrCat("creating ", devargs), rc);
    u->hotplugged_ = true;
    if (int rc = rte_eth_dev_get_port_by_name(u->name_.c_str(), &u->port_); rc != 0)
      return dpdkError("finding the new port", rc);
  }
  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(u->port_, &info); rc != 0) return dpdkError("reading device info", rc);
  rte_eth_conf conf{};
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
    u->ip_cksum_offload_ = true;
  }
  // Rx metadata (NIC flow marks, for partial offload) can only be asked for
  // before configure; the offload probe reads the answer recorded here. A port
  // that cannot deliver marks still works: offload then says why it is off.
  (void)offload::negotiateUserMarksBeforeConfigure(u->port_);
  // Between queue setup and start: the MAC is settled before the port
  // receives. Its error is prefixed below, as openEthdev's are.
  auto set_mac = [&]() -> absl::Status {
    if (config.mac) {
      rte_ether_addr a;
      std::memcpy(a.addr_bytes, config.mac->bytes.data(), 6);
      if (int rc = rte_eth_dev_default_mac_addr_set(u->port_, &a); rc != 0)
        logWarning("uplink: keeping the device MAC (setting ", config.mac->toString(), ": ", rte_strerror(-rc),
                   "); answering ARP with the configured one");
      u->mac_ = *config.mac;
    } else {
      rte_ether_addr a;
      if (int rc = rte_eth_macaddr_get(u->port_, &a); rc != 0)
        return absl::InternalError(absl::StrCat("reading the MAC: ", rte_strerror(-rc)));
      std::memcpy(u->mac_.bytes.data(), a.addr_bytes, 6);
    }
    return absl::OkStatus();
  };
  if (absl::Status s = openEthdev(u->port_, conf, pool, kEthdevDescriptors, set_mac); !s.ok())
    return absl::Status(s.code(), absl::StrCat("uplink: ", s.message()));
  u->started_ = true;
  const int socket = rte_eth_dev_socket_id(u->port_);
  // VXLAN for our VTEP may be addressed to a configured MAC the device
  // does not filter for.
  if (int rc = rte_eth_promiscuous_enable(u->port_); rc != 0)
    logWarning("uplink: promiscuous mode: ", rte_strerror(-rc));
  u->punt_ = rte_ring_create(absl::StrCat("sluice_arp_punt_", u->port_).c_str(), kPuntRingSize, socket,
                             RING_F_SC_DEQ);
  if (u->punt_ == nullptr) return dpdkError("punt ring", rte_errno);
  u->control_tx_ = rte_ring_create(absl::StrCat("sluice_ctl_tx_", u->port_).c_str(), kControlTxRingSize, socket,
                                   RING_F_SP_ENQ);
  if (u->control_tx_ == nullptr) return dpdkError("control tx ring", rte_errno);
  logInfo("uplink ", devargs, ": port ", u->port_, ", MAC ", u->mac_.toString(), ", IPv4 checksum ",
          u->ip_cksum_offload_ ? "offloaded" : "in software");
  return u;
}

DpdkUplink::~DpdkUplink() {
  if (punt_ != nullptr) {
    drainPunted([](const uint8_t*, size_t) {});
    rte_ring_free(punt_);
  }
  if (control_tx_ != nullptr) {  // the PMDs have stopped: what is left was never sent
    void* m;
    while (rte_ring_dequeue(control_tx_, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
    rte_ring_free(control_tx_);
  }
  if (started_) rte_eth_dev_stop(port_);
  if (hotplugged_) {
    rte_eth_dev_close(port_);
    rte_eal_hotplug_remove("vdev", name_.c_str());
  }
}

absl::Status DpdkUplink::send(const std::vector<uint8_t>& frame) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (m == nullptr) return absl::ResourceExhaustedError("uplink: no mbuf for a control frame");
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size()));
  if (p == nullptr) {
    rte_pktmbuf_free(m);
    return absl::InvalidArgumentError("uplink: control frame too long");
  }
  std::memcpy(p, frame.data(), frame.size());
  // A PMD sends it with its own uplink batch, under the lock only PMDs take.
  handOver(m);
  if (rte_ring_enqueue(control_tx_, m) != 0) {
    rte_pktmbuf_free(m);
    return absl::UnavailableError("uplink: control frame queue full");
  }
  return absl::OkStatus();
}

void DpdkUplink::drainPunted(const std::function<void(const uint8_t*, size_t)>& f) {
  void* objs[32];
  unsigned n;
  while ((n = rte_ring_dequeue_burst(punt_, objs, 32, nullptr)) != 0) {
    for (unsigned i = 0; i < n; ++i) {
      auto* m = static_cast<rte_mbuf*>(objs[i]);
      takeOver(m);  // punted by a PMD
      f(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
    }
  }
}

bool DpdkUplink::linkUp() {
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_, &link) != 0) return false;
  return link.link_status == RTE_ETH_LINK_UP;
}

}  // namespace sluice
