// Stand-ins for what the control core drives, for tests of the control side
// without EAL: a port backend that makes no DPDK ports (it records what it
// was asked), and a PMD thread that follows the snapshot hand-over (running,
// then acknowledges every snapshot) without polling anything.
#pragma once

#include <absl/status/statusor.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dataplane/core/port_backend.h"
#include "dataplane/datapath/pmd_context.h"

namespace sluice::test {

class FakePortBackend : public PortBackend {
 public:
  struct Created {
    uint16_t port_no;
    std::string socket_path;
    bool client;
  };

  explicit FakePortBackend(uint16_t first_dpdk_port = 0) : next_dpdk_port(first_dpdk_port) {}

  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string& socket_path, bool client_mode,
                                              uint16_t queues) override {
    if (refuse_all) return absl::UnimplementedError("no ports in this test");
    if (fail_next || refusesSocket(socket_path)) {
      fail_next = false;
      return absl::InternalError("fake: refused");
    }
    created.push_back({port_no, socket_path, client_mode});
    live.insert(next_dpdk_port);
    return CreatedPort{next_dpdk_port++, "fake" + std::to_string(port_no), queues, queues};
  }
  void destroy(const CreatedPort& port) override {
    if (on_destroy) on_destroy(port);
    live.erase(port.dpdk_port);
    destroyed.push_back(port.dpdk_name);
  }
  bool linkUp(const CreatedPort&) override { return false; }
  uint16_t enabledTxQueues(const CreatedPort& port) override {
    auto it = enabled_tx.find(port.dpdk_port);
    return it == enabled_tx.end() ? port.tx_queues : it->second;
  }
  bool takeQueueStateChange() override { return std::exchange(queue_change, false); }

  // What to refuse: every port, the next one, or one socket.
  bool refuse_all = false;
  // Tx queues each pod enabled, by ethdev (absent: all), and whether that
  // changed since control last asked.
  std::map<uint16_t, uint16_t> enabled_tx;
  bool queue_change = false;
  bool fail_next = false;
  std::string refuse_socket;
  // A pod directory's socket comes as /proc/self/fd/<n>/<file>: compared
  // as the file it names.
  bool refusesSocket(const std::string& path) const {
    if (refuse_socket.empty()) return false;
    std::error_code ec;
    return refuse_socket == path || std::filesystem::weakly_canonical(refuse_socket, ec) ==
                                        std::filesystem::weakly_canonical(path, ec);
  }
  // Called before a port is destroyed (e.g. to check no PMD still uses it).
  std::function<void(const CreatedPort&)> on_destroy;

  uint16_t next_dpdk_port;
  std::set<uint16_t> live;
  std::vector<Created> created;
  std::vector<std::string> destroyed;
};

// A PMD that only acknowledges snapshots. `slow`: it acknowledges nothing
// while set (a PMD busy with a long burst).
class AckingPmd {
 public:
  explicit AckingPmd(unsigned lcore = 1) { context.lcore = lcore; }
  ~AckingPmd() { stop(); }
  AckingPmd(const AckingPmd&) = delete;
  AckingPmd& operator=(const AckingPmd&) = delete;

  // Starts the thread and returns once it runs (as sluiced serves the API
  // only once every PMD polls).
  void start() {
    thread_ = std::thread([this] { run(); });
    while (!context.mailbox.running.load()) std::this_thread::yield();
  }
  void stop() {
    context.mailbox.stop.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Whether the PMD runs the snapshot published last.
  bool caughtUp() const {
    const PmdSnapshot* s = context.mailbox.published.load();
    return s == nullptr || context.mailbox.acked_version.load() == s->version;
  }

  PmdContext context;
  std::atomic<bool> slow{false};

 private:
  void run() {
    PmdMailbox& m = context.mailbox;
    m.running.store(true);
    while (!m.stop.load()) {
      if (!slow.load()) {
        const PmdSnapshot* s = m.published.load();
        m.acked_version.store(s != nullptr ? s->version : 0);
      }
      std::this_thread::yield();
    }
    m.running.store(false);
  }

  std::thread thread_;
};

}  // namespace sluice::test
