// The sluice.v1.Dataplane client used by sluice-cni: one call per method,
// each with the network config's deadline, and every failure turned into a
// CNI error value. UNAVAILABLE and DEADLINE_EXCEEDED (sluiced not running,
// restarting or too busy to answer) become code 11 "try again later" and keep
// their gRPC code as the status code, so DEL can tell "sluiced is down" from
// "sluiced said no". Used by the single thread of the sluice-cni process.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice::cni {

class DataplaneClient {
 public:
  // Does not connect yet; the first call does (and fails fast if nobody
  // listens on the socket: calls are not wait-for-ready).
  DataplaneClient(const std::string& socket_path, std::chrono::milliseconds timeout);
  // Parks the channel for the rest of the process instead of tearing gRPC
  // down (see the .cc: teardown was a large share of an ADD's latency).
  ~DataplaneClient();
  DataplaneClient(const DataplaneClient&) = delete;
  DataplaneClient& operator=(const DataplaneClient&) = delete;

  absl::StatusOr<v1::AddPortResponse> addPort(const v1::AddPortRequest& req);
  // True when a port was deleted; false when sluiced knew no such attachment.
  absl::StatusOr<bool> deletePort(const v1::Attachment& attachment);
  absl::StatusOr<std::vector<v1::Port>> listPorts();
  absl::StatusOr<v1::HealthResponse> health();

  // True once sluiced has answered a call (with success or a refusal): it
  // is up, so deferred work that needs it (pending deletes) may be tried.
  bool answered() const { return answered_; }

 private:
  void prepare(grpc::ClientContext& ctx) const;
  // fromGrpc(), noting whether sluiced answered.
  absl::Status finish(const grpc::Status& status, std::string_view method);

  std::string target_;                 // "unix:<path>"
  std::chrono::milliseconds timeout_;  // per call
  std::unique_ptr<v1::Dataplane::Stub> stub_;
  bool answered_ = false;  // see answered()
};

// True for a status that means sluiced could not be reached or did not
// answer in time (as opposed to an answer that refused the request).
bool isUnreachable(const absl::Status& status);

// gRPC status → CNI error (exposed for tests).
absl::Status fromGrpc(const grpc::Status& status, std::string_view method);

}  // namespace sluice::cni
