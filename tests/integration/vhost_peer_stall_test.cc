// A vhost-user peer that misbehaves against the real sluiced, in both modes:
// one that sends a message header and withholds the payload holds neither
// the other pods' connections, nor DeletePort of its own port, nor Health
// (sluiced's sockets time out the read and the port's socket is unregistered
// off the control path); and a port serves one connection at a time.
// Every wait is on a condition or an RPC deadline, so the old behaviour
// fails with a clear error instead of hanging the test.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/vhost_user_peer.h"

namespace sluice::test {
namespace {

// Each wait for sluiced: far beyond the one-second socket timeout it
// depends on, far below the test's own timeout.
constexpr std::chrono::seconds kAnswer{5};
// sluiced's client-mode ports retry connecting every second.
constexpr std::chrono::seconds kConnected{10};

class VhostPeerStallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    node_ = SluicedProcess::start({}, &error);
    ASSERT_NE(node_, nullptr) << error;
  }

  // AddPort; the port's socket path.
  std::string add(const std::string& pod, const std::string& ip, v1::VhostMode mode) {
    v1::AddPortResponse resp;
    const grpc::Status s = node_->addPort(portRequest(pod, ip, mode), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.port().socket_path();
  }

  grpc::Status deleteWithinDeadline(const std::string& pod, v1::DeletePortResponse* resp) {
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + kAnswer);
    v1::DeletePortRequest req;
    req.mutable_attachment()->set_container_id(pod);
    req.mutable_attachment()->set_ifname("net1");
    return node_->api().DeletePort(&c, req, resp);
  }

  grpc::Status healthWithinDeadline() {
    grpc::ClientContext c;
    c.set_deadline(std::chrono::system_clock::now() + kAnswer);
    v1::HealthResponse h;
    return node_->api().Health(&c, {}, &h);
  }

  // (ii) and (iii): the stalled pod's port is deleted and the node answers.
  void expectDeleteAndHealthAnswered(const std::string& pod) {
    v1::DeletePortResponse deleted;
    const grpc::Status d = deleteWithinDeadline(pod, &deleted);
    EXPECT_TRUE(d.ok()) << "DeletePort of the stalled pod's port: " << d.error_message();
    EXPECT_TRUE(deleted.deleted());
    const grpc::Status h = healthWithinDeadline();
    EXPECT_TRUE(h.ok()) << "Health: " << h.error_message();
    EXPECT_EQ(node_->ports().ports_size(), 1);
  }

  std::unique_ptr<SluicedProcess> node_;
};

TEST_F(VhostPeerStallTest, ServerModeAWithheldPayloadStallsNeitherAnotherPodNorDeletePortNorHealth) {
  const std::string a_path = add("pod-a", "10.250.0.10", v1::VHOST_MODE_SERVER);
  auto a = VhostUserPeer::connectTo(a_path);
  ASSERT_TRUE(a.has_value()) << a_path;
  // SET_FEATURES announcing its 8 bytes, which never come.
  ASSERT_TRUE(a->sendHeader(kVhostUserSetFeatures, kVhostUserVersion, 8));

  // (i) Another pod connects and is answered.
  const std::string b_path = add("pod-b", "10.250.0.11", v1::VHOST_MODE_SERVER);
  auto b = VhostUserPeer::connectTo(b_path);
  ASSERT_TRUE(b.has_value()) << b_path;
  EXPECT_TRUE(b->getFeatures(kAnswer).has_value()) << "pod B's GET_FEATURES was not answered; log:\n" << node_->log();
  // The stalled read timed out and the library dropped that connection.
  EXPECT_TRUE(a->closedWithin(kAnswer));

  expectDeleteAndHealthAnswered("pod-a");
  // The same attachment again (the same socket): refused as retryable only
  // while the old registration is being unregistered, then made.
  grpc::Status last;
  waitFor([&] {
    v1::AddPortResponse resp;
    last = node_->addPort(portRequest("pod-a", "10.250.0.10", v1::VHOST_MODE_SERVER), &resp);
    return last.error_code() != grpc::StatusCode::UNAVAILABLE;
  });
  EXPECT_TRUE(last.ok()) << "AddPort on the deleted port's socket: " << last.error_message();
}

TEST_F(VhostPeerStallTest, ClientModeAWithheldPayloadStallsNeitherAnotherPodNorDeletePortNorHealth) {
  // The pods listen (as virtio_user server=1 does); sluiced connects.
  const std::string a_path = add("pod-a", "10.250.0.10", v1::VHOST_MODE_CLIENT);
  auto a_listener = VhostUserPeer::listenAt(a_path);
  ASSERT_TRUE(a_listener.has_value()) << a_path;
  auto a = a_listener->accept(kConnected);
  ASSERT_TRUE(a.has_value()) << "sluiced never connected to " << a_path;
  ASSERT_TRUE(a->sendHeader(kVhostUserSetFeatures, kVhostUserVersion, 8));

  const std::string b_path = add("pod-b", "10.250.0.11", v1::VHOST_MODE_CLIENT);
  auto b_listener = VhostUserPeer::listenAt(b_path);
  ASSERT_TRUE(b_listener.has_value()) << b_path;
  auto b = b_listener->accept(kConnected);
  ASSERT_TRUE(b.has_value()) << "sluiced never connected to " << b_path;
  EXPECT_TRUE(b->getFeatures(kAnswer).has_value()) << "pod B's GET_FEATURES was not answered; log:\n" << node_->log();
  EXPECT_TRUE(a->closedWithin(kAnswer));

  expectDeleteAndHealthAnswered("pod-a");
}

TEST_F(VhostPeerStallTest, AServerModePortServesOneConnectionAndClosesAnyOther) {
  const std::string path = add("pod-a", "10.250.0.10", v1::VHOST_MODE_SERVER);
  auto first = VhostUserPeer::connectTo(path);
  ASSERT_TRUE(first.has_value()) << path;
  ASSERT_TRUE(first->getFeatures(kAnswer).has_value());

  auto second = VhostUserPeer::connectTo(path);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->closedWithin(kAnswer)) << "a second connection was served; log:\n" << node_->log();
  EXPECT_TRUE(first->getFeatures(kAnswer).has_value());
  EXPECT_NE(node_->log().find("connection refused, the port has one already"), std::string::npos) << node_->log();

  // Once the first went, a new one is served (the pod reconnecting). The
  // library may see the new connection before the old one's close: then
  // it is refused and this one tries again.
  first.reset();
  EXPECT_TRUE(waitFor([&] {
    auto next = VhostUserPeer::connectTo(path);
    return next.has_value() && next->getFeatures(kAnswer).has_value();
  }));
}

}  // namespace
}  // namespace sluice::test
