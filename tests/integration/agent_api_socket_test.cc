// The node controller's socket (agent-api-socket) on a real sluiced: it is
// a 0660 socket of the configured group, serves exactly the calls
// sluice-agent makes (answered as on the main socket) and refuses the rest
// with PERMISSION_DENIED; the main socket stays root's alone.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "sluice/v1/dataplane.grpc.pb.h"
#include "sluice/v1/observe.grpc.pb.h"
#include "sluice/v1/overlay.grpc.pb.h"
#include "tests/integration/sluiced_process.h"

namespace sluice::test {
namespace {

// Any group will do: the socket's group is a number, not a name.
constexpr gid_t kAgentGroup = 4321;

std::unique_ptr<grpc::ClientContext> deadline() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return c;
}

class AgentApiSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    agent_socket_ = ::testing::TempDir() + "sluice-agent-" + std::to_string(::getpid()) + ".sock";
    SluicedOptions o;
    o.extra_flags = {"--agent-api-socket", agent_socket_, "--agent-api-gid", std::to_string(kAgentGroup)};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    // sluiced serves the agent's socket right after the main one (through
    // which its calls pass), so it may appear just after Health is ready.
    struct stat st {};
    ASSERT_TRUE(waitFor([&] { return ::stat(agent_socket_.c_str(), &st) == 0; })) << node_->log();
    agent_channel_ = grpc::CreateChannel("unix:" + agent_socket_, grpc::InsecureChannelCredentials());
  }
  void TearDown() override {
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  std::unique_ptr<SluicedProcess> node_;
  std::string agent_socket_;
  std::shared_ptr<grpc::Channel> agent_channel_;
};

TEST_F(AgentApiSocketTest, SocketIsGroupOwned0660AndTheMainOneStays0600) {
  struct stat agent {}, main {};
  ASSERT_EQ(::stat(agent_socket_.c_str(), &agent), 0);
  EXPECT_TRUE(S_ISSOCK(agent.st_mode));
  EXPECT_EQ(agent.st_mode & 07777, 0660u);
  EXPECT_EQ(agent.st_uid, 0u);
  EXPECT_EQ(agent.st_gid, kAgentGroup);
  ASSERT_EQ(::stat(node_->apiSocket().c_str(), &main), 0);
  EXPECT_EQ(main.st_mode & 07777, 0600u);
  EXPECT_EQ(main.st_uid, 0u);
  EXPECT_EQ(main.st_gid, 0u);
}

TEST_F(AgentApiSocketTest, RefusesWhatTheAgentDoesNotCall) {
  auto dataplane = v1::Dataplane::NewStub(agent_channel_);
  auto observe = v1::Observe::NewStub(agent_channel_);
  auto nodes = v1::RemoteNodes::NewStub(agent_channel_);
  v1::AddPortResponse added;
  grpc::Status s = dataplane->AddPort(deadline().get(), portRequest("pod-a", "10.250.0.10"), &added);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_NE(s.error_message().find("/sluice.v1.Dataplane/AddPort is not served on the node controller's socket"),
            std::string::npos)
      << s.error_message();
  v1::SetConfigRequest set;
  set.set_key("upcall-rate");
  set.set_value("1");
  v1::SetConfigResponse set_response;
  EXPECT_EQ(dataplane->SetConfig(deadline().get(), set, &set_response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::CaptureRequest capture;
  capture.set_port_no(0);
  auto ctx = deadline();
  auto reader = observe->Capture(ctx.get(), capture);
  v1::CapturedPacket packet;
  EXPECT_FALSE(reader->Read(&packet));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  v1::AddNodeRequest add_node;
  v1::AddNodeResponse add_node_response;
  EXPECT_EQ(nodes->AddNode(deadline().get(), add_node, &add_node_response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Nothing of the refused calls happened: no port, the setting unchanged.
  EXPECT_EQ(node_->ports().ports_size(), 0);
  v1::GetConfigRequest get;
  get.set_key("upcall-rate");
  v1::GetConfigResponse got;
  ASSERT_TRUE(node_->api().GetConfig(deadline().get(), get, &got).ok());
  ASSERT_EQ(got.settings_size(), 1);
  EXPECT_NE(got.settings(0).value(), "1");
}

TEST_F(AgentApiSocketTest, ServesTheAgentsCallsAsTheMainSocketDoes) {
  v1::AddPortResponse added;
  ASSERT_TRUE(node_->addPort(portRequest("pod-a", "10.250.0.10"), &added).ok());
  auto dataplane = v1::Dataplane::NewStub(agent_channel_);
  auto nodes = v1::RemoteNodes::NewStub(agent_channel_);
  v1::ListPortsResponse ports;
  ASSERT_TRUE(dataplane->ListPorts(deadline().get(), {}, &ports).ok());
  EXPECT_EQ(ports.SerializeAsString(), node_->ports().SerializeAsString());
  ASSERT_EQ(ports.ports_size(), 1);
  EXPECT_EQ(ports.ports(0).port_no(), added.port().port_no());

  // This node has no uplink, so the RemoteNodes calls are refused by the
  // service itself: whatever it answers, it answers both sockets alike
  // (status and message), and never PERMISSION_DENIED.
  auto same = [](const grpc::Status& agent, const grpc::Status& main) {
    EXPECT_NE(agent.error_code(), grpc::StatusCode::PERMISSION_DENIED) << agent.error_message();
    EXPECT_EQ(agent.error_code(), main.error_code()) << agent.error_message();
    EXPECT_EQ(agent.error_message(), main.error_message());
  };
  v1::ListNodesResponse via_agent, via_main;
  same(nodes->ListNodes(deadline().get(), {}, &via_agent),
       node_->remoteNodes().ListNodes(deadline().get(), {}, &via_main));
  EXPECT_EQ(via_agent.SerializeAsString(), via_main.SerializeAsString());
  v1::ApplyNodesRequest apply;
  apply.add_ops()->set_remove("node-b");
  v1::ApplyNodesResponse applied_agent, applied_main;
  same(nodes->ApplyNodes(deadline().get(), apply, &applied_agent),
       node_->remoteNodes().ApplyNodes(deadline().get(), apply, &applied_main));
  v1::ReportControllerRequest report;
  report.mutable_state()->set_node_name("node-a");
  v1::ReportControllerResponse reported_agent, reported_main;
  same(nodes->ReportController(deadline().get(), report, &reported_agent),
       node_->remoteNodes().ReportController(deadline().get(), report, &reported_main));
}

}  // namespace
}  // namespace sluice::test
