#include "dataplane/api/metrics_endpoint.h"

#include "common/log.h"

namespace sluice {

bool MetricsEndpoint::attempt() {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> started = listen_();
  if (!started.ok()) {
    const uint64_t failures = bind_failures_.fetch_add(1, std::memory_order_relaxed) + 1;
    // The first failure says what happens next; the retries repeat it
    // only at debug level, so a port held for hours does not flood the log.
    if (failures == 1)
      logWarning(started.status().message(), "; the API and forwarding run without it, retrying every ",
                 retry_interval_.count(), " ms");
    else
      logDebug(started.status().message(), " (attempt ", failures, ")");
    return false;
  }
  const uint16_t port = (*started)->port();
  {
    std::lock_guard lock(mu_);
    server_ = *std::move(started);
  }
  port_.store(port, std::memory_order_release);
  if (bindFailures() != 0) logInfo("metrics endpoint listening on port ", port, " after ", bindFailures(), " failed attempt(s)");
  return true;
}

bool MetricsEndpoint::start(Listen listen) {
  listen_ = std::move(listen);
  if (attempt()) return true;
  retry_ = std::thread([this] { retryUntilListening(); });
  return false;
}

void MetricsEndpoint::retryUntilListening() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, retry_interval_, [this] { return stopping_; })) {
    lock.unlock();
    const bool listening = attempt();
    lock.lock();
    if (listening) return;
  }
}

void MetricsEndpoint::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (retry_.joinable()) retry_.join();
  std::unique_ptr<MetricsHttpServer> server;
  {
    std::lock_guard lock(mu_);
    server = std::move(server_);
  }
  port_.store(0, std::memory_order_release);
  server.reset();  // joins civetweb's threads, outside the lock a page never takes
}

}  // namespace sluice
