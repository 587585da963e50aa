// The PF's rtnetlink requests, byte for byte as the kernel reads them
// (numbers written out from the uapi, not taken from the headers under
// test), the parsing of its acknowledgements, and one real round trip to the
// kernel on a netdev that has no VFs (what can be shown without hardware).
#include "dataplane/modules/sriov/netlink_pf_control.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

namespace sluice::sriov {
namespace {

using Bytes = std::vector<uint8_t>;

// nlmsghdr + ifinfomsg of an RTM_SETLINK (type 19) request, flags
// NLM_F_REQUEST|NLM_F_ACK (5), for ifindex 5, sequence 7.
Bytes header(uint8_t total_len) {
  return {total_len, 0, 0, 0, 19, 0, 5, 0, 7, 0, 0, 0, 0, 0, 0, 0,   // nlmsghdr
          0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};          // ifinfomsg
}

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(VfSetLinkRequest, MacBytes) {
  VfSettingValue v;
  v.setting = VfSetting::kMac;
  v.vf = 3;
  v.mac = *MacAddress::parse("02:11:22:33:44:55");
  Bytes want = cat(header(80), {48, 0, 22, 0,     // IFLA_VFINFO_LIST (22), 48 bytes
                                44, 0, 1, 0,      // IFLA_VF_INFO (1)
                                40, 0, 1, 0,      // IFLA_VF_MAC (1): struct ifla_vf_mac
                                3, 0, 0, 0,       //   vf
                                0x02, 0x11, 0x22, 0x33, 0x44, 0x55});
  want.resize(80, 0);  // the rest of mac[32]
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v), want);
}

TEST(VfSetLinkRequest, VlanBytes) {
  VfSettingValue v;
  v.setting = VfSetting::kVlan;
  v.vf = 1;
  v.vlan = VfVlan{0x123};
  Bytes want = cat(header(56), {24, 0, 22, 0, 20, 0, 1, 0,
                                16, 0, 2, 0,              // IFLA_VF_VLAN (2): struct ifla_vf_vlan
                                1, 0, 0, 0,               //   vf
                                0x23, 0x01, 0, 0,         //   vlan
                                0, 0, 0, 0});             //   qos
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v), want);
}

TEST(VfSetLinkRequest, VlanWithQosBytes) {
  VfSettingValue v;
  v.setting = VfSetting::kVlan;
  v.vf = 1;
  v.vlan = VfVlan{0x123, 5, VlanProto::k8021Q};
  Bytes want = cat(header(56), {24, 0, 22, 0, 20, 0, 1, 0,
                                16, 0, 2, 0,              // IFLA_VF_VLAN (2)
                                1, 0, 0, 0,               //   vf
                                0x23, 0x01, 0, 0,         //   vlan
                                5, 0, 0, 0});             //   qos
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v), want);
}

TEST(VfSetLinkRequest, Vlan8021adGoesInTheVlanListBytes) {
  VfSettingValue v;
  v.setting = VfSetting::kVlan;
  v.vf = 1;
  v.vlan = VfVlan{0x123, 5, VlanProto::k8021AD};
  Bytes want = cat(header(64), {32, 0, 22, 0,             // IFLA_VFINFO_LIST
                                28, 0, 1, 0,              // IFLA_VF_INFO
                                24, 0, 12, 0,             // IFLA_VF_VLAN_LIST (12)
                                20, 0, 1, 0,              // IFLA_VF_VLAN_INFO (1): struct ifla_vf_vlan_info
                                1, 0, 0, 0,               //   vf
                                0x23, 0x01, 0, 0,         //   vlan
                                5, 0, 0, 0,               //   qos
                                0x88, 0xa8, 0, 0});       //   vlan_proto, big-endian ETH_P_8021AD, padding
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v), want);
}

TEST(VfSetLinkRequest, LinkStateAndRateBytes) {
  VfSettingValue v;
  v.setting = VfSetting::kLinkState;
  v.vf = 2;
  v.link_state = VfLinkState::kDisable;
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v), cat(header(52), {20, 0, 22, 0, 16, 0, 1, 0,
                                                             12, 0, 5, 0,  // IFLA_VF_LINK_STATE (5)
                                                             2, 0, 0, 0,   //   vf
                                                             2, 0, 0, 0}));  // IFLA_VF_LINK_STATE_DISABLE
  v.setting = VfSetting::kRate;
  v.min_tx_rate = 10;
  v.max_tx_rate = 1000;
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v), cat(header(56), {24, 0, 22, 0, 20, 0, 1, 0,
                                                             16, 0, 6, 0,       // IFLA_VF_RATE (6)
                                                             2, 0, 0, 0,        //   vf
                                                             10, 0, 0, 0,       //   min_tx_rate
                                                             0xe8, 0x03, 0, 0}));  // max_tx_rate 1000
}

TEST(VfSetLinkRequest, TrustAndSpoofCheckBytes) {
  VfSettingValue v;
  v.setting = VfSetting::kTrust;
  v.vf = 2;
  v.on = true;
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v),
            cat(header(52), {20, 0, 22, 0, 16, 0, 1, 0, 12, 0, 9, 0,  // IFLA_VF_TRUST (9)
                             2, 0, 0, 0, 1, 0, 0, 0}));
  v.setting = VfSetting::kSpoofCheck;
  v.on = false;
  EXPECT_EQ(buildVfSetLinkRequest(7, 5, v),
            cat(header(52), {20, 0, 22, 0, 16, 0, 1, 0, 12, 0, 4, 0,  // IFLA_VF_SPOOFCHK (4)
                             2, 0, 0, 0, 0, 0, 0, 0}));
}

// An NLMSG_ERROR (type 2) reply carrying `error` for sequence `seq`.
Bytes ack(int32_t error, uint32_t seq) {
  Bytes b = {36, 0, 0, 0, 2, 0, 0, 0};
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(seq >> (8 * i)));
  b.resize(16, 0);
  uint8_t e[4];
  std::memcpy(e, &error, 4);
  b.insert(b.end(), e, e + 4);
  b.resize(36, 0);  // the echoed request header
  return b;
}

TEST(NetlinkAck, ZeroIsSuccess) { EXPECT_TRUE(parseNetlinkAck(ack(0, 9), 9).ok()); }

TEST(NetlinkAck, ErrnosMapToCodes) {
  EXPECT_EQ(parseNetlinkAck(ack(-EOPNOTSUPP, 9), 9).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(parseNetlinkAck(ack(-EPERM, 9), 9).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(parseNetlinkAck(ack(-ENODEV, 9), 9).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(parseNetlinkAck(ack(-EINVAL, 9), 9).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(parseNetlinkAck(ack(-EBUSY, 9), 9).code(), absl::StatusCode::kInternal);
  EXPECT_NE(parseNetlinkAck(ack(-EOPNOTSUPP, 9), 9).message().find(std::strerror(EOPNOTSUPP)), std::string_view::npos);
}

TEST(NetlinkAck, ForeignOrBrokenRepliesAreInternal) {
  EXPECT_EQ(parseNetlinkAck(ack(0, 8), 9).code(), absl::StatusCode::kInternal);  // another request's
  Bytes wrong_type = ack(0, 9);
  wrong_type[4] = 16;  // RTM_NEWLINK, not an ack
  EXPECT_EQ(parseNetlinkAck(wrong_type, 9).code(), absl::StatusCode::kInternal);
  Bytes truncated = ack(0, 9);
  truncated.resize(18);
  EXPECT_EQ(parseNetlinkAck(truncated, 9).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(parseNetlinkAck(Bytes{1, 2, 3}, 9).code(), absl::StatusCode::kInternal);
  Bytes too_long = ack(0, 9);
  too_long[0] = 200;  // claims more than was received
  EXPECT_EQ(parseNetlinkAck(too_long, 9).code(), absl::StatusCode::kInternal);
}

TEST(NetlinkPfControl, UnknownPfIsNotFound) {
  NetlinkPfControl pf;
  absl::Status s = pf.setVfMac("sriovnopf0", 0, *MacAddress::parse("02:00:00:00:00:01"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("sriovnopf0"), std::string_view::npos) << s;
}

// The loopback device has no VFs: the kernel takes the request, finds no
// ndo_set_vf_* and answers EOPNOTSUPP (EPERM without CAP_NET_ADMIN). This is
// the whole socket path short of a PF driver.
TEST(NetlinkPfControl, KernelAnswersForAPfWithoutSriov) {
  NetlinkPfControl pf;
  const absl::StatusCode want =
      ::geteuid() == 0 ? absl::StatusCode::kUnimplemented : absl::StatusCode::kPermissionDenied;
  EXPECT_EQ(pf.setVfMac("lo", 0, *MacAddress::parse("02:00:00:00:00:01")).code(), want);
  EXPECT_EQ(pf.setVfVlan("lo", 0, VfVlan{100}).code(), want);
  EXPECT_EQ(pf.setVfTrust("lo", 0, true).code(), want);
  EXPECT_EQ(pf.setVfSpoofCheck("lo", 0, false).code(), want);
  EXPECT_EQ(pf.setVfVlan("lo", 0, VfVlan{100, 3, VlanProto::k8021AD}).code(), want);
  EXPECT_EQ(pf.setVfLinkState("lo", 0, VfLinkState::kEnable).code(), want);
  EXPECT_EQ(pf.setVfRate("lo", 0, 0, 100).code(), want);
  absl::Status reset = pf.resetVf("lo", 0);
  EXPECT_EQ(reset.code(), want);
  EXPECT_NE(reset.message().find("pf lo vf 0 mac"), std::string_view::npos) << reset;
}

}  // namespace
}  // namespace sluice::sriov
