#include "dataplane/core/dpdk_numa_topology.h"

#include <rte_eth_vhost.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_vhost.h>

#include <cstring>

#include "dataplane/datapath/vhost_port.h"

namespace sluice {

unsigned DpdkNumaTopology::lcoreSocket(unsigned lcore) const {
  const unsigned socket = rte_lcore_to_socket_id(lcore);
  return socket == static_cast<unsigned>(SOCKET_ID_ANY) ? 0 : socket;
}

std::optional<unsigned> DpdkNumaTopology::portSocket(const CreatedPort& port) const {
  // The vhost library's port: the socket its connect callback read.
  if (port.vhost != nullptr) {
    const int node = port.vhost->numa_node.load(std::memory_order_relaxed);
    if (node < 0) return std::nullopt;
    return static_cast<unsigned>(node);
  }
  const uint16_t dpdk_port = port.dpdk_port;
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(dpdk_port, &info) != 0) return std::nullopt;
  // net_vhost's private data is a vhost device only on its own ports: ask
  // for the vid of no other driver's.
  if (info.driver_name != nullptr && std::strcmp(info.driver_name, "net_vhost") == 0) {
    // The driver's queues name a vhost device only once a pod connected
    // (the link is up from then on); before, their vid is no pod's.
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(dpdk_port, &link) != 0 || link.link_status != RTE_ETH_LINK_UP) return std::nullopt;
    const int vid = rte_eth_vhost_get_vid_from_port_id(dpdk_port);
    if (vid < 0) return std::nullopt;
    const int node = rte_vhost_get_numa_node(vid);
    if (node < 0) return std::nullopt;
    return static_cast<unsigned>(node);
  }
  const int socket = rte_eth_dev_socket_id(dpdk_port);
  if (socket < 0) return std::nullopt;
  return static_cast<unsigned>(socket);
}

}  // namespace sluice
