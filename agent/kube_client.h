// The node controller's HTTPS client for the Kubernetes API, on libcurl:
// curl speaks HTTP and TLS (and undoes chunked transfer encoding); this
// class adds the server, the CA, the bearer token (the token file re-read
// when it changes) or client certificate, and splits a watch response into
// lines. One client per thread: each holds its own curl handle (connections
// are reused across requests on it).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "agent/kube_config.h"

namespace sluice::agent {

struct HttpResult {
  long status = 0;     // the HTTP status; 0 when no response arrived
  std::string body;    // the response (a watch's only when it was no stream)
  std::string error;   // why no response arrived (connection refused, TLS, timeout)
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

class KubeClient {
 public:
  // The largest response body read whole (a page of a list, a Node, a
  // Status): 16 MiB, far above a page of 100 Nodes of 20-30 KB each (what
  // managedFields and status.images make of a real Node). A longer one ends
  // the request with an error rather than leaving half a page to parse.
  static constexpr size_t kDefaultMaxBody = 16u << 20;

  // `stop` (optional) aborts a request in flight when it becomes true.
  KubeClient(KubeConfig config, const std::atomic<bool>* stop, std::chrono::seconds request_timeout,
             size_t max_body = kDefaultMaxBody);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  HttpResult get(const std::string& path);
  HttpResult patch(const std::string& path, const std::string& body, const std::string& content_type);
  // A watch: `on_open` runs once the server answered 200 (the watch is
  // established, events or not); then every line of the body goes to
  // `on_line`, which returns false to end the watch (an ERROR event). The
  // server ends it cleanly after its timeoutSeconds (status 200, no error);
  // `idle_limit` without a byte (bookmarks included) counts as a dead
  // connection. Any other status: the body is returned whole.
  HttpResult watch(const std::string& path, const std::function<void()>& on_open,
                   const std::function<bool(std::string_view)>& on_line, std::chrono::seconds idle_limit);

 private:
  HttpResult perform(const std::string& method, const std::string& path, const std::string* body,
                     const std::string& content_type, const std::function<void()>* on_open,
                     const std::function<bool(std::string_view)>* on_line, std::chrono::seconds idle_limit);
  std::string bearerToken();

  KubeConfig config_;
  const std::atomic<bool>* stop_;
  std::chrono::seconds request_timeout_;
  size_t max_body_;
  void* curl_;  // CURL*
  // The token file as last read, and what identified that version of it.
  std::string token_;
  std::filesystem::file_time_type token_mtime_{};
  uintmax_t token_size_ = 0;
};

}  // namespace sluice::agent
