#include "dataplane/api/metrics_http.h"

#include <absl/strings/str_cat.h>
#include <civetweb.h>

#include <exception>
#include <mutex>

namespace sluice {
namespace {

const char* reasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    default: return "Internal Server Error";
  }
}

}  // namespace

HttpAnswer answerMetricsRequest(std::string_view method, std::string_view path, bool peer_allowed,
                                const std::function<std::string()>& render) {
  HttpAnswer a;
  a.content_type = "text/plain; charset=utf-8";
  // A query string (e.g. Prometheus's ?name[]= filters) is ignored: the
  // whole page is always served.
  const std::string_view route = path.substr(0, path.find('?'));
  if (!peer_allowed) {
    a.status = 403;
    a.body = "forbidden: this address is not in sluiced's metrics-allowed-cidrs\n";
  } else if (route != "/metrics") {
    a.status = 404;
    a.body = "not found: this server serves /metrics only\n";
  } else if (method != "GET" && method != "HEAD") {
    a.status = 405;
    a.allow = "GET, HEAD";
    a.body = "method not allowed: /metrics is read with GET or HEAD\n";
  } else {
    a.content_type = std::string(kMetricsContentType);
    a.body = render();
  }
  a.content_length = a.body.size();
  if (method == "HEAD") a.body.clear();
  return a;
}

int MetricsHttpServer::handle(struct mg_connection* conn, void* self) {
  const mg_request_info* req = mg_get_request_info(conn);
  auto* server = static_cast<MetricsHttpServer*>(self);
  HttpAnswer a;
  try {
    a = answerMetricsRequest(req->request_method != nullptr ? req->request_method : "",
                             req->local_uri != nullptr ? req->local_uri : "", server->allowed_.allows(req->remote_addr),
                             server->render_);
  } catch (const std::exception& e) {
    a = HttpAnswer{500, "text/plain; charset=utf-8", absl::StrCat("metrics unavailable: ", e.what(), "\n"), 0, ""};
    a.content_length = a.body.size();
  }
  std::string head = absl::StrCat("HTTP/1.1 ", a.status, " ", reasonPhrase(a.status), "\r\nContent-Type: ",
                                  a.content_type, "\r\nContent-Length: ", a.content_length,
                                  "\r\nConnection: close\r\n");
  if (!a.allow.empty()) absl::StrAppend(&head, "Allow: ", a.allow, "\r\n");
  head += "\r\n";
  mg_write(conn, head.data(), head.size());
  if (!a.body.empty()) mg_write(conn, a.body.data(), a.body.size());
  return a.status;  // handled (a status code tells civetweb so)
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::start(const MetricsHttpOptions& o,
                                                                             std::function<std::string()> render) {
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer(std::move(render), o.allowed));
  const bool v6 = o.address.find(':') != std::string::npos;
  const std::string listen = absl::StrCat(v6 ? "[" : "", o.address, v6 ? "]" : "", ":", o.port);
  const std::string threads = std::to_string(o.threads);
  const std::string timeout = std::to_string(o.request_timeout_ms);
  // The page is built per request on the calling thread. Keep-alive off:
  // a scraper's idle connection would hold a worker between scrapes. The
  // linger timeout bounds how long a closing connection waits for its
  // client. No document root: nothing but the handler below is served.
  const char* options[] = {"listening_ports", listen.c_str(),  "num_threads",       threads.c_str(),
                           "request_timeout_ms", timeout.c_str(), "linger_timeout_ms", timeout.c_str(),
                           "enable_keep_alive", "no",             nullptr};
  mg_callbacks callbacks{};
  // civetweb's own messages (e.g. bind failures) are not ours to print.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
  server->ctx_ = mg_start(&callbacks, nullptr, options);
  if (server->ctx_ == nullptr)
    return absl::UnavailableError(absl::StrCat("metrics endpoint: cannot listen on ", listen,
                                               " (address in use or not an address of this host)"));
  mg_set_request_handler(server->ctx_, "/", &MetricsHttpServer::handle, server.get());
  mg_server_port ports[4]{};
  if (mg_get_server_ports(server->ctx_, 4, ports) >= 1) server->port_ = static_cast<uint16_t>(ports[0].port);
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (ctx_ != nullptr) mg_stop(ctx_);
}

}  // namespace sluice
