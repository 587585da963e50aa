// The one way a gRPC handler of ours runs its body: an exception escaping it
// (e.g. bad_alloc) becomes INTERNAL rather than unwinding into gRPC's
// threads. API threads.
#pragma once

#include <grpcpp/support/status.h>

#include <exception>

namespace sluice {

template <typename F>
grpc::Status guarded(F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
}

}  // namespace sluice
