// Serving the gRPC API on its unix socket so that only root can ever reach
// it: the socket is born mode 0600 (never chmod-ed after the fact, which
// would leave a moment in which any local user could connect and drive the
// dataplane). Main thread, once at start.
#pragma once

#include <absl/status/statusor.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

namespace sluice {

// Binds, listens and starts serving `services` on the unix socket at `path`
// (an existing file there must have been removed), every call passing
// through `interceptors` (e.g. the call metrics). Internal if gRPC cannot
// serve there or the socket is not a 0600 socket once it exists.
absl::StatusOr<std::unique_ptr<grpc::Server>> startApiServer(
    const std::string& path, const std::vector<grpc::Service*>& services,
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors = {});

}  // namespace sluice
