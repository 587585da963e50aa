// The HTTP side of the metrics endpoint: civetweb (Debian's libcivetweb)
// serves GET/HEAD /metrics on its own threads, a control-path reader that
// takes the same snapshot `sluicectl stats` does; it never waits on the gRPC
// server and never touches a PMD. Anything else is answered 404 (another
// path) or 405 (another method) without building the page.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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

// What a request gets; `render` is called only for GET or HEAD /metrics.
HttpAnswer answerMetricsRequest(std::string_view method, std::string_view path,
                                const std::function<std::string()>& render);

class MetricsHttpServer {
 public:
  // Listens on `address`:`port` (port 0: any free one, see port()). An
  // IPv6 address is given bare (e.g. "::1").
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> start(const std::string& address, uint16_t port,
                                                                  std::function<std::string()> render);
  ~MetricsHttpServer();  // stops and joins its threads
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;
  uint16_t port() const { return port_; }

 private:
  explicit MetricsHttpServer(std::function<std::string()> render) : render_(std::move(render)) {}
  static int handle(::mg_connection* conn, void* self);
  std::function<std::string()> render_;
  mg_context* ctx_ = nullptr;
  uint16_t port_ = 0;
};

}  // namespace sluice
