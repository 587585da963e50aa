// The node controller's socket on its own (no EAL, a stand-in service): the
// agent's calls reach the main server and come back as it answered them;
// any other call is refused before it reaches a service.
#include "dataplane/api/agent_api_gateway.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include "dataplane/api/api_server.h"
#include "sluice/v1/dataplane.grpc.pb.h"
#include "sluice/v1/overlay.grpc.pb.h"

namespace sluice {
namespace {

// Answers ListPorts with one port and GetStats with an error; counts every
// call that reaches it.
class StandInDataplane : public v1::Dataplane::Service {
 public:
  grpc::Status ListPorts(grpc::ServerContext*, const v1::ListPortsRequest*, v1::ListPortsResponse* out) override {
    ++calls;
    out->add_ports()->set_port_no(7);
    return grpc::Status::OK;
  }
  grpc::Status AddPort(grpc::ServerContext*, const v1::AddPortRequest*, v1::AddPortResponse*) override {
    ++calls;
    return grpc::Status::OK;
  }
  std::atomic<int> calls{0};
};

class AgentApiGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/agent-gateway-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    main_ = startApiServer(dir_ + "/api.sock", {&service_}, peers_);
    ASSERT_TRUE(main_.ok()) << main_.status();
    gateway_ = std::make_unique<AgentApiGateway>((*main_)->grpc().InProcessChannel(grpc::ChannelArguments()));
    agent_ = startAgentApiServer(dir_ + "/agent.sock", 4321, *gateway_, peers_);
    ASSERT_TRUE(agent_.ok()) << agent_.status();
    stub_ = v1::Dataplane::NewStub(
        grpc::CreateChannel("unix:" + dir_ + "/agent.sock", grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (agent_.ok()) (*agent_)->shutdown(std::chrono::system_clock::now());
    if (main_.ok()) (*main_)->shutdown(std::chrono::system_clock::now());
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  StandInDataplane service_;
  PeerCredentials peers_;
  absl::StatusOr<std::unique_ptr<ApiServer>> main_;
  std::unique_ptr<AgentApiGateway> gateway_;
  absl::StatusOr<std::unique_ptr<ApiServer>> agent_;
  std::unique_ptr<v1::Dataplane::Stub> stub_;
};

TEST_F(AgentApiGatewayTest, TheSocketIsGroupOwned0660) {
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/agent.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, 4321u);
}

TEST_F(AgentApiGatewayTest, PassesTheAgentsCallsOnAndRefusesTheRest) {
  grpc::ClientContext list_ctx;
  v1::ListPortsResponse ports;
  ASSERT_TRUE(stub_->ListPorts(&list_ctx, {}, &ports).ok());
  ASSERT_EQ(ports.ports_size(), 1);
  EXPECT_EQ(ports.ports(0).port_no(), 7u);
  EXPECT_EQ(service_.calls.load(), 1);
  // An agent's call the main server does not serve (no RemoteNodes here):
  // the main server's own answer, passed back.
  auto nodes = v1::RemoteNodes::NewStub(
      grpc::CreateChannel("unix:" + dir_ + "/agent.sock", grpc::InsecureChannelCredentials()));
  grpc::ClientContext nodes_ctx;
  v1::ListNodesResponse listed;
  EXPECT_EQ(nodes->ListNodes(&nodes_ctx, {}, &listed).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  // Not an agent's call: refused.
  grpc::ClientContext stats_ctx;
  v1::GetStatsResponse stats;
  EXPECT_EQ(stub_->GetStats(&stats_ctx, {}, &stats).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::ClientContext add_ctx;
  v1::AddPortResponse added;
  const grpc::Status refused = stub_->AddPort(&add_ctx, {}, &added);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(refused.error_message(),
            "/sluice.v1.Dataplane/AddPort is not served on the node controller's socket (agent-api-socket); it serves "
            "only what sluice-agent calls");
  EXPECT_EQ(service_.calls.load(), 1) << "a refused call reached the service";
}

TEST(AgentApiMethods, AreExactlyTheAgentsCalls) {
  EXPECT_TRUE(isAgentApiMethod("/sluice.v1.RemoteNodes/ApplyNodes"));
  EXPECT_TRUE(isAgentApiMethod("/sluice.v1.Dataplane/ListPorts"));
  EXPECT_FALSE(isAgentApiMethod("/sluice.v1.RemoteNodes/AddNode"));
  EXPECT_FALSE(isAgentApiMethod("/sluice.v1.Dataplane/ListPorts/"));
  EXPECT_FALSE(isAgentApiMethod(""));
}

}  // namespace
}  // namespace sluice
