// VF attachments inside DataplaneControl (fake port backend, one fake PMD
// that acknowledges snapshots, fake sysfs and PF): one attachment namespace
// shared with vhost-user ports, no port number for a VF, deletePort resets
// and frees it, listPorts and listVfs show it, and no pools means
// FAILED_PRECONDITION.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "dataplane/core/checkpoint.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/sriov/sriov_module.h"
#include "dataplane/stand_ins/fake_pf/fake_pf_control.h"
#include "tests/support/fake_control.h"
#include "tests/unit/sriov/fake_sysfs.h"

namespace sluice {
namespace {

RawPortRequest raw(const std::string& cid, const std::string& ip, PortKind kind) {
  RawPortRequest r;
  r.container_id = cid;
  r.ifname = "net1";
  r.ip = ip;
  r.kind = kind;
  return r;
}

class DataplaneControlSriovTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/sriov-control-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.pod_cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    config_.gateway = *Ipv4Address::parse("10.244.1.1");
    config_.max_ports = 4;
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_.context},
                                                  2'600'000'000);
    control_->start();
    pmd_.start();
    sys_.addVf("pf0", 0, "0000:3b:02.0", "pf0v0");
    auto s = sriov::SriovControl::create({{"pf0", ""}}, sys_.root(), pf_);
    ASSERT_TRUE(s.ok()) << s.status();
    sriov_ = std::move(*s);
  }
  void TearDown() override {
    control_->removeAllPorts();
    control_->stopFlowThread();
    module_.reset();
    pmd_.stop();
    control_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  SluicedConfig config_;
  test::FakePortBackend backend_;
  test::AckingPmd pmd_;
  std::unique_ptr<DataplaneControl> control_;
  sriov::testing::FakeSysfs sys_;
  sriov::FakePfControl pf_;
  std::unique_ptr<sriov::SriovControl> sriov_;
  std::unique_ptr<SriovModule> module_;
};

TEST_F(DataplaneControlSriovTest, WithoutPoolsIsFailedPrecondition) {
  SriovModule no_pools(*control_, nullptr);
  auto r = no_pools.addVf(raw("c1", "10.9.0.2", PortKind::kSriovVf), {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(no_pools.listVfs().empty());
}

TEST_F(DataplaneControlSriovTest, VfBesidePortsInOneAttachmentNamespace) {
  module_ = std::make_unique<SriovModule>(*control_, sriov_.get());
  auto vhost = control_->addPort(raw("c1", "10.244.1.5", PortKind::kVhostUser));
  ASSERT_TRUE(vhost.ok()) << vhost.status();
  // c1/net1 is a vhost-user port: it cannot also hold a VF, and vice versa.
  EXPECT_EQ(module_->addVf(raw("c1", "10.9.0.2", PortKind::kSriovVf), {}).status().code(),
            absl::StatusCode::kAlreadyExists);
  auto vf = module_->addVf(raw("c2", "10.9.0.3", PortKind::kSriovVf), {});
  ASSERT_TRUE(vf.ok()) << vf.status();
  EXPECT_TRUE(vf->created);
  EXPECT_EQ(vf->attachment.vf.pci_address, "0000:3b:02.0");
  EXPECT_EQ(control_->addPort(raw("c2", "10.244.1.6", PortKind::kVhostUser)).status().code(),
            absl::StatusCode::kAlreadyExists);

  // The port is the core's, the VF attachment the module's.
  std::vector<PortView> ports = control_->listPorts();
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].request.attachment.container_id, "c1");
  std::vector<sriov::VfAttachment> attachments = module_->attachments();
  ASSERT_EQ(attachments.size(), 1u);
  EXPECT_EQ(attachments[0].request.attachment.container_id, "c2");
  EXPECT_EQ(control_->health().ports, 1u);  // datapath ports only
  auto vfs = module_->listVfs();
  ASSERT_EQ(vfs.size(), 1u);
  EXPECT_EQ(vfs[0].holder->container_id, "c2");

  // deletePort takes a VF attachment too: reset through the PF, back in the pool.
  auto deleted = control_->deletePort({"c2", "net1"});
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(*deleted);
  EXPECT_EQ(pf_.calls().back(), "reset pf0 0");
  EXPECT_FALSE(module_->listVfs()[0].holder.has_value());
  EXPECT_FALSE(*control_->deletePort({"c2", "net1"}));
  EXPECT_EQ(control_->listPorts().size(), 1u);
  EXPECT_TRUE(module_->attachments().empty());
}

TEST_F(DataplaneControlSriovTest, VfAllocationsAreCheckpointedAndRestored) {
  CheckpointStore store(dir_ + "/state");
  control_->setCheckpointStore(&store);
  module_ = std::make_unique<SriovModule>(*control_, sriov_.get());
  sriov::VfRequest vf;
  vf.vlan = 42;
  ASSERT_TRUE(module_->addVf(raw("c2", "10.9.0.3", PortKind::kSriovVf), vf).ok());
  CheckpointLoad saved = *store.load();
  ASSERT_EQ(saved.state.sections["vfs"].size(), 1u);
  EXPECT_EQ(saved.state.sections["vfs"][0]["pci_address"], "0000:3b:02.0");
  EXPECT_EQ(saved.state.sections["vfs"][0]["vlan"], 42);

  // A restarted sluiced: new control, new pool, same checkpoint. The VF is
  // held again without a single PF call, and a repeated ADD finds it.
  sriov::FakePfControl pf2;
  auto sriov2 = sriov::SriovControl::create({{"pf0", ""}}, sys_.root(), pf2);
  ASSERT_TRUE(sriov2.ok());
  PmdContext pmd2;
  pmd2.lcore = 2;
  DataplaneControl control2(config_, backend_, {&pmd2}, 2'600'000'000);
  control2.setCheckpointStore(&store);
  SriovModule module2(control2, sriov2->get());
  control2.restore(store.load()->state);
  ASSERT_EQ(module2.listVfs().size(), 1u);
  EXPECT_EQ(module2.listVfs()[0].holder->container_id, "c2");
  EXPECT_TRUE(pf2.calls().empty());
  auto again = module2.addVf(raw("c2", "10.9.0.3", PortKind::kSriovVf), vf);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(store.load()->state.sections["vfs"].size(), 1u);  // rewritten after restore, still there

  // Deleting it empties the checkpoint's VF section.
  ASSERT_TRUE(*control2.deletePort({"c2", "net1"}));
  EXPECT_EQ(pf2.calls(), (std::vector<std::string>{"reset pf0 0"}));
  EXPECT_TRUE(store.load()->state.sections["vfs"].empty());
}

// A VF whose checkpoint write fails is given back, and the write an earlier
// failed DeletePort still owes is not forgotten with it.
TEST_F(DataplaneControlSriovTest, ARefusedVfDoesNotForgetTheWriteAFailedDeleteOwes) {
  const std::string state = dir_ + "/state";
  CheckpointStore store(state);
  control_->setCheckpointStore(&store);
  module_ = std::make_unique<SriovModule>(*control_, sriov_.get());
  ASSERT_TRUE(control_->addPort(raw("aaaa", "10.244.1.10", PortKind::kVhostUser)).ok());
  // The state directory becomes unwritable: the delete removes the port and
  // reports; the file still names it. The VF's write fails too: refused.
  std::filesystem::rename(state, dir_ + "/state-away");
  std::ofstream(state).put('\n');
  EXPECT_EQ(control_->deletePort({"aaaa", "net1"}).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(module_->addVf(raw("c2", "10.244.1.11", PortKind::kSriovVf), {}).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_TRUE(module_->attachments().empty());
  // Writable again: the runtime's retried DEL finds nothing and writes the
  // checkpoint still owed.
  std::filesystem::remove(state);
  std::filesystem::rename(dir_ + "/state-away", state);
  auto retried = control_->deletePort({"aaaa", "net1"});
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_FALSE(*retried);
  CheckpointLoad on_disk = *store.load();
  EXPECT_TRUE(on_disk.state.ports.empty());
  EXPECT_TRUE(on_disk.state.sections["vfs"].empty());
}

TEST_F(DataplaneControlSriovTest, VfOfAVanishedNetnsIsGarbageCollected) {
  module_ = std::make_unique<SriovModule>(*control_, sriov_.get());
  const std::string netns = dir_ + "/netns-c2";
  { std::ofstream(netns) << ""; }
  ASSERT_TRUE(module_->addVf(raw("c2", "10.9.0.3", PortKind::kSriovVf), {}, netns).ok());
  EXPECT_EQ(module_->attachments()[0].netns, netns);
  EXPECT_EQ(control_->collectGarbage(), 0u);  // still there
  std::filesystem::remove(netns);
  EXPECT_EQ(control_->collectGarbage(), 1u);
  EXPECT_FALSE(module_->listVfs()[0].holder.has_value());
  EXPECT_EQ(pf_.calls().back(), "reset pf0 0");
  EXPECT_EQ(control_->health().garbage_collected, 1u);
}

}  // namespace
}  // namespace sluice
