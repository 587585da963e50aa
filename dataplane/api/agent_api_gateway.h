// What the node controller (sluice-agent) may call, on its own socket
// (agent-api-socket): the remote-node table, its report and the port
// listing, nothing that adds ports, captures traffic or changes settings.
// Each allowed call is passed on unchanged to the main server through an
// in-process channel (so it is served, counted and timed exactly as on the
// main socket); every other method is answered PERMISSION_DENIED without
// reaching a service. gRPC's callback threads; holds no state of its own.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <array>
#include <memory>
#include <string_view>

namespace sluice {

// The full gRPC method names the agent calls (agent/sluiced_client.cc).
inline constexpr std::array<std::string_view, 4> kAgentApiMethods = {
    "/sluice.v1.RemoteNodes/ListNodes",
    "/sluice.v1.RemoteNodes/ApplyNodes",
    "/sluice.v1.RemoteNodes/ReportController",
    "/sluice.v1.Dataplane/ListPorts",
};

bool isAgentApiMethod(std::string_view method);

class AgentApiGateway : public grpc::CallbackGenericService {
 public:
  // `main_server`: an in-process channel to the server of the main socket.
  explicit AgentApiGateway(std::shared_ptr<grpc::Channel> main_server) : stub_(std::move(main_server)) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  grpc::GenericStub stub_;
};

}  // namespace sluice
