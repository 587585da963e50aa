// Calls sluice.v1.Dataplane still answers, for one release, although a
// module's own service serves them now: each forwards to that service's
// handler, so both answer the same. Unset: the module is not in this build
// (UNIMPLEMENTED). Delete this file, its use in grpc_service and the
// deprecated RPCs of dataplane.proto together.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {

template <typename Request, typename Response>
using ForwardedCall = std::function<grpc::Status(grpc::ServerContext*, const Request*, Response*)>;

struct DeprecatedForwards {
  ForwardedCall<v1::ListVfsRequest, v1::ListVfsResponse> list_vfs;
  ForwardedCall<v1::AddNodeRequest, v1::AddNodeResponse> add_node;
  ForwardedCall<v1::DeleteNodeRequest, v1::DeleteNodeResponse> delete_node;
  ForwardedCall<v1::ListNodesRequest, v1::ListNodesResponse> list_nodes;
};

}  // namespace sluice
