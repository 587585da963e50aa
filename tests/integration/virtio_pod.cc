#include "tests/integration/virtio_pod.h"

#include <rte_alarm.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "dataplane/core/ethdev_open.h"

namespace sluice::test {
namespace {
std::atomic<int> g_pod_counter{0};
}

rte_mempool* podPool() {
  static rte_mempool* pool =
      rte_pktmbuf_pool_create("pods", 16384, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  return pool;
}

bool initPodEal(const std::string& program, unsigned lcore, bool hugepages) {
  std::string prefix = "--file-prefix=sluice-pods-" + std::to_string(::getpid());
  std::string lcores = "-l" + std::to_string(lcore);
  std::vector<std::string> args = {program, lcores, "--no-pci", "-m", "512", "--no-shconf", prefix, "--log-level=4"};
  if (hugepages) {
    // In memory (memfd): no page files to clean up after a kill, and one
    // descriptor per segment list for virtio_user to pass to the backend.
    args.insert(args.end(), {"--single-file-segments", "--in-memory"});
  } else {
    args.emplace_back("--no-huge");
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
    std::fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
    return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<VirtioPod>> VirtioPod::create(const std::string& socket_path, bool server,
                                                             rte_mempool* pool, uint16_t queues) {
  std::string name = "net_virtio_user_pod" + std::to_string(g_pod_counter++);
  // More than one pair needs the control queue, over which virtio_user
  // enables the pairs the device was configured with.
  std::string args = "path=" + socket_path + ",queues=" + std::to_string(queues) + ",queue_size=1024" +
                     (queues > 1 ? ",cq=1" : "") + (server ? ",server=1" : "");
  if (int rc = rte_eal_hotplug_add("vdev", name.c_str(), args.c_str()); rc != 0)
    return absl::InternalError("virtio_user on " + socket_path + ": " + rte_strerror(-rc));
  uint16_t port = 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &port) != 0) return absl::InternalError("no port for " + name);
  std::unique_ptr<VirtioPod> pod(new VirtioPod(name, port, pool, queues));
  if (absl::Status s = queues == 1 ? openEthdev(port, rte_eth_conf{}, pool)
                                   : openEthdevQueues(port, queues, rte_eth_conf{}, pool);
      !s.ok())
    return s;
  return pod;
}

namespace {

// Set by the alarm below. Static, not on the caller's stack: an alarm never
// points into a frame, and no plain write (a stack atomic's construction)
// precedes the interrupt thread's store through DPDK's alarm list, which
// ThreadSanitizer cannot see.
std::atomic<bool> g_alarm_ran{false};
void markRan(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

// Returns once every EAL alarm due by now has run. virtio_user (DPDK 22.11)
// learns that its vhost peer died when the link is read, and then defers the
// unregistering of its interrupt callback to a 1 us EAL alarm on the
// interrupt thread, holding a pointer to the device. Closing the device
// before that alarm fires lets it run on freed memory: the rare segfault of
// restart_integration_test, whose pods outlive a killed sluiced. Alarms run
// in expiry order on that one thread, so one set now runs after it.
void waitForDueAlarms() {
  g_alarm_ran.store(false);
  if (rte_eal_alarm_set(1, markRan, &g_alarm_ran) != 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!g_alarm_ran.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  if (!g_alarm_ran.load()) rte_eal_alarm_cancel(markRan, &g_alarm_ran);
}

}  // namespace

VirtioPod::~VirtioPod() {
  // A dead peer is noticed here if not before (and its deferred clean-up
  // scheduled); let that clean-up run before the device goes.
  rte_eth_link link{};
  rte_eth_link_get_nowait(port_id_, &link);
  waitForDueAlarms();
  rte_eth_dev_stop(port_id_);
  rte_eth_dev_close(port_id_);
  rte_eal_hotplug_remove("vdev", name_.c_str());
}

size_t VirtioPod::send(const std::vector<Frame>& frames, std::chrono::steady_clock::duration deadline,
                       uint16_t queue) {
  auto until = std::chrono::steady_clock::now() + deadline;
  size_t sent = 0;
  while (sent < frames.size()) {
    rte_mbuf* burst[32];
    uint16_t n = static_cast<uint16_t>(std::min<size_t>(32, frames.size() - sent));
    if (rte_pktmbuf_alloc_bulk(pool_, burst, n) != 0) return sent;
    for (uint16_t i = 0; i < n; ++i) {
      const Frame& f = frames[sent + i];
      // A frame longer than one buffer goes as a chain of full ones (as a
      // guest's jumbo frame spans several descriptors).
      size_t at = 0;
      for (rte_mbuf* seg = burst[i];;) {
        const auto take = static_cast<uint16_t>(std::min<size_t>(f.size() - at, rte_pktmbuf_tailroom(seg)));
        std::memcpy(rte_pktmbuf_append(seg, take), f.data() + at, take);
        at += take;
        if (at == f.size()) break;
        seg = rte_pktmbuf_alloc(pool_);
        if (seg == nullptr || rte_pktmbuf_chain(burst[i], seg) != 0) {
          rte_pktmbuf_free(seg);
          rte_pktmbuf_free_bulk(burst, n);
          return sent;
        }
      }
    }
    uint16_t done = 0;
    while (done < n) {
      done = static_cast<uint16_t>(done +
                                   rte_eth_tx_burst(port_id_, queue, burst + done, static_cast<uint16_t>(n - done)));
      if (done < n && std::chrono::steady_clock::now() > until) {
        rte_pktmbuf_free_bulk(burst + done, n - done);
        return sent + done;
      }
    }
    sent += n;
  }
  return sent;
}

std::vector<Frame> VirtioPod::receive(size_t count, std::chrono::steady_clock::duration deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  std::vector<Frame> out;
  while (out.size() < count && std::chrono::steady_clock::now() < until) {
    rte_mbuf* burst[32];
    uint16_t n = 0;
    for (uint16_t q = 0; q < queues_ && n == 0; ++q) n = rte_eth_rx_burst(port_id_, q, burst, 32);
    for (uint16_t i = 0; i < n; ++i) {
      // Every segment of a chained (mergeable-buffer) frame.
      Frame& f = out.emplace_back(rte_pktmbuf_pkt_len(burst[i]));
      const void* d = rte_pktmbuf_read(burst[i], 0, static_cast<uint32_t>(f.size()), f.data());
      if (d != f.data()) std::memcpy(f.data(), d, f.size());
    }
    rte_pktmbuf_free_bulk(burst, n);
    if (n == 0) std::this_thread::yield();
  }
  return out;
}

size_t VirtioPod::drainCount() {
  size_t total = 0;
  rte_mbuf* burst[32];
  for (uint16_t q = 0; q < queues_; ++q) {
    while (uint16_t n = rte_eth_rx_burst(port_id_, q, burst, 32)) {
      rte_pktmbuf_free_bulk(burst, n);
      total += n;
    }
  }
  return total;
}

}  // namespace sluice::test
