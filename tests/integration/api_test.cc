// The gRPC API's validation against the real sluiced: every bad request gets
// its precise status code and changes nothing (no port, no socket file).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "tests/integration/sluiced_process.h"

namespace sluice::test {
namespace {

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    SluicedOptions o;
    o.max_ports = 2;
    node_ = SluicedProcess::start(o, &error).release();
    ASSERT_NE(node_, nullptr) << error;
  }
  static void TearDownTestSuite() {
    if (node_ != nullptr) {
      EXPECT_EQ(node_->stop(), 0);
    }
    delete node_;
    node_ = nullptr;
  }
  void TearDown() override {
    v1::ListPortsResponse list = node_->ports();
    for (const v1::Port& p : list.ports())
      node_->deletePort(p.attachment().container_id(), p.attachment().ifname());
  }

  // Expects `code`, and that the node's ports and socket files did not change.
  void expectRefused(const v1::AddPortRequest& req, grpc::StatusCode code, const std::string& mentions) {
    auto before_ports = node_->ports().ports_size();
    auto before_files = socketFiles();
    v1::AddPortResponse resp;
    grpc::Status s = node_->addPort(req, &resp);
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_NE(s.error_message().find(mentions), std::string::npos) << s.error_message();
    EXPECT_EQ(node_->ports().ports_size(), before_ports);
    EXPECT_EQ(socketFiles(), before_files);
  }

  static size_t socketFiles() {
    size_t n = 0;
    for (auto it = std::filesystem::recursive_directory_iterator(node_->socketDir());
         it != std::filesystem::recursive_directory_iterator(); ++it)
      ++n;
    return n;
  }

  static SluicedProcess* node_;
};
SluicedProcess* ApiTest::node_ = nullptr;

TEST_F(ApiTest, MalformedFieldsAreInvalidArgument) {
  auto req = portRequest("pod-1", "10.250.0.300");
  expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "ip");
  req = portRequest("pod-1", "10.250.0.10");
  req.set_mac("02:00:00:00:00");
  expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "mac");
  req = portRequest("pod-1", "10.250.0.10");
  req.set_mac("ff:ff:ff:ff:ff:ff");
  expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "mac");
  req = portRequest("pod-1", "10.250.0.10");
  req.set_pod_name("Not_A_Name");
  expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "pod_name");
}

TEST_F(ApiTest, NamesThatCouldEscapeTheSocketDirectoryAreInvalidArgument) {
  for (const std::string& bad : {std::string("../../etc"), std::string("a/b"), std::string(".."),
                                 std::string("x\0y", 3), std::string("")}) {
    auto req = portRequest("pod-1", "10.250.0.10");
    req.mutable_attachment()->set_ifname(bad);
    expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "ifname");
    req = portRequest(bad, "10.250.0.10");
    expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "container_id");
    if (bad.empty()) continue;
    req = portRequest("pod-1", "10.250.0.10");
    req.set_socket_subdir(bad);
    expectRefused(req, grpc::StatusCode::INVALID_ARGUMENT, "socket_subdir");
  }
}

TEST_F(ApiTest, AddressesThisNodeCannotServeAreFailedPrecondition) {
  expectRefused(portRequest("pod-1", "10.251.0.10"), grpc::StatusCode::FAILED_PRECONDITION, "pod CIDR");
  expectRefused(portRequest("pod-1", "10.250.0.1"), grpc::StatusCode::FAILED_PRECONDITION, "gateway");
}

TEST_F(ApiTest, SameAttachmentTwiceReturnsTheExistingPort) {
  v1::AddPortResponse first, second;
  ASSERT_TRUE(node_->addPort(portRequest("pod-1", "10.250.0.10"), &first).ok());
  ASSERT_TRUE(node_->addPort(portRequest("pod-1", "10.250.0.10"), &second).ok());
  EXPECT_TRUE(first.created());
  EXPECT_FALSE(second.created());
  EXPECT_EQ(first.port().port_no(), second.port().port_no());
  EXPECT_EQ(first.port().socket_path(), second.port().socket_path());
  expectRefused(portRequest("pod-1", "10.250.0.11"), grpc::StatusCode::ALREADY_EXISTS, "different parameters");
  expectRefused(portRequest("pod-2", "10.250.0.10"), grpc::StatusCode::ALREADY_EXISTS, "ip");
}

TEST_F(ApiTest, AFullPortTableIsResourceExhausted) {
  v1::AddPortResponse r;
  ASSERT_TRUE(node_->addPort(portRequest("pod-1", "10.250.0.10"), &r).ok());
  ASSERT_TRUE(node_->addPort(portRequest("pod-2", "10.250.0.11"), &r).ok());
  expectRefused(portRequest("pod-3", "10.250.0.12"), grpc::StatusCode::RESOURCE_EXHAUSTED, "full");
  // Freeing one makes room again, with the freed number.
  ASSERT_TRUE(node_->deletePort("pod-1", "net1").ok());
  ASSERT_TRUE(node_->addPort(portRequest("pod-3", "10.250.0.12"), &r).ok());
  EXPECT_EQ(r.port().port_no(), 0u);
}

TEST_F(ApiTest, DeletingAnUnknownAttachmentSucceeds) {
  v1::DeletePortResponse d;
  ASSERT_TRUE(node_->deletePort("never-added", "net1", &d).ok());
  EXPECT_FALSE(d.deleted());
  EXPECT_EQ(node_->deletePort("../x", "net1").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ApiTest, SriovWithoutVfPoolsIsAFailedPrecondition) {
  auto req = portRequest("pod-1", "10.250.0.10");
  req.set_type(v1::PORT_TYPE_SRIOV_VF);
  expectRefused(req, grpc::StatusCode::FAILED_PRECONDITION, "sriov-pools");
}

// Each feature serves its own service on the API socket; on a node without
// an uplink or VF pools the overlay's says so and the SR-IOV pool is empty.
// The core's deprecated copies of those calls answer exactly the same.
TEST_F(ApiTest, EachModuleServesItsOwnServiceAndTheDeprecatedCallsAnswerTheSame) {
  auto ctx = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return c;
  };
  v1::ListNodesResponse nodes;
  grpc::Status own = node_->remoteNodes().ListNodes(ctx().get(), {}, &nodes);
  EXPECT_EQ(own.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(own.error_message().find("no uplink"), std::string::npos) << own.error_message();
  grpc::Status old = node_->api().ListNodes(ctx().get(), {}, &nodes);
  EXPECT_EQ(old.error_code(), own.error_code());
  EXPECT_EQ(old.error_message(), own.error_message());

  v1::AddNodeRequest add;
  add.mutable_node()->set_name("b");
  add.mutable_node()->set_vtep("not-an-address");
  v1::AddNodeResponse added;
  grpc::Status bad = node_->remoteNodes().AddNode(ctx().get(), add, &added);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("vtep: 'not-an-address'"), std::string::npos) << bad.error_message();
  grpc::Status bad_old = node_->api().AddNode(ctx().get(), add, &added);
  EXPECT_EQ(bad_old.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad_old.error_message(), bad.error_message());

  v1::ListVfsResponse vfs;
  ASSERT_TRUE(node_->sriov().ListVfs(ctx().get(), {}, &vfs).ok());
  EXPECT_EQ(vfs.vfs_size(), 0);
  ASSERT_TRUE(node_->api().ListVfs(ctx().get(), {}, &vfs).ok());
  EXPECT_EQ(vfs.vfs_size(), 0);

  // Offload is off here: GetStats has no offload part, and sluiced's log
  // names the features it runs.
  EXPECT_FALSE(node_->stats().has_offload());
  EXPECT_NE(node_->log().find("features: overlay sriov"), std::string::npos) << node_->log();
}

TEST_F(ApiTest, TheApiSocketIsOwnerOnly) {
  auto perms = std::filesystem::status(node_->apiSocket()).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(ApiTest, HealthDescribesTheNode) {
  grpc::ClientContext ctx;
  v1::HealthResponse h;
  ASSERT_TRUE(node_->api().Health(&ctx, {}, &h).ok());
  EXPECT_TRUE(h.ready());
  EXPECT_EQ(h.pod_cidr(), "10.250.0.0/24");
  EXPECT_EQ(h.gateway(), "10.250.0.1");
  EXPECT_EQ(h.pod_cidr_v6(), "") << "no pod-cidr-v6";
  EXPECT_EQ(h.max_ports(), 2u);
  EXPECT_EQ(h.pmds(), 1u);
}

}  // namespace
}  // namespace sluice::test

namespace sluice::test {
namespace {

// sluicectl is the operator's view of the same API: same calls, exit codes.
TEST_F(ApiTest, SluicectlDrivesTheSameApi) {
  std::string sock = node_->apiSocket();
  CommandResult add = sluicectl(sock, "port add --container-id ctl-pod --ifname net1 --ip 10.250.0.20");
  EXPECT_EQ(add.exit_code, 0) << add.output;
  EXPECT_NE(add.output.find("created"), std::string::npos);
  CommandResult ports = sluicectl(sock, "--json ports");
  EXPECT_EQ(ports.exit_code, 0);
  EXPECT_NE(ports.output.find("\"ip\": \"10.250.0.20\""), std::string::npos) << ports.output;
  CommandResult stats = sluicectl(sock, "stats");
  EXPECT_EQ(stats.exit_code, 0);
  EXPECT_NE(stats.output.find("cycles per packet"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("ctl-pod/net1"), std::string::npos) << stats.output;
  CommandResult bad = sluicectl(sock, "port add --container-id ../x --ifname net1 --ip 10.250.0.21");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("INVALID_ARGUMENT"), std::string::npos) << bad.output;
  EXPECT_EQ(sluicectl(sock, "health").exit_code, 0);
  EXPECT_EQ(sluicectl(sock, "--json health").exit_code, 0);
  EXPECT_EQ(sluicectl(sock, "port del --container-id ctl-pod --ifname net1").exit_code, 0);
  EXPECT_EQ(sluicectl(sock, "frobnicate").exit_code, 2);
  EXPECT_EQ(sluicectl(node_->dir() + "/absent.sock", "--timeout 500 health").exit_code, 3);
}

}  // namespace
}  // namespace sluice::test
