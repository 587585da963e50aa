// Keeps the metrics endpoint listening without making sluiced depend on it:
// when its port cannot be bound at start (another process holds it, the
// address is not up yet) sluiced serves its API and forwards anyway, and a
// thread of this class tries again every retry interval until the endpoint
// listens or stop() is called. Failed attempts are logged and counted (the
// page shows the count once it is served). Main thread for start()/stop();
// the retry thread and civetweb's threads read the counters.
#pragma once

#include <absl/status/statusor.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "dataplane/api/metrics_http.h"

namespace sluice {

class MetricsEndpoint {
 public:
  using Listen = std::function<absl::StatusOr<std::unique_ptr<MetricsHttpServer>>()>;

  explicit MetricsEndpoint(std::chrono::milliseconds retry_interval) : retry_interval_(retry_interval) {}
  ~MetricsEndpoint() { stop(); }
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Tries `listen` now; if that fails, logs why and keeps trying on the
  // retry thread. Returns whether the endpoint listens already.
  bool start(Listen listen);
  // Ends the retries and the endpoint (joins their threads): no page is
  // built after this returns.
  void stop();

  // The port listened on; 0 while not listening.
  uint16_t port() const { return port_.load(std::memory_order_acquire); }
  // Attempts to listen that failed since start().
  uint64_t bindFailures() const { return bind_failures_.load(std::memory_order_relaxed); }

 private:
  bool attempt();
  void retryUntilListening();

  const std::chrono::milliseconds retry_interval_;
  Listen listen_;
  std::mutex mu_;                   // guards stopping_ and server_
  std::condition_variable wake_;    // stop() wakes the retry thread early
  bool stopping_ = false;
  std::unique_ptr<MetricsHttpServer> server_;
  std::atomic<uint16_t> port_{0};
  std::atomic<uint64_t> bind_failures_{0};
  std::thread retry_;
};

}  // namespace sluice
