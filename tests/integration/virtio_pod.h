// A pod's side of a vhost-user port, for tests and benchmarks: a
// net_virtio_user device in this process (which must have initialised EAL)
// connected to a socket of sluiced's, sending and receiving raw frames.
// Used from one thread at a time.
#pragma once

#include <rte_mempool.h>

#include <absl/status/statusor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/frames.h"

namespace sluice::test {

class VirtioPod {
 public:
  // server=false: the pod connects to sluiced's listening socket (sluiced's
  // port in server mode). server=true: the pod listens and sluiced connects.
  // `queues` pairs, all enabled (a multi-queue virtio-net device, which
  // negotiates them over its control queue).
  static absl::StatusOr<std::unique_ptr<VirtioPod>> create(const std::string& socket_path, bool server,
                                                           rte_mempool* pool, uint16_t queues = 1);
  ~VirtioPod();
  VirtioPod(const VirtioPod&) = delete;
  VirtioPod& operator=(const VirtioPod&) = delete;

  // Sends frames in bursts, retrying while the ring is full until `deadline`;
  // returns how many the device accepted.
  size_t send(const std::vector<Frame>& frames,
              std::chrono::steady_clock::duration deadline = std::chrono::seconds(10), uint16_t queue = 0);
  // Receives (from every queue) until `count` frames arrived or `deadline` passed.
  std::vector<Frame> receive(size_t count, std::chrono::steady_clock::duration deadline = std::chrono::seconds(10));
  // Receives and counts (without copying) whatever is waiting now.
  size_t drainCount();
  uint16_t portId() const { return port_id_; }

 private:
  VirtioPod(std::string name, uint16_t port_id, rte_mempool* pool, uint16_t queues)
      : name_(std::move(name)), port_id_(port_id), pool_(pool), queues_(queues) {}
  std::string name_;
  uint16_t port_id_;
  rte_mempool* pool_;
  uint16_t queues_;
};

// The pods' mbuf pool of a test process (made on first use, after EAL).
rte_mempool* podPool();

// EAL for a test or tool process that plays pods: one lcore, its own file
// prefix, no hugepages unless `hugepages` (then 2 MB pages in memory, one
// descriptor per segment list, which virtio_user passes to the vhost-user
// backend to share its memory). Returns false (and prints why) on failure.
bool initPodEal(const std::string& program, unsigned lcore = 0, bool hugepages = false);

}  // namespace sluice::test
