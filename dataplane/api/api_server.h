// Serving the gRPC API on unix sockets whose access is the file mode: the
// main socket is born mode 0600 (only root can ever reach it), the node
// controller's socket mode 0660 owned by its group (and serving only the
// controller's calls, agent_api_gateway.h). Neither is chmod-ed wider after
// the fact, which would leave a moment in which any local user could
// connect and drive the dataplane. sluiced accepts on them itself
// (unix_socket_listener.h), so each call's caller is known. Main thread,
// once at start and once at shutdown.
#pragma once

#include <absl/status/statusor.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/api/unix_socket_listener.h"

namespace sluice {

// A gRPC server and the socket it is reached on.
class ApiServer {
 public:
  ApiServer(std::unique_ptr<grpc::Server> server, std::unique_ptr<UnixSocketListener> listener)
      : server_(std::move(server)), listener_(std::move(listener)) {}
  ~ApiServer() { shutdown(std::chrono::system_clock::now()); }
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;
  grpc::Server& grpc() { return *server_; }
  // Stops taking connections, then gives calls in flight until `deadline`
  // before they are cancelled. Idempotent.
  void shutdown(std::chrono::system_clock::time_point deadline);

 private:
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixSocketListener> listener_;
  bool shut_down_ = false;
};

// Serves `services` on the unix socket at `path` (an existing file there
// must have been removed), every call passing through `interceptors` (e.g.
// the call metrics); each connection's peer goes into `peers`. Internal if
// it cannot serve there or the socket is not a 0600 socket once it exists.
absl::StatusOr<std::unique_ptr<ApiServer>> startApiServer(
    const std::string& path, const std::vector<grpc::Service*>& services, PeerCredentials& peers,
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors = {});

// The same for the node controller's socket: `gateway` answers every call
// on it; the socket is mode 0660, owned by root and group `gid`.
absl::StatusOr<std::unique_ptr<ApiServer>> startAgentApiServer(const std::string& path, gid_t gid,
                                                               grpc::CallbackGenericService& gateway,
                                                               PeerCredentials& peers);

}  // namespace sluice
