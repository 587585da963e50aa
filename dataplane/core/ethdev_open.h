// How every ethdev of ours is brought up (pod ports, the overlay uplink, and
// the ports tests and benchmarks stand in with): configured with one rx queue
// filled from a mempool and one tx queue, then started. Control path only.
#pragma once

#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <cstdint>

namespace sluice {

// 1024 descriptors absorb a PMD's scheduling hiccups at ~10 Mpps (about
// 100 µs) without holding too many mbufs per port.
inline constexpr uint16_t kEthdevDescriptors = 1024;

// Configures `port` with `conf`, sets up rx queue 0 (descriptors from the
// port's NUMA socket, mbufs from `pool`) and tx queue 0 with `descriptors`
// each, runs `before_start` (settings a driver takes only between setup and
// start), and starts the port. A port that was set up but would not start is
// closed again; what the caller created to get the port (a hot-plugged vdev)
// stays the caller's to remove. The status names the step that failed.
absl::Status openEthdev(uint16_t port, const rte_eth_conf& conf, rte_mempool* pool,
                        uint16_t descriptors = kEthdevDescriptors,
                        absl::FunctionRef<absl::Status()> before_start = [] { return absl::OkStatus(); });

// The same with `queues` rx queues (0..queues-1) and as many tx queues, each
// of kEthdevDescriptors (a multi-queue pod port).
absl::Status openEthdevQueues(uint16_t port, uint16_t queues, const rte_eth_conf& conf, rte_mempool* pool);

}  // namespace sluice
