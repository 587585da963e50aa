// How DataplaneControl names ports' sockets, without EAL (a recording backend,
// a fake PMD): an interface name Linux allows (Multus's "net@1") can be added
// and deleted, a port checkpointed under the socket name of an older sluiced
// comes back on that socket, and two ports never share one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "dataplane/core/checkpoint.h"
#include "dataplane/core/dataplane_control.h"
#include "tests/support/fake_control.h"

namespace sluice {
namespace {

class PortNamingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/port-naming-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.pod_cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    config_.gateway = *Ipv4Address::parse("10.244.1.1");
    config_.max_ports = 4;
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_.context},
                                                  2'600'000'000);
    control_->start();
    pmd_.start();
  }
  void TearDown() override {
    control_->removeAllPorts();
    pmd_.stop();
    std::filesystem::remove_all(dir_);
  }

  static RawPortRequest request(const std::string& id, const std::string& ifname, const std::string& ip) {
    RawPortRequest r;
    r.container_id = id;
    r.ifname = ifname;
    r.ip = ip;
    return r;
  }

  // The sockets the backend was asked to open, in order.
  std::vector<std::string> backendSockets() const {
    std::vector<std::string> out;
    for (const test::FakePortBackend::Created& c : backend_.created) out.push_back(c.socket_path);
    return out;
  }

  std::string dir_;
  SluicedConfig config_;
  test::FakePortBackend backend_;
  test::AckingPmd pmd_;
  std::unique_ptr<DataplaneControl> control_;
};

TEST_F(PortNamingTest, AMultusStyleInterfaceNameIsAddedAndDeleted) {
  auto added = control_->addPort(request("0123456789abcdef0123", "net@1", "10.244.1.10"));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->port.socket_path, dir_ + "/0123456789ab-209b70f2f9c550c9-net%401.sock");
  EXPECT_EQ(backendSockets(), std::vector<std::string>{added->port.socket_path});
  auto deleted = control_->deletePort({"0123456789abcdef0123", "net@1"});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(*deleted);
  EXPECT_TRUE(control_->listPorts().empty());
}

TEST_F(PortNamingTest, ContainersSharingAPrefixGetTheirOwnSockets) {
  auto a = control_->addPort(request("0123456789abcdef0123", "net1", "10.244.1.10"));
  auto b = control_->addPort(request("0123456789abcdef0124", "net1", "10.244.1.11"));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->port.socket_path, b->port.socket_path);
}

CheckpointPort checkpointed(uint16_t port_no, const std::string& id, const std::string& ip,
                            const std::string& socket_path) {
  CheckpointPort p;
  p.port_no = port_no;
  p.request.container_id = id;
  p.request.ifname = "net1";
  p.request.ip = ip;
  p.socket_path = socket_path;
  return p;
}

TEST_F(PortNamingTest, APortCheckpointedUnderTheOldNameComesBackOnItsSocket) {
  CheckpointState state;
  const std::string legacy = dir_ + "/0123456789ab-net1.sock";
  state.ports.push_back(checkpointed(2, "0123456789abcdef0123", "10.244.1.10", legacy));
  // Neither the old nor the new name of this port.
  state.ports.push_back(checkpointed(3, "fedcba9876543210", "10.244.1.11", dir_ + "/fedcba987654-net2.sock"));
  const RestoreSummary summary = control_->restore(state);
  EXPECT_EQ(summary.restored, 1u);
  EXPECT_EQ(summary.dropped, 1u);
  EXPECT_EQ(backendSockets(), std::vector<std::string>{legacy});
  const std::vector<PortView> ports = control_->listPorts();
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].port_no, 2);
  EXPECT_EQ(ports[0].socket_path, legacy);
  // Adding the same attachment again is the same port, on the same socket.
  auto again = control_->addPort(request("0123456789abcdef0123", "net1", "10.244.1.10"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->port.socket_path, legacy);
}

TEST_F(PortNamingTest, TwoPortsNeverShareASocket) {
  // Two pods given one socket subdir: the second is refused rather than
  // unlinking the first one's socket.
  RawPortRequest first = request("pod-a", "net1", "10.244.1.10"), second = request("pod-b", "net1", "10.244.1.11");
  first.socket_subdir = second.socket_subdir = "shared";
  ASSERT_TRUE(control_->addPort(first).ok());
  auto clash = control_->addPort(second);
  EXPECT_EQ(clash.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(clash.status().message(), "socket " + dir_ + "/shared/net1.sock belongs to port 0");
  EXPECT_EQ(backendSockets().size(), 1u);
}

}  // namespace
}  // namespace sluice
