#include "dataplane/api/agent_api_gateway.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <string>

namespace sluice {
namespace {

class Refuse : public grpc::ServerGenericBidiReactor {
 public:
  explicit Refuse(const std::string& method) {
    Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, " is not served on the node controller's socket (agent-api-socket); ",
                                     "it serves only what sluice-agent calls")));
  }
  void OnDone() override { delete this; }
};

// One unary call: its request read, sent to the main server, the answer
// (message and status) written back as it came.
class Forward : public grpc::ServerGenericBidiReactor {
 public:
  Forward(grpc::GenericCallbackServerContext* ctx, grpc::GenericStub& stub) : ctx_(ctx), stub_(stub) {
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call sent no request message"));
      return;
    }
    // The caller's deadline and cancellation carry over to the inner call.
    client_ = grpc::ClientContext::FromCallbackServerContext(*ctx_);
    stub_.UnaryCall(client_.get(), ctx_->method(), grpc::StubOptions(), &request_, &response_,
                    [this](grpc::Status status) {
                      if (status.ok()) StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
                      else Finish(status);
                    });
  }
  void OnDone() override { delete this; }

 private:
  grpc::GenericCallbackServerContext* ctx_;
  grpc::GenericStub& stub_;
  std::unique_ptr<grpc::ClientContext> client_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

}  // namespace

bool isAgentApiMethod(std::string_view method) {
  return std::find(kAgentApiMethods.begin(), kAgentApiMethods.end(), method) != kAgentApiMethods.end();
}

grpc::ServerGenericBidiReactor* AgentApiGateway::CreateReactor(grpc::GenericCallbackServerContext* ctx) {
  if (!isAgentApiMethod(ctx->method())) return new Refuse(ctx->method());
  return new Forward(ctx, stub_);
}

}  // namespace sluice
