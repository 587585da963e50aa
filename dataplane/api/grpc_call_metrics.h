// Counts and times the gRPC calls sluiced serves (the CNI plugin's AddPort
// and DeletePort, sluicectl's, the node controller's), per method and status
// code, for the metrics endpoint. A server interceptor records each call as
// its status is sent; the endpoint reads a copy. API threads and the metrics
// thread; one mutex, held for a map update or a copy (never across I/O).
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace sluice {

// Upper bounds (seconds) of the latency histogram's buckets; +Inf follows.
inline constexpr std::array<double, 14> kGrpcLatencyBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                               0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};

struct GrpcMethodLatency {
  std::array<uint64_t, kGrpcLatencyBuckets.size()> buckets{};  // cumulative: calls at or under each bound
  uint64_t count = 0;
  double sum_seconds = 0;
};

struct GrpcCallSnapshot {
  // (method, status code name) -> calls
  std::map<std::pair<std::string, std::string>, uint64_t> handled;
  std::map<std::string, GrpcMethodLatency> latency;
};

class GrpcCallMetrics {
 public:
  // Method names come from clients (an unknown one is answered
  // UNIMPLEMENTED, but it is still a call): past this many distinct names
  // the rest are counted as "other", so the label set stays bounded.
  static constexpr size_t kMaxMethods = 64;

  void record(const std::string& method, int status_code, double seconds);
  GrpcCallSnapshot snapshot() const;

 private:
  mutable std::mutex mu_;
  GrpcCallSnapshot data_;
};

// The gRPC status code's canonical name ("OK", "INVALID_ARGUMENT", ...).
std::string grpcCodeName(int code);

// The interceptor factory to register with the server builder.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> makeGrpcCallMetricsInterceptor(
    GrpcCallMetrics& metrics);

}  // namespace sluice
