// DEL's guarantees when sluiced cannot confirm a port is gone, and which
// attachments DEL and GC may touch: an address is released only once
// sluiced confirmed the port gone; an unfinished teardown is kept as a
// pending-delete record that later invocations finish without CNI GC, a
// bounded number at a time; GC touches only this network's records; DEL
// succeeds for whatever ADD refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string pod(int i) { return "pod-" + std::to_string(i); }

TEST_F(CniTest, PendingDeleteIsFinishedByTheNextAddWithoutGc) {
  ASSERT_EQ(run(env("ADD", pod(0)), conf()).rc, 0);
  server_->stop();
  ASSERT_EQ(run(env("DEL", pod(0)), conf()).rc, 0);
  ASSERT_EQ(record(pod(0))["pendingDelete"], true);
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});

  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);
  RunResult add = run(env("ADD", pod(1)), conf());
  ASSERT_EQ(add.rc, 0) << add.stdout_text;
  EXPECT_EQ(add.out["ips"][0]["address"], "10.244.1.3/24") << "pod-0's address was still held at the ADD";
  // pod-0's teardown finished: its port, address and record are gone.
  EXPECT_TRUE(record(pod(0)).is_null());
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.3"});
  ASSERT_EQ(fake_->ports().size(), 1u);
  EXPECT_EQ(fake_->ports()[0].attachment().container_id(), pod(1));
}

TEST_F(CniTest, PendingDeleteIsFinishedByTheNextDelOrStatus) {
  ASSERT_EQ(run(env("ADD", pod(0)), conf()).rc, 0);
  ASSERT_EQ(run(env("ADD", pod(1)), conf()).rc, 0);
  server_->stop();
  ASSERT_EQ(run(env("DEL", pod(0)), conf()).rc, 0);
  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);
  ASSERT_EQ(run(env("DEL", pod(1)), conf()).rc, 0);
  expectNothingLeft();

  ASSERT_EQ(run(env("ADD", pod(2)), conf()).rc, 0);
  server_->stop();
  ASSERT_EQ(run(env("DEL", pod(2)), conf()).rc, 0);
  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);
  Environment status = {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir_ + ":" + kSystemCniPath}};
  ASSERT_EQ(run(status, conf()).rc, 0);
  expectNothingLeft();
}

TEST_F(CniTest, PendingDeletesAreFinishedABoundedNumberPerInvocation) {
  constexpr int kPods = 6;  // more than one invocation finishes (4)
  for (int i = 0; i < kPods; ++i) ASSERT_EQ(run(env("ADD", pod(i)), conf()).rc, 0);
  server_->stop();
  for (int i = 0; i < kPods; ++i) ASSERT_EQ(run(env("DEL", pod(i)), conf()).rc, 0);
  EXPECT_EQ(records().size(), static_cast<size_t>(kPods));
  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);

  Environment status = {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir_ + ":" + kSystemCniPath}};
  RunResult first = run(status, conf());
  ASSERT_EQ(first.rc, 0) << first.stdout_text << first.stderr_text;
  EXPECT_EQ(records().size(), 2u);
  EXPECT_EQ(heldIps().size(), 2u) << "only confirmed ports' addresses are released";
  ASSERT_EQ(run(status, conf()).rc, 0);
  expectNothingLeft();
}

TEST_F(CniTest, DelWhenSluicedFailsKeepsAddressAndRecordAndReportsTheError) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  fake_->failMethod("DeletePort", grpc::StatusCode::INTERNAL);
  RunResult del = run(env("DEL"), conf());
  EXPECT_EQ(del.code(), 999) << del.stdout_text;
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});
  EXPECT_EQ(record(kContainerId)["pendingDelete"], true);
  EXPECT_EQ(fake_->ports().size(), 1u);

  fake_->failMethod("DeletePort", grpc::StatusCode::OK);
  ASSERT_EQ(run(env("DEL"), conf()).rc, 0);
  expectNothingLeft();
}

TEST_F(CniTest, DelSucceedsWhenSluicedRefusesTheAttachmentId) {
  // A sluiced that refuses an ifname the plugin accepts ("net@1" is a valid
  // Linux name) holds no port by it: DEL releases and succeeds.
  ASSERT_EQ(run(env("ADD", kContainerId, "net@1"), conf()).rc, 0);
  fake_->dropPort(kContainerId, "net@1");
  fake_->failMethod("DeletePort", grpc::StatusCode::INVALID_ARGUMENT);
  RunResult del = run(env("DEL", kContainerId, "net@1"), conf());
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(records().empty());
  expectNothingLeft();
}

TEST_F(CniTest, DelGcAndStatusIgnoreAMalformedCniArgs) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  const std::string garbled = "IgnoreUnknown=1;K8S_POD_NAME";
  Environment status = {{"CNI_COMMAND", "STATUS"}, {"CNI_ARGS", garbled}};
  EXPECT_EQ(run(status, conf()).rc, 0);
  Environment gc_env = {{"CNI_COMMAND", "GC"}, {"CNI_PATH", kSystemCniPath}, {"CNI_ARGS", garbled}};
  json gc = conf();
  gc["cni.dev/valid-attachments"] = {{{"containerID", kContainerId}, {"ifname", "net1"}}};
  EXPECT_EQ(run(gc_env, gc).rc, 0);
  Environment del = env("DEL");
  del["CNI_ARGS"] = garbled;
  RunResult r = run(del, conf());
  EXPECT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("CNI_ARGS: malformed pair"), std::string::npos) << r.stderr_text;
  expectNothingLeft();
}

TEST_F(CniTest, GcLeavesTheSameNetworksAttachmentsOfAnotherDataDir) {
  json other = conf();
  other["dataDir"] = (dir_ / "records-b").string();
  ASSERT_EQ(run(env("ADD", "pod-b"), other).rc, 0);
  ASSERT_EQ(run(env("ADD", "pod-a"), conf()).rc, 0);

  json gc = conf();
  gc["cni.dev/valid-attachments"] = json::array();
  RunResult r = run(env("GC"), gc);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_EQ(fake_->ports().size(), 1u);
  EXPECT_EQ(fake_->ports()[0].attachment().container_id(), "pod-b");
  EXPECT_EQ(heldIps().size(), 1u);
  EXPECT_TRUE(fs::exists(dir_ / "records-b" / "sluice-test" / "pod-b:net1"));
  EXPECT_TRUE(records().empty());
}

TEST_F(CniTest, GcWithSluicedDownKeepsAddressesAndIsTryAgainLater) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  server_->stop();
  json gc = conf();
  gc["cni.dev/valid-attachments"] = json::array();
  RunResult r = run(env("GC"), gc);
  EXPECT_EQ(r.code(), 11) << r.stdout_text;
  EXPECT_EQ(heldIps().size(), 1u);
  EXPECT_EQ(records().size(), 1u);
}

}  // namespace
}  // namespace sluice::cni::testing
