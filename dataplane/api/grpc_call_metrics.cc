#include "dataplane/api/grpc_call_metrics.h"

#include <chrono>

namespace sluice {
namespace {

constexpr std::array<const char*, 17> kCodeNames = {
    "OK",      "CANCELLED",         "UNKNOWN",        "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};

class CallTimer final : public grpc::experimental::Interceptor {
 public:
  CallTimer(GrpcCallMetrics& metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
      metrics_.record(method_, static_cast<int>(methods->GetSendStatus().error_code()), took.count());
    }
    methods->Proceed();
  }

 private:
  GrpcCallMetrics& metrics_;
  std::string method_;
  std::chrono::steady_clock::time_point start_;
};

class CallTimerFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallTimerFactory(GrpcCallMetrics& metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    return new CallTimer(metrics_, info->method() != nullptr ? info->method() : "");
  }

 private:
  GrpcCallMetrics& metrics_;
};

}  // namespace

std::string grpcCodeName(int code) {
  if (code >= 0 && static_cast<size_t>(code) < kCodeNames.size()) return kCodeNames[static_cast<size_t>(code)];
  return "CODE_" + std::to_string(code);
}

void GrpcCallMetrics::record(const std::string& method, int status_code, double seconds) {
  std::lock_guard lock(mu_);
  const std::string* name = &method;
  static const std::string kOther = "other";
  if (data_.latency.find(method) == data_.latency.end() && data_.latency.size() >= kMaxMethods) name = &kOther;
  ++data_.handled[{*name, grpcCodeName(status_code)}];
  GrpcMethodLatency& l = data_.latency[*name];
  for (size_t i = 0; i < kGrpcLatencyBuckets.size(); ++i)
    if (seconds <= kGrpcLatencyBuckets[i]) ++l.buckets[i];
  ++l.count;
  l.sum_seconds += seconds;
}

GrpcCallSnapshot GrpcCallMetrics::snapshot() const {
  std::lock_guard lock(mu_);
  return data_;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> makeGrpcCallMetricsInterceptor(
    GrpcCallMetrics& metrics) {
  return std::make_unique<CallTimerFactory>(metrics);
}

}  // namespace sluice
