#include "dataplane/core/dpdk_port_backend.h"

#include <absl/strings/str_cat.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_eth_vhost.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <memory>

#include "common/log.h"
#include "dataplane/core/ethdev_open.h"
#include "dataplane/core/vdev_devargs.h"

namespace sluice {
namespace {

static_assert(kMbufDataRoom == RTE_MBUF_DEFAULT_DATAROOM, "vdev_devargs.h's mbuf data room is DPDK's default");

absl::Status dpdkError(const std::string& what, int rc) {
  return absl::InternalError(absl::StrCat(what, ": ", rte_strerror(rc < 0 ? -rc : rc)));
}

}  // namespace

absl::Status checkDpdkReadsVdevArgs(const std::string& devargs) {
  auto split = splitVdevDevargs(devargs);
  if (!split.ok()) return split.status();
  const size_t comma = devargs.find(',');
  if (comma == std::string::npos) return absl::OkStatus();  // a driver alone: no arguments to read
  std::unique_ptr<rte_kvargs, void (*)(rte_kvargs*)> parsed(rte_kvargs_parse(devargs.c_str() + comma + 1, nullptr),
                                                             rte_kvargs_free);
  bool same = parsed != nullptr && parsed->count == split->args.size();
  for (unsigned i = 0; same && i < parsed->count; ++i) {
    const rte_kvargs_pair& p = parsed->pairs[i];
    same = p.key != nullptr && p.value != nullptr && split->args[i].first == p.key && split->args[i].second == p.value;
  }
  if (!same) return absl::InvalidArgumentError(absl::StrCat("devargs: DPDK would not read '", devargs, "' as validated"));
  return absl::OkStatus();
}

absl::StatusOr<CreatedPort> DpdkPortBackend::createVhostUser(uint16_t port_no, const std::string& socket_path,
                                                             bool client_mode, uint16_t queues) {
  std::string name = absl::StrCat("net_vhost_sl", port_no, "_", generation_++);
  // net_vhost offers the pod `queues` pairs and uses a vring only once the
  // pod enabled it: until then its rx returns nothing and its tx takes
  // nothing. Control sends only on the queues the pod enabled
  // (enabledTxQueues, from the driver's queue-state events).
  std::string args = absl::StrCat("iface=", socket_path, ",queues=", queues, ",client=", client_mode ? 1 : 0);
  return createAndStart(name, args, absl::StrCat("creating vhost-user port on ", socket_path), queues, true);
}

absl::StatusOr<CreatedPort> DpdkPortBackend::createVdev(uint16_t port_no, const std::string& devargs) {
  if (absl::Status s = checkDpdkReadsVdevArgs(devargs); !s.ok()) return s;
  // Validation let net_null's `size` go up to kMbufDataRoom: the pool must hold that.
  // Every socket's pool holds buffers of one size: the home pool's says.
  if (rte_pktmbuf_data_room_size(pools_.home()) < RTE_PKTMBUF_HEADROOM + kMbufDataRoom)
    return absl::FailedPreconditionError(absl::StrCat("type: DPDK vdev ports need mbufs of ", kMbufDataRoom,
                                                      " data bytes; sluiced's hold ",
                                                      rte_pktmbuf_data_room_size(pools_.home()) - RTE_PKTMBUF_HEADROOM));
  const size_t comma = devargs.find(',');
  // The vdev bus finds the driver by the name's prefix; the suffix makes
  // the name unique as for vhost-user ports.
  std::string name = absl::StrCat(devargs.substr(0, comma), "_sl", port_no, "_", generation_++);
  std::string args = comma == std::string::npos ? "" : devargs.substr(comma + 1);
  return createAndStart(name, args, absl::StrCat("creating vdev ", devargs));
}

absl::StatusOr<CreatedPort> DpdkPortBackend::createAndStart(const std::string& name, const std::string& args,
                                                            const std::string& what, uint16_t queues,
                                                            bool vhost) {
  CreatedPort port;
  port.dpdk_name = name;
  // EAL's generic hot-plug (the vdev bus recognises the driver prefix).
  int rc = rte_eal_hotplug_add("vdev", port.dpdk_name.c_str(), args.c_str());
  if (rc != 0) return dpdkError(what, rc);

  bool events_registered = false;
  auto cleanup_on_error = [&](absl::Status s) {
    if (events_registered) forgetQueueEvents(port.dpdk_port);
    rte_eal_hotplug_remove("vdev", port.dpdk_name.c_str());
    return s;
  };
  if (int r = rte_eth_dev_get_port_by_name(port.dpdk_name.c_str(), &port.dpdk_port); r != 0)
    return cleanup_on_error(dpdkError("finding the new port", r));
  if (vhost) {
    // Before the port is configured (which opens its socket): no queue
    // event of this pod can come before the callbacks are there.
    {
      std::lock_guard lock(queue_mu_);
      enabled_tx_[port.dpdk_port] = 0;
    }
    rte_eth_dev_callback_register(port.dpdk_port, RTE_ETH_EVENT_QUEUE_STATE, onVhostEvent, this);
    rte_eth_dev_callback_register(port.dpdk_port, RTE_ETH_EVENT_INTR_LSC, onVhostEvent, this);
    events_registered = true;
  }

  // A vhost-user port's socket is known only once its pod connects (it is
  // not yet): the home pool. A vdev's is the socket it was made on.
  rte_mempool* pool = pools_.forSocket(topology_.portSocket(port));
  if (absl::Status s = openEthdevQueues(port.dpdk_port, queues, rte_eth_conf{}, pool); !s.ok())
    return cleanup_on_error(s);
  port.tx_queues = queues;
  port.rx_queues = queues;
  return port;
}

void DpdkPortBackend::forgetQueueEvents(uint16_t dpdk_port) {
  // -EAGAIN while the callback runs on the vhost-user thread: wait it out.
  // (A vdev's port has none: -ENOENT.)
  for (rte_eth_event_type type : {RTE_ETH_EVENT_QUEUE_STATE, RTE_ETH_EVENT_INTR_LSC})
    while (rte_eth_dev_callback_unregister(dpdk_port, type, onVhostEvent, this) == -EAGAIN) {
    }
  std::lock_guard lock(queue_mu_);
  enabled_tx_[dpdk_port] = 0;
}

void DpdkPortBackend::destroy(const CreatedPort& port) {
  forgetQueueEvents(port.dpdk_port);
  if (int r = rte_eth_dev_stop(port.dpdk_port); r != 0)
    logWarning("stopping port ", port.dpdk_name, ": ", rte_strerror(-r));
  if (int r = rte_eth_dev_close(port.dpdk_port); r != 0)
    logWarning("closing port ", port.dpdk_name, ": ", rte_strerror(-r));
  if (int r = rte_eal_hotplug_remove("vdev", port.dpdk_name.c_str()); r != 0 && r != -ENOENT)
    logWarning("removing vdev ", port.dpdk_name, ": ", rte_strerror(-r));
}

PortBackend::ByteCounts DpdkPortBackend::bytes(const CreatedPort& port) {
  const uint16_t dpdk_port = port.dpdk_port;
  // The driver's own counters (net_vhost adds each burst's bytes per queue);
  // read without stopping the PMD that writes them, as rte_eth_stats_get is.
  rte_eth_stats s{};
  if (rte_eth_stats_get(dpdk_port, &s) != 0) return {};
  return {s.ibytes, s.obytes};
}

absl::Status DpdkPortBackend::setMtu(const CreatedPort& port, uint32_t mtu) {
  const int rc = rte_eth_dev_set_mtu(port.dpdk_port, static_cast<uint16_t>(mtu));
  if (rc == -ENOTSUP) return absl::UnimplementedError("the port's driver sets no MTU");
  if (rc != 0) return dpdkError(absl::StrCat("setting MTU ", mtu), rc);
  return absl::OkStatus();
}

int DpdkPortBackend::onVhostEvent(uint16_t dpdk_port, rte_eth_event_type type, void* self, void*) {
  static_cast<DpdkPortBackend*>(self)->readQueueEvents(dpdk_port, type == RTE_ETH_EVENT_INTR_LSC);
  return 0;
}

void DpdkPortBackend::readQueueEvents(uint16_t dpdk_port, bool link_event) {
  std::lock_guard lock(queue_mu_);
  uint32_t& enabled = enabled_tx_[dpdk_port];
  // A pod that goes away leaves its vrings' states reset without a queue
  // event of their own: only the link event says so.
  if (link_event && !ethdevLinkUp(dpdk_port)) enabled = 0;
  // A queue event's `rx` is the pod's transmit vring (our rx queue); ours to
  // send on are the others.
  rte_eth_vhost_queue_event event{};
  while (rte_eth_vhost_get_queue_event(dpdk_port, &event) == 0) {
    if (event.rx || event.queue_id >= 32) continue;
    const uint32_t bit = 1u << event.queue_id;
    enabled = event.enable ? enabled | bit : enabled & ~bit;
  }
  queue_change_.store(true, std::memory_order_release);
}

uint16_t DpdkPortBackend::enabledTxQueues(const CreatedPort& port) {
  std::lock_guard lock(queue_mu_);
  const uint32_t enabled = enabled_tx_[port.dpdk_port];
  const auto leading = static_cast<uint16_t>(std::countr_one(enabled));
  return std::clamp<uint16_t>(leading, 1, port.tx_queues);
}

bool DpdkPortBackend::takeQueueStateChange() { return queue_change_.exchange(false, std::memory_order_acq_rel); }

bool DpdkPortBackend::linkUp(const CreatedPort& port) { return ethdevLinkUp(port.dpdk_port); }

bool DpdkPortBackend::ethdevLinkUp(uint16_t dpdk_port) {
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(dpdk_port, &link) != 0) return false;
  return link.link_status == RTE_ETH_LINK_UP;
}

}  // namespace sluice
