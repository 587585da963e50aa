#include "dataplane/core/vhost_unregister_reaper.h"

#include <algorithm>

#include "common/log.h"

namespace sluice {

namespace {

// While the destructor waits for a long unregister, it says so this often.
constexpr std::chrono::seconds kShutdownWaitReport{5};

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

VhostUnregisterReaper::VhostUnregisterReaper(Unregister unregister, std::chrono::milliseconds slow_after)
    : unregister_(std::move(unregister)), slow_after_(slow_after), thread_([this] { run(); }) {}

VhostUnregisterReaper::~VhostUnregisterReaper() {
  {
    std::unique_lock lock(mu_);
    stop_ = true;
    cv_.notify_all();
    while (!cv_.wait_for(lock, kShutdownWaitReport, [this] { return queue_.empty() && running_.empty(); })) {
      logWarning("vhost-user: still waiting for the vhost library to release ", running_, " (",
                 seconds(std::chrono::steady_clock::now() - running_since_), " s, ", queue_.size(),
                 " more queued)");
    }
  }
  thread_.join();
}

void VhostUnregisterReaper::reap(std::string path, std::function<void()> done) {
  std::lock_guard lock(mu_);
  queue_.push_back({std::move(path), std::move(done)});
  cv_.notify_all();
}

bool VhostUnregisterReaper::pendingLocked(const std::string& path) const {
  return running_ == path ||
         std::any_of(queue_.begin(), queue_.end(), [&](const Job& j) { return j.path == path; });
}

bool VhostUnregisterReaper::pending(const std::string& path) const {
  std::lock_guard lock(mu_);
  return pendingLocked(path);
}

bool VhostUnregisterReaper::waitReleased(const std::string& path, std::chrono::steady_clock::duration limit) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, limit, [&] { return !pendingLocked(path); });
}

std::chrono::steady_clock::duration VhostUnregisterReaper::busyFor() const {
  std::lock_guard lock(mu_);
  if (running_.empty()) return {};
  return std::chrono::steady_clock::now() - running_since_;
}

bool VhostUnregisterReaper::waitIdle(std::chrono::steady_clock::duration limit) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, limit, [this] { return queue_.empty() && running_.empty(); });
}

uint64_t VhostUnregisterReaper::slowUnregisters() const {
  std::lock_guard lock(mu_);
  return slow_;
}

void VhostUnregisterReaper::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_ = job.path;
    running_since_ = std::chrono::steady_clock::now();
    lock.unlock();
    const int rc = unregister_(job.path);
    const auto took = std::chrono::steady_clock::now() - running_since_;
    if (rc != 0) logWarning("unregistering vhost-user socket ", job.path, ": ", rc);
    if (took >= slow_after_) {
      logWarning("vhost-user ", job.path, ": the vhost library held its socket for ", seconds(took),
                 " s after the port was deleted (a connection's message was being read)");
    }
    job.done();
    lock.lock();
    if (took >= slow_after_) ++slow_;
    running_.clear();
    cv_.notify_all();
  }
}

}  // namespace sluice
