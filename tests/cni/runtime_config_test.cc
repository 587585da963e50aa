// Multus-style runtime config through the whole dispatcher: the "mac" and
// "ips" capabilities (with and without an IPAM block) and sriov-cni's VF
// settings, as they reach sluiced's AddPort, and what the result reports.
#include <gtest/gtest.h>

#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

using nlohmann::json;

TEST_F(CniTest, RuntimeMacAndIpsWithoutIpamAreTheInterfacesAndNoIpamRuns) {
  json c = conf();
  c.erase("ipam");
  c["runtimeConfig"] = {{"mac", "02:5a:00:00:00:07"}, {"ips", {"10.244.9.7/24"}}};
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  EXPECT_EQ(fake_->addRequests()[0].ip(), "10.244.9.7");
  EXPECT_EQ(fake_->addRequests()[0].mac(), "02:5a:00:00:00:07");
  EXPECT_EQ(r.out["interfaces"][0]["mac"], "02:5a:00:00:00:07");
  EXPECT_EQ(r.out["ips"], json::parse(R"([{"address": "10.244.9.7/24", "interface": 0}])"));
  EXPECT_TRUE(ipamCommands().empty());
  RunResult del = run(env("DEL"), c);
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(ipamCommands().empty());
  expectNothingLeft();
}

TEST_F(CniTest, RuntimeIpsWithIpamGoToTheIpamPlugin) {
  // host-local honours the "ips" capability: it allocates exactly that
  // address of its range, and refuses one outside it.
  json c = conf();
  c["runtimeConfig"] = {{"ips", {"10.244.1.77/24"}}};
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  EXPECT_EQ(fake_->addRequests()[0].ip(), "10.244.1.77");
  EXPECT_EQ(r.out["ips"][0]["address"], "10.244.1.77/24");
  EXPECT_EQ(run(env("DEL"), c).rc, 0);
  c["runtimeConfig"] = {{"ips", {"10.244.9.7/24"}}};
  RunResult outside = run(env("ADD"), c);
  EXPECT_NE(outside.rc, 0);
  EXPECT_NE(outside.msg().find("10.244.9.7"), std::string::npos) << outside.stdout_text;
  EXPECT_EQ(fake_->addRequests().size(), 1u);
  expectNothingLeft();
}

TEST_F(CniTest, BadRuntimeMacOrIpsAreCode7AndChangeNothing) {
  for (const json& rc : {json{{"mac", "01:00:5e:00:00:01"}}, json{{"mac", "zz"}}, json{{"mac", 5}},
                         json{{"ips", {"fd00::1"}}}, json{{"ips", {"10.0.0.1"}}}, json{{"ips", "10.0.0.1/24"}}}) {
    json c = conf();
    c["runtimeConfig"] = rc;
    RunResult r = run(env("ADD"), c);
    EXPECT_EQ(r.code(), 7) << rc.dump() << r.stdout_text;
    EXPECT_NE(r.msg().find("runtimeConfig."), std::string::npos) << r.msg();
  }
  EXPECT_TRUE(fake_->addRequests().empty());
  expectNothingLeft();
}

TEST_F(CniTest, MultusStyleSriovAddCarriesDeviceIdAndEveryVfSetting) {
  writeNodeConfig({{"allowVfTrust", true}});
  json c = conf();
  c.erase("ipam");
  c.erase("vhostMode");
  c["interfaceType"] = "sriov";
  c["sriovMode"] = "dpdk";
  c["vlan"] = 100;
  c["vlanQoS"] = 5;
  c["vlanProto"] = "802.1ad";
  c["link_state"] = "disable";
  c["min_tx_rate"] = 10;
  c["max_tx_rate"] = 200;
  c["trust"] = "on";
  c["deviceID"] = "0000:18:02.5";
  c["runtimeConfig"] = {{"mac", "02:5a:00:00:00:08"}, {"ips", {"10.244.9.8/24"}}};
  RunResult r = run(env("ADD"), c);
  // The fake sluiced has no VFs; the request it saw is the point.
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  const v1::AddPortRequest req = fake_->addRequests()[0];  // a copy: addRequests() returns one
  EXPECT_EQ(req.type(), v1::PORT_TYPE_SRIOV_VF);
  EXPECT_EQ(req.device_id(), "0000:18:02.5");
  EXPECT_EQ(req.ip(), "10.244.9.8");
  EXPECT_EQ(req.mac(), "02:5a:00:00:00:08");
  EXPECT_EQ(req.sriov_mode(), v1::SRIOV_MODE_DPDK);
  EXPECT_EQ(req.vlan(), 100u);
  EXPECT_EQ(req.vlan_qos(), 5u);
  EXPECT_EQ(req.vlan_proto(), v1::VLAN_PROTO_8021AD);
  EXPECT_EQ(req.vf_link_state(), v1::VF_LINK_STATE_DISABLE);
  EXPECT_EQ(req.min_tx_rate(), 10u);
  EXPECT_EQ(req.max_tx_rate(), 200u);
  EXPECT_TRUE(req.vf_trust());
  expectNothingLeft();
}

}  // namespace
}  // namespace sluice::cni::testing
