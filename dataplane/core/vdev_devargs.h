// The devargs a DPDK vdev "pod" (PORT_TYPE_DPDK_VDEV: benchmarks and tests)
// may be given, checked so that what sluiced validates is exactly what the
// driver will read. Pure functions, no EAL; used by the control thread when
// parsing a port request, by the port backend right before hot-plugging, and
// by tests and fuzzers.
//
// How DPDK reads "<driver>,<args>": the device name ends at the first ','
// (rte_devargs_parse); rte_kvargs_parse then cuts the arguments at every ','
// outside '[...]' and, within an argument, ends the key at every '=': the
// key is the text before the LAST '=' and the value the text after it, so
// "rx_pcap=tx_pcap=/f" is tx_pcap=/f to the driver. Rather than imitate
// that, sluiced accepts only arguments both readings agree on: no brackets,
// exactly one '=' per argument, key and value non-empty, no empty argument.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sluice {

// Bytes a packet may hold in one of sluiced's mbufs: RTE_MBUF_DEFAULT_DATAROOM,
// the data room of the pool sluiced/eal_session.cc makes (RTE_MBUF_DEFAULT_BUF_SIZE
// minus the headroom). net_null writes `size` bytes into each mbuf unchecked.
inline constexpr uint32_t kMbufDataRoom = 2048;

// Where a vdev port's pcap input must lie, relative to sluiced's state-dir: a
// directory only root writes (rx_pcap is read by sluiced, as root).
inline constexpr char kVdevPcapSubdir[] = "vdev";

struct VdevPolicy {
  // rx_pcap files must be below this absolute directory; empty: none allowed.
  std::string pcap_dir;
  // The largest net_null `size`: what one mbuf holds.
  uint32_t max_packet_bytes = kMbufDataRoom;
};

// sluiced's policy: pcap files below <state_dir>/vdev, packets within an mbuf.
VdevPolicy vdevPolicyFor(const std::string& state_dir);

// "<driver>[,key=value...]" split as both sluiced and DPDK read it.
struct VdevDevargs {
  std::string driver;
  std::vector<std::pair<std::string, std::string>> args;  // in order, key -> value
};

// The syntax alone (no driver or key rules): at most 512 characters of
// [A-Za-z0-9_.,/:=-], a driver, then arguments of exactly one '=' with a
// non-empty key and value. InvalidArgument("devargs: ...").
absl::StatusOr<VdevDevargs> splitVdevDevargs(const std::string& devargs);

// The syntax, then what each driver may get (nothing that writes files, opens
// interfaces or overruns an mbuf):
//   net_pcap: rx_pcap=<file below policy.pcap_dir> (exactly once; no "." or
//             ".." components), infinite_rx=0|1;
//   net_null: size=<1..policy.max_packet_bytes, decimal>, copy=0|1,
//             no-rx=0|1 (not together with copy=1, which DPDK refuses).
// Every key at most once. InvalidArgument("devargs: ...").
absl::Status validateVdevDevargs(const std::string& devargs, const VdevPolicy& policy);

}  // namespace sluice
