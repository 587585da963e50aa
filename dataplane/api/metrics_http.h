// The HTTP side of the metrics endpoint: civetweb (Debian's libcivetweb)
// serves GET/HEAD /metrics on its own threads, a control-path reader that
// takes the same snapshot `sluicectl stats` does; it never waits on the gRPC
// server and never touches a PMD. Anything else is answered 404 (another
// path) or 405 (another method) without building the page, and a client
// outside the allow-list 403.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "dataplane/config/ipv4_allow_list.h"

struct mg_context;
struct mg_connection;

namespace sluice {

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

struct HttpAnswer {
  int status = 200;
  std::string content_type;
  std::string body;   // empty for HEAD (content_length says the page's size)
  size_t content_length = 0;
  std::string allow;  // for 405: the methods that are served
};

// What a request gets; `render` is called only for GET or HEAD /metrics
// from an allowed peer (`peer_allowed` false: 403 whatever was asked).
HttpAnswer answerMetricsRequest(std::string_view method, std::string_view path, bool peer_allowed,
                                const std::function<std::string()>& render);

struct MetricsHttpOptions {
  std::string address;  // IPv4 or bare IPv6 (e.g. "::1")
  uint16_t port = 0;    // 0: any free one, see MetricsHttpServer::port()
  Ipv4AllowList allowed;
  // Workers: each connection holds one from its first byte until its answer
  // is sent, so a few stalled clients must still leave one for a scrape.
  unsigned threads = 8;
  // How long a connection may take to send its request (civetweb's
  // request_timeout_ms): a scrape's request is one small packet, so a
  // client slower than this is stalling, not scraping.
  unsigned request_timeout_ms = 2500;
};

class MetricsHttpServer {
 public:
  // Listens on options.address:options.port; Unavailable when it cannot
  // (the port taken, or not an address of this host).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> start(const MetricsHttpOptions& options,
                                                                  std::function<std::string()> render);
  ~MetricsHttpServer();  // stops and joins its threads
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;
  uint16_t port() const { return port_; }

 private:
  MetricsHttpServer(std::function<std::string()> render, Ipv4AllowList allowed)
      : render_(std::move(render)), allowed_(std::move(allowed)) {}
  static int handle(::mg_connection* conn, void* self);
  std::function<std::string()> render_;
  const Ipv4AllowList allowed_;
  mg_context* ctx_ = nullptr;
  uint16_t port_ = 0;
};

}  // namespace sluice
