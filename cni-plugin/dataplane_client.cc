// See dataplane_client.h.
#include "cni-plugin/dataplane_client.h"

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <vector>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/text.h"

namespace sluice::cni {

DataplaneClient::DataplaneClient(const std::string& socket_path, std::chrono::milliseconds timeout)
    : target_(cat("unix:", socket_path)), timeout_(timeout) {
  grpc::ChannelArguments args;
  // One short-lived process, one call or two: no point in retry back-off
  // longer than the deadline, and no keepalive.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // Its own connection, as a separate plugin process has: gRPC otherwise
  // shares one per target across the clients of a process, and one that
  // failed (sluiced down) holds later clients in its reconnect back-off even
  // after sluiced is back (tests run many plugin invocations in one process).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  stub_ = v1::Dataplane::NewStub(grpc::CreateCustomChannel(target_, grpc::InsecureChannelCredentials(), args));
}

DataplaneClient::~DataplaneClient() {
  // sluice-cni lives for one CNI call. Destroying the last channel drops
  // gRPC's last library reference, and gRPC then shuts down, joining its
  // executor and timer threads: measured here, that took as long as the
  // AddPort call itself, after the result was already known. Parked in a
  // process-lifetime list (reachable, so not a leak to LeakSanitizer), the
  // channel stays up and process exit ends the threads. Processes that make
  // many clients (tests) keep one channel per client, which is small.
  static std::mutex mu;
  static auto* parked = new std::vector<std::unique_ptr<v1::Dataplane::Stub>>();
  std::lock_guard lock(mu);
  parked->push_back(std::move(stub_));
}

void DataplaneClient::prepare(grpc::ClientContext& ctx) const {
  ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
  ctx.set_wait_for_ready(false);
}

bool isUnreachable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

absl::Status fromGrpc(const grpc::Status& status, std::string_view method) {
  const std::string msg = cat("sluiced ", method, ": ", status.error_message());
  ErrorCode code = ErrorCode::kInternal;
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    // The port table is full: another pod's DEL may free a slot.
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      code = ErrorCode::kTryAgainLater;
      break;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::UNIMPLEMENTED:
    // An SR-IOV deviceID that names no VF of sluiced's pools.
    case grpc::StatusCode::NOT_FOUND:
      code = ErrorCode::kInvalidConfig;
      break;
    case grpc::StatusCode::ALREADY_EXISTS:
      code = ErrorCode::kConflict;
      break;
    default:
      code = ErrorCode::kInternal;
      break;
  }
  // Keep the gRPC code as the status code (the numbering is the same) so
  // callers can ask isUnreachable().
  return withStatusCode(cniError(code, msg), static_cast<absl::StatusCode>(status.error_code()));
}

absl::Status DataplaneClient::finish(const grpc::Status& status, std::string_view method) {
  absl::Status s = fromGrpc(status, method);
  if (!isUnreachable(s)) answered_ = true;
  return s;
}

absl::StatusOr<v1::AddPortResponse> DataplaneClient::addPort(const v1::AddPortRequest& req) {
  grpc::ClientContext ctx;
  prepare(ctx);
  v1::AddPortResponse resp;
  grpc::Status st = stub_->AddPort(&ctx, req, &resp);
  if (absl::Status s = finish(st, "AddPort"); !s.ok()) return s;
  return resp;
}

absl::StatusOr<bool> DataplaneClient::deletePort(const v1::Attachment& attachment) {
  grpc::ClientContext ctx;
  prepare(ctx);
  v1::DeletePortRequest req;
  *req.mutable_attachment() = attachment;
  v1::DeletePortResponse resp;
  grpc::Status st = stub_->DeletePort(&ctx, req, &resp);
  if (absl::Status s = finish(st, "DeletePort"); !s.ok()) return s;
  return resp.deleted();
}

absl::StatusOr<std::vector<v1::Port>> DataplaneClient::listPorts() {
  grpc::ClientContext ctx;
  prepare(ctx);
  v1::ListPortsRequest req;
  v1::ListPortsResponse resp;
  grpc::Status st = stub_->ListPorts(&ctx, req, &resp);
  if (absl::Status s = finish(st, "ListPorts"); !s.ok()) return s;
  return std::vector<v1::Port>(resp.ports().begin(), resp.ports().end());
}

absl::StatusOr<v1::HealthResponse> DataplaneClient::health() {
  grpc::ClientContext ctx;
  prepare(ctx);
  v1::HealthRequest req;
  v1::HealthResponse resp;
  grpc::Status st = stub_->Health(&ctx, req, &resp);
  if (absl::Status s = finish(st, "Health"); !s.ok()) return s;
  return resp;
}

}  // namespace sluice::cni
