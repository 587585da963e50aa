// SR-IOV attachments over a fake sysfs tree and the fake PF: the exact PF
// calls, the all-or-nothing refusals, idempotent re-adds, detach, and the
// checkpoint records round trip.
#include "dataplane/modules/sriov/sriov_control.h"

#include <gtest/gtest.h>

#include "dataplane/stand_ins/fake_pf/fake_pf_control.h"
#include "tests/unit/sriov/fake_sysfs.h"

namespace sluice::sriov {
namespace {

using Calls = std::vector<std::string>;

RawPortRequest raw(const std::string& cid, const std::string& ip, const std::string& mac = "") {
  RawPortRequest r;
  r.container_id = cid;
  r.ifname = "net1";
  r.pod_namespace = "default";
  r.pod_name = "pod-" + cid;
  r.ip = ip;
  r.mac = mac;
  r.kind = PortKind::kSriovVf;
  return r;
}

class SriovControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sys_.addVf("pf0", 0, "0000:3b:02.0", "pf0v0");
    sys_.addVf("pf0", 1, "0000:3b:02.1", "");  // bound to vfio-pci: no netdev
    sys_.addVf("pf1", 0, "0000:5e:02.0", "pf1v0");
    auto c = SriovControl::create({{"pf0", ""}, {"pf1", ""}}, sys_.root(), pf_);
    ASSERT_TRUE(c.ok()) << c.status();
    control_ = std::move(*c);
  }

  testing::FakeSysfs sys_;
  FakePfControl pf_;
  std::unique_ptr<SriovControl> control_;
};

TEST_F(SriovControlTest, AttachProgramsThePfInOrder) {
  VfRequest vf;
  vf.vlan = 100;
  vf.trust = true;
  vf.spoof_check = false;
  auto a = control_->attach(raw("c1", "192.168.7.10", "02:aa:00:00:00:01"), vf);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->created);
  EXPECT_EQ(a->attachment.vf.pci_address, "0000:3b:02.0");
  EXPECT_EQ(a->attachment.vf.netdev, "pf0v0");
  EXPECT_EQ(a->attachment.request.kind, PortKind::kSriovVf);
  EXPECT_EQ(pf_.calls(), (Calls{"mac pf0 0 02:aa:00:00:00:01", "vlan pf0 0 100", "spoofchk pf0 0 off",
                                "trust pf0 0 on"}));
  EXPECT_TRUE(control_->holds({"c1", "net1"}));
}

TEST_F(SriovControlTest, AddressOutsideAnyPodCidrAndDerivedMac) {
  auto a = control_->attach(raw("c1", "172.16.5.9"), {});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->attachment.request.mac, MacAddress::fromIpv4(*Ipv4Address::parse("172.16.5.9")));
  EXPECT_EQ(pf_.state("pf0", 0).mac, a->attachment.request.mac);
  EXPECT_TRUE(pf_.state("pf0", 0).spoof_check);
  EXPECT_FALSE(pf_.state("pf0", 0).trust);
}

TEST_F(SriovControlTest, KernelModeSkipsNothingButRefusesAVfWithoutNetdev) {
  VfRequest vf;
  vf.device_id = "0000:3b:02.1";
  auto a = control_->attach(raw("c1", "10.9.0.2"), vf);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(a.status().message().find("no kernel netdev"), std::string_view::npos);
  EXPECT_TRUE(pf_.calls().empty());
  EXPECT_EQ(control_->pool().freeCount(), 3u);
  // The same VF in DPDK mode is fine.
  vf.mode = SriovMode::kDpdk;
  auto d = control_->attach(raw("c1", "10.9.0.2"), vf);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->attachment.vf.netdev, "");
  EXPECT_EQ(d->attachment.settings.mode, SriovMode::kDpdk);
}

TEST_F(SriovControlTest, PfFailureResetsAndReturnsTheVf) {
  pf_.failOn("vlan");
  VfRequest vf;
  vf.vlan = 7;
  auto a = control_->attach(raw("c1", "10.9.0.2"), vf);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(pf_.calls(), (Calls{"mac pf0 0 02:53:0a:09:00:02", "vlan pf0 0 7", "reset pf0 0"}));
  EXPECT_EQ(control_->pool().freeCount(), 3u);
  EXPECT_FALSE(control_->holds({"c1", "net1"}));
  EXPECT_TRUE(control_->attachments().empty());
}

TEST_F(SriovControlTest, RefusalsNameTheFieldAndChangeNothing) {
  VfRequest bad_vlan;
  bad_vlan.vlan = 4095;
  EXPECT_EQ(control_->attach(raw("c1", "10.9.0.2"), bad_vlan).status().code(), absl::StatusCode::kInvalidArgument);
  VfRequest unknown;
  unknown.device_id = "0000:99:00.0";
  EXPECT_EQ(control_->attach(raw("c1", "10.9.0.2"), unknown).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(control_->attach(raw("../x", "10.9.0.2"), {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(control_->attach(raw("c1", "not-an-ip"), {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(pf_.calls().empty());
  EXPECT_EQ(control_->pool().freeCount(), 3u);
}

TEST_F(SriovControlTest, ExhaustedAndTakenDevice) {
  ASSERT_TRUE(control_->attach(raw("c1", "10.9.0.2"), {}).ok());
  VfRequest dpdk;
  dpdk.mode = SriovMode::kDpdk;
  ASSERT_TRUE(control_->attach(raw("c2", "10.9.0.3"), dpdk).ok());
  ASSERT_TRUE(control_->attach(raw("c3", "10.9.0.4"), {}).ok());
  const size_t calls = pf_.calls().size();
  EXPECT_EQ(control_->attach(raw("c4", "10.9.0.5"), {}).status().code(), absl::StatusCode::kResourceExhausted);
  VfRequest taken;
  taken.device_id = "0000:5e:02.0";
  auto t = control_->attach(raw("c4", "10.9.0.5"), taken);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(t.status().message().find("held by c3/net1"), std::string_view::npos) << t.status();
  EXPECT_EQ(pf_.calls().size(), calls);
}

TEST_F(SriovControlTest, SameAttachmentAgainIsReturnedUnchanged) {
  VfRequest vf;
  vf.vlan = 5;
  auto first = control_->attach(raw("c1", "10.9.0.2"), vf);
  ASSERT_TRUE(first.ok());
  const size_t calls = pf_.calls().size();
  auto again = control_->attach(raw("c1", "10.9.0.2"), vf);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->attachment.vf.pci_address, first->attachment.vf.pci_address);
  EXPECT_EQ(pf_.calls().size(), calls);
  vf.vlan = 6;
  EXPECT_EQ(control_->attach(raw("c1", "10.9.0.2"), vf).status().code(), absl::StatusCode::kAlreadyExists);
  // Another attachment with the same MAC.
  EXPECT_EQ(control_->attach(raw("c2", "10.9.0.3", "02:53:0a:09:00:02"), {}).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(SriovControlTest, DetachResetsAndFrees) {
  VfRequest vf;
  vf.device_id = "0000:5e:02.0";
  vf.vlan = 9;
  ASSERT_TRUE(control_->attach(raw("c1", "10.9.0.2"), vf).ok());
  EXPECT_TRUE(control_->detach({"c1", "net1"}));
  EXPECT_EQ(pf_.calls().back(), "reset pf1 0");
  EXPECT_EQ(pf_.state("pf1", 0).vlan.id, 0);
  EXPECT_TRUE(pf_.state("pf1", 0).mac.isZero());
  EXPECT_EQ(control_->pool().freeCount(), 3u);
  EXPECT_FALSE(control_->detach({"c1", "net1"}));  // idempotent
  // A failing reset still returns the VF.
  ASSERT_TRUE(control_->attach(raw("c1", "10.9.0.2"), vf).ok());
  pf_.failOn("reset");
  EXPECT_TRUE(control_->detach({"c1", "net1"}));
  EXPECT_EQ(control_->pool().freeCount(), 3u);
}

TEST_F(SriovControlTest, CheckpointRecordsRestoreWithoutTouchingThePf) {
  VfRequest vf;
  vf.vlan = 12;
  vf.trust = true;
  ASSERT_TRUE(control_->attach(raw("c1", "10.9.0.2"), vf).ok());
  VfRequest dpdk;
  dpdk.mode = SriovMode::kDpdk;
  dpdk.device_id = "0000:3b:02.1";
  ASSERT_TRUE(control_->attach(raw("c2", "10.9.0.3"), dpdk).ok());
  nlohmann::json records = control_->checkpointRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["pci_address"], "0000:3b:02.0");
  EXPECT_EQ(records[0]["vlan"], 12);
  EXPECT_EQ(records[1]["mode"], "dpdk");

  FakePfControl pf2;
  auto restored = SriovControl::create({{"pf0", ""}, {"pf1", ""}}, sys_.root(), pf2);
  ASSERT_TRUE(restored.ok());
  // One record whose VF is gone from the pools, one malformed: skipped.
  records.push_back({{"container_id", "c9"}, {"ifname", "net1"}, {"ip", "10.9.0.9"}, {"mac", ""},
                     {"pci_address", "0000:77:00.0"}, {"mode", "kernel"}});
  records.push_back({{"container_id", "c8"}});
  (*restored)->restore(records);
  EXPECT_TRUE(pf2.calls().empty());
  ASSERT_EQ((*restored)->attachments().size(), 2u);
  EXPECT_EQ((*restored)->pool().freeCount(), 1u);
  EXPECT_EQ((*restored)->pool().heldBy({"c2", "net1"})->pci_address, "0000:3b:02.1");
  EXPECT_EQ((*restored)->attachments()[0].settings.vlan, 12u);
  EXPECT_TRUE((*restored)->attachments()[0].settings.trust);
  EXPECT_EQ((*restored)->checkpointRecords(), control_->checkpointRecords());
  // The restored attachment answers a repeated ADD as the original would.
  auto again = (*restored)->attach(raw("c1", "10.9.0.2"), vf);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
}

TEST_F(SriovControlTest, EveryVfSettingReachesThePfAndDetachUndoesIt) {
  VfRequest vf;
  vf.device_id = "0000:5e:02.0";  // as the device plugin allocated it
  vf.vlan = 100;
  vf.vlan_qos = 5;
  vf.vlan_proto = VlanProto::k8021AD;
  vf.link_state = VfLinkState::kDisable;
  vf.min_tx_rate = 10;
  vf.max_tx_rate = 1000;
  auto a = control_->attach(raw("c1", "10.9.0.2", "02:aa:00:00:00:02"), vf);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->attachment.vf.pci_address, "0000:5e:02.0");
  EXPECT_EQ(pf_.calls(), (Calls{"mac pf1 0 02:aa:00:00:00:02", "vlan pf1 0 100 qos 5 proto 802.1ad",
                                "spoofchk pf1 0 on", "trust pf1 0 off", "link_state pf1 0 disable",
                                "rate pf1 0 min 10 max 1000"}));
  EXPECT_EQ(pf_.state("pf1", 0).link_state, VfLinkState::kDisable);
  EXPECT_EQ(pf_.state("pf1", 0).max_tx_rate, 1000u);
  nlohmann::json rec = control_->checkpointRecords()[0];
  EXPECT_EQ(rec["vlan_qos"], 5);
  EXPECT_EQ(rec["vlan_proto"], "802.1ad");
  EXPECT_EQ(rec["link_state"], 2);
  EXPECT_EQ(rec["min_tx_rate"], 10);
  EXPECT_EQ(rec["max_tx_rate"], 1000);

  const size_t before = pf_.calls().size();
  EXPECT_TRUE(control_->detach({"c1", "net1"}));
  const Calls all = pf_.calls();
  Calls undo(all.begin() + static_cast<ptrdiff_t>(before), all.end());
  EXPECT_EQ(undo, (Calls{"link_state pf1 0 auto", "rate pf1 0 min 0 max 0", "reset pf1 0"}));
  const FakePfControl::VfState after = pf_.state("pf1", 0);
  EXPECT_EQ(after.link_state, VfLinkState::kAuto);
  EXPECT_EQ(after.min_tx_rate, 0u);
  EXPECT_EQ(after.max_tx_rate, 0u);
  EXPECT_EQ(after.vlan, VfVlan{});
}

TEST_F(SriovControlTest, SettingsNotAskedForAreNotTouched) {
  ASSERT_TRUE(control_->attach(raw("c1", "10.9.0.2"), {}).ok());
  EXPECT_EQ(pf_.calls(), (Calls{"mac pf0 0 02:53:0a:09:00:02", "vlan pf0 0 0", "spoofchk pf0 0 on",
                                "trust pf0 0 off"}));
  EXPECT_TRUE(control_->detach({"c1", "net1"}));
  EXPECT_EQ(pf_.calls().back(), "reset pf0 0");
  EXPECT_EQ(pf_.calls().size(), 5u);
}

TEST_F(SriovControlTest, BadVfSettingsAreRefusedBeforeTheVfIsTaken) {
  auto refuse = [&](VfRequest vf, const char* field) {
    auto a = control_->attach(raw("c1", "10.9.0.2"), vf);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_NE(a.status().message().find(field), absl::string_view::npos) << a.status();
  };
  VfRequest qos;
  qos.vlan = 3;
  qos.vlan_qos = 8;
  refuse(qos, "vlanQoS");
  VfRequest no_vlan;
  no_vlan.vlan_proto = VlanProto::k8021AD;
  refuse(no_vlan, "need a vlan");
  VfRequest rates;
  rates.min_tx_rate = 20;
  rates.max_tx_rate = 10;
  refuse(rates, "min_tx_rate");
  EXPECT_TRUE(pf_.calls().empty());
  EXPECT_EQ(control_->pool().freeCount(), 3u);
}

TEST_F(SriovControlTest, AFailedRateUndoesTheLinkStateAndResets) {
  pf_.failOn("rate");
  VfRequest vf;
  vf.link_state = VfLinkState::kEnable;
  vf.max_tx_rate = 100;
  auto a = control_->attach(raw("c1", "10.9.0.2"), vf);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(pf_.calls(), (Calls{"mac pf0 0 02:53:0a:09:00:02", "vlan pf0 0 0", "spoofchk pf0 0 on",
                                "trust pf0 0 off", "link_state pf0 0 enable", "rate pf0 0 min 0 max 100",
                                "link_state pf0 0 auto", "rate pf0 0 min 0 max 0", "reset pf0 0"}));
  EXPECT_EQ(pf_.state("pf0", 0).link_state, VfLinkState::kAuto);
  EXPECT_EQ(control_->pool().freeCount(), 3u);
}

TEST(SriovControlCreate, PoolErrorsNameThePool) {
  testing::FakeSysfs sys;
  FakePfControl pf;
  sys.addVf("pf0", 0, "0000:3b:02.0", "v0");
  EXPECT_EQ(SriovControl::create({{"pf0", ""}, {"pf0", ""}}, sys.root(), pf).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto missing = SriovControl::create({{"pf9", ""}}, sys.root(), pf);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("sriov-pools: pf pf9"), std::string_view::npos);
  // A pool's own sysfs root wins over the global one.
  auto own = SriovControl::create({{"pf0", sys.root()}}, "/nonexistent", pf);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ((*own)->pool().slots().size(), 1u);
}

TEST(FakePfControl, RecordsStateAndFailsOnDemand) {
  FakePfControl pf;
  EXPECT_TRUE(pf.setVfVlan("p", 1, VfVlan{3}).ok());
  EXPECT_TRUE(pf.setVfTrust("p", 1, true).ok());
  EXPECT_EQ(pf.state("p", 1).vlan.id, 3);
  EXPECT_TRUE(pf.state("p", 1).trust);
  pf.failOn("trust");
  EXPECT_EQ(pf.setVfTrust("p", 1, false).code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(pf.state("p", 1).trust);  // a failed call changes nothing
  EXPECT_TRUE(pf.resetVf("p", 1).ok());
  EXPECT_EQ(pf.state("p", 1).vlan.id, 0);
  EXPECT_EQ(pf.calls(), (Calls{"vlan p 1 3", "trust p 1 on", "trust p 1 off", "reset p 1"}));
}

}  // namespace
}  // namespace sluice::sriov
