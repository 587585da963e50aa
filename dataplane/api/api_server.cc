#include "dataplane/api/api_server.h"

#include <absl/strings/str_cat.h>

namespace sluice {

void ApiServer::shutdown(std::chrono::system_clock::time_point deadline) {
  if (shut_down_) return;
  shut_down_ = true;
  listener_.reset();
  server_->Shutdown(deadline);
}

namespace {

absl::StatusOr<std::unique_ptr<ApiServer>> serveOnUnixSocket(std::unique_ptr<grpc::Server> server,
                                                              const std::string& path, mode_t mode,
                                                              std::optional<gid_t> gid, PeerCredentials& peers) {
  if (server == nullptr) return absl::InternalError(absl::StrCat("cannot serve the API on ", path));
  auto listener = UnixSocketListener::start(path, mode, gid, *server, peers);
  if (!listener.ok()) {
    server->Shutdown();
    return listener.status();
  }
  return std::make_unique<ApiServer>(std::move(server), *std::move(listener));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ApiServer>> startApiServer(
    const std::string& path, const std::vector<grpc::Service*>& services, PeerCredentials& peers,
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors) {
  grpc::ServerBuilder builder;
  if (!interceptors.empty()) builder.experimental().SetInterceptorCreators(std::move(interceptors));
  for (grpc::Service* service : services) builder.RegisterService(service);
  // No listening port of gRPC's own: the listener hands it each connection.
  return serveOnUnixSocket(builder.BuildAndStart(), path, 0600, std::nullopt, peers);
}

absl::StatusOr<std::unique_ptr<ApiServer>> startAgentApiServer(const std::string& path, gid_t gid,
                                                               grpc::CallbackGenericService& gateway,
                                                               PeerCredentials& peers) {
  grpc::ServerBuilder builder;
  builder.RegisterCallbackGenericService(&gateway);
  return serveOnUnixSocket(builder.BuildAndStart(), path, 0660, gid, peers);
}

}  // namespace sluice
