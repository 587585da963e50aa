#include "agent/sluiced_client.h"

namespace sluice::agent {
namespace {

std::shared_ptr<grpc::Channel> channelTo(const std::string& socket) {
  grpc::ChannelArguments args;
  // gRPC's own reconnect backoff grows to two minutes; a sluiced restart
  // takes seconds, and the table should be reconciled soon after it.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  return grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

SluicedClient::SluicedClient(const std::string& socket, std::chrono::milliseconds deadline)
    : deadline_(deadline),
      channel_(channelTo(socket)),
      stub_(v1::RemoteNodes::NewStub(channel_)),
      ports_stub_(v1::Dataplane::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientContext> SluicedClient::context() const {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + deadline_);
  return c;
}

grpc::Status SluicedClient::listNodes(v1::ListNodesResponse* out) {
  return stub_->ListNodes(context().get(), v1::ListNodesRequest{}, out);
}

grpc::Status SluicedClient::applyNodes(const v1::ApplyNodesRequest& req, v1::ApplyNodesResponse* out) {
  return stub_->ApplyNodes(context().get(), req, out);
}

grpc::Status SluicedClient::report(const v1::ControllerState& state, v1::ReportControllerResponse* out) {
  v1::ReportControllerRequest req;
  *req.mutable_state() = state;
  return stub_->ReportController(context().get(), req, out);
}

grpc::Status SluicedClient::listPorts(v1::ListPortsResponse* out) {
  return ports_stub_->ListPorts(context().get(), v1::ListPortsRequest{}, out);
}

}  // namespace sluice::agent
