// The watch thread: lists the Nodes, then watches them from the list's
// resourceVersion, keeping the NodeCache as the API has it.
//   - the list is read in pages (limit, continue); only a list read to its
//     last page replaces the cache. A continue token the server can no
//     longer serve (410 Gone: the list's version was compacted) starts the
//     list over from its first page; any other failure on any page leaves
//     the cache as it was (not synced) and retries after the backoff;
//   - ADDED / MODIFIED / DELETED change the cache; BOOKMARK moves the
//     resourceVersion; an ERROR event with code 410, or the watch answered
//     410 Gone, means the version expired: list again (a relist replaces the
//     whole cache, so Nodes deleted meanwhile disappear);
//   - the server ending the watch (its timeoutSeconds) is normal: watch
//     again from the last resourceVersion;
//   - no answer (refused, reset, TLS, silence past the idle limit) or an
//     error status: not synced, wait a capped exponential backoff with
//     jitter, and watch again from the last resourceVersion.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "agent/backoff.h"
#include "agent/kube_client.h"
#include "agent/node_cache.h"

namespace sluice::agent {

struct WatchSettings {
  std::chrono::seconds watch_timeout{300};  // asked of the server (timeoutSeconds)
  std::chrono::seconds request_timeout{30};
  // Nodes per list page: 100 real Nodes (20-30 KB each with managedFields
  // and status.images) stay far below max_body.
  unsigned list_page_size = 100;
  size_t max_body = KubeClient::kDefaultMaxBody;  // a longer response is an error
  Backoff::Duration backoff_initial{500};
  Backoff::Duration backoff_cap{30000};
};

class NodeWatcher {
 public:
  NodeWatcher(const KubeConfig& config, const WatchSettings& settings, NodeCache& cache, std::atomic<bool>& stop);
  // Runs until `stop` (on the calling thread).
  void run();

 private:
  bool list();   // false: failed (counted, error set); the cache replaced only on success
  void watch();  // returns when the watch ended, whatever the reason
  void failed(const std::string& what, const HttpResult& r);
  void sleepFor(Backoff::Duration d);

  WatchSettings settings_;
  NodeCache& cache_;
  std::atomic<bool>& stop_;
  KubeClient client_;
  Backoff backoff_;
  std::string resource_version_;
  bool need_list_ = true;
  bool need_backoff_ = false;
};

}  // namespace sluice::agent
