#include "dataplane/api/agent_api_gateway.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <string>

#include "common/thread_sanitizer.h"

namespace sluice {
namespace {

// gRPC runs a reactor's callbacks on its threads one after another, ordered
// by synchronisation inside libgrpc, which is not built with ThreadSanitizer:
// each callback states that order (acquire on entry, release on leaving) so
// that the reactor's members, written by one callback and read by the next,
// are not reported as races. Nothing without TSan.
class CallbackTurn {
 public:
  explicit CallbackTurn(const void* reactor) : reactor_(reactor) { tsanAcquire(reactor_); }
  ~CallbackTurn() { tsanRelease(reactor_); }
  CallbackTurn(const CallbackTurn&) = delete;
  CallbackTurn& operator=(const CallbackTurn&) = delete;

 private:
  const void* reactor_;
};

class Refuse : public grpc::ServerGenericBidiReactor {
 public:
  explicit Refuse(const std::string& method) {
    const CallbackTurn turn(this);
    Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, " is not served on the node controller's socket (agent-api-socket); ",
                                     "it serves only what sluice-agent calls")));
  }
  void OnDone() override {
    tsanAcquire(this);
    delete this;
  }
};

// One unary call: its request read, sent to the main server, the answer
// (message and status) written back as it came.
class Forward : public grpc::ServerGenericBidiReactor {
 public:
  Forward(grpc::GenericCallbackServerContext* ctx, grpc::GenericStub& stub) : ctx_(ctx), stub_(stub) {
    const CallbackTurn turn(this);
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    const CallbackTurn turn(this);
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call sent no request message"));
      return;
    }
    // The caller's deadline and cancellation carry over to the inner call.
    client_ = grpc::ClientContext::FromCallbackServerContext(*ctx_);
    stub_.UnaryCall(client_.get(), ctx_->method(), grpc::StubOptions(), &request_, &response_,
                    [this](grpc::Status status) {
                      const CallbackTurn answer_turn(this);
                      if (status.ok()) StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
                      else Finish(status);
                    });
  }
  void OnDone() override {
    tsanAcquire(this);
    delete this;
  }

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
