// sluiced's configuration: defaults, then a JSON file (--config), then command
// line flags, each overriding the one before. Parsed and validated once on the
// main thread at start; immutable afterwards.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/net_address.h"
#include "dataplane/config/sriov_pool_config.h"
#include "dataplane/config/overlay_config.h"

namespace sluice {

struct SluicedConfig {
  std::string api_socket = "/var/run/sluice/sluice.sock";
  std::string socket_dir = "/var/run/sluice/vhost";
  // lcore that runs the main (control/API) thread, and the PMD lcores.
  unsigned main_core = 0;
  std::vector<unsigned> pmd_cores = {1};
  // Extra EAL arguments. The default works on machines without hugepages or
  // DPDK-bound NICs (no --in-memory: it does not combine with --no-huge).
  std::string eal_args = "--no-huge --no-pci -m 1024 --no-shconf";
  Ipv4Cidr pod_cidr = *Ipv4Cidr::parse("10.244.0.0/24");
  Ipv4Address gateway = *Ipv4Address::parse("10.244.0.1");
  MacAddress gateway_mac = MacAddress::fromIpv4(gateway);
  uint32_t tx_flush_interval_us = 0;
  uint16_t max_ports = 32;
  uint32_t mbufs = 32768;
  std::string log_level = "info";
  // Flow caches (issue 4), per PMD. EMC slots (power of two; 8192 as OVS),
  // its inverse insertion probability (1 in N misses is cached; 0 switches
  // the EMC off; 100 as OVS), whether the ~1M-entry signature cache runs,
  // the megaflow limit (each megaflow takes 384 bytes: 200000 is 77 MB per
  // PMD, OVS's default flow-limit), and how long an unused megaflow lives.
  uint32_t emc_entries = 8192;
  uint32_t emc_insert_inv_prob = 100;
  bool smc_enable = true;
  uint32_t flow_limit = 200000;
  uint32_t flow_idle_timeout_ms = 10000;
  // Whether AddPort may make PORT_TYPE_DPDK_VDEV ports (a pcap file or
  // net_null standing in for a pod): benchmarks and tests only.
  bool allow_vdev_ports = false;
  // Upcalls (misses sent to control for a megaflow) each PMD may send per
  // second, and at once: they bound control's translation work when many new
  // flows arrive together; misses beyond them are forwarded by the PMD's
  // inline decision without a megaflow (counted as lost upcalls).
  uint32_t upcall_rate = 20000;
  uint32_t upcall_burst = 1024;
  // Where the checkpoint of every allocation lives (checkpoint.h); it must
  // survive sluiced's restarts (a hostPath in Kubernetes).
  std::string state_dir = "/var/lib/sluice";
  // How often attachments whose pod netns vanished are looked for (0: never;
  // also done once right after the checkpoint is restored).
  uint32_t gc_interval_ms = 10000;
  // Whether a checkpoint write is fsynced (file and directory) before the
  // API replies. Atomicity against sluiced's own death (crash, kill -9,
  // upgrade) needs no fsync (write + rename); fsync adds durability against
  // a kernel crash or power loss, after which the node reboots and every pod
  // netns, hence every checkpointed port, is gone anyway (and a checkpoint
  // torn by the crash is moved aside at start). So off by default: fsync
  // cost a sequential ADD's p99 26 ms against 18 ms without it on a quiet
  // machine (bench/cni/cni_latency, 200 ADDs).
  bool checkpoint_fsync = false;
  // Partial offload (issue 6): "off", "rte_flow" (the NIC's flow engine) or
  // "software" (an rx-callback engine standing in for one: tests and demos
  // only, logged loudly); the cap on offloaded megaflows (marks are twice
  // this); the port whose received packets are marked: empty = the uplink
  // (VXLAN overlay), else "container-id/ifname" of a pod port (for tests on
  // vhost-user ports). JSON: "offload": {"provider", "max-flows", "port"}.
  std::string offload_provider = "off";
  uint32_t offload_max_flows = 16384;
  std::string offload_port;
  // The VXLAN overlay (JSON keys "uplink", "vni", "remote-nodes"; see
  // overlay_config.h). No uplink: a single node.
  OverlayConfig overlay;
  // SR-IOV VF pools, one per physical function (JSON "sriov-pools": a list
  // of {"pf": NAME, "sysfs-root": PATH?}), the sysfs tree VFs are found in
  // ("sysfs-root"), and how the PFs are programmed ("sriov-pf-control":
  // "netlink", or "fake" which changes nothing: for tests only).
  std::vector<sriov::PoolConfig> sriov_pools;
  std::string sysfs_root = "/sys";
  std::string sriov_pf_control = "netlink";
  // Keys the file held that this version does not know (warned about, ignored:
  // a newer chart may configure features an older sluiced lacks).
  std::vector<std::string> ignored_keys;
};

// Parses argv (sluiced's own flags, with --config FILE read first). Returns
// InvalidArgument naming the flag or key on any bad value; "--help" yields a
// status whose message is the usage text and whose code is kCancelled.
absl::StatusOr<SluicedConfig> parseSluicedConfig(int argc, const char* const* argv);

// Parses just a JSON document's keys over `base` (for tests and --config).
absl::StatusOr<SluicedConfig> applyConfigJson(const std::string& json_text, SluicedConfig base);

}  // namespace sluice
