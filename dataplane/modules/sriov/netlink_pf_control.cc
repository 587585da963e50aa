// See netlink_pf_control.h.
#include "dataplane/modules/sriov/netlink_pf_control.h"

#include <absl/strings/str_cat.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/rtnetlink/netlink_message.h"
#include "common/rtnetlink/netlink_socket.h"
#include "dataplane/modules/sriov/pf_control_registry.h"

namespace sluice::sriov {
namespace {

absl::string_view settingName(VfSetting s) {
  switch (s) {
    case VfSetting::kMac: return "mac";
    case VfSetting::kVlan: return "vlan";
    case VfSetting::kTrust: return "trust";
    case VfSetting::kSpoofCheck: return "spoofchk";
    case VfSetting::kLinkState: return "link_state";
    case VfSetting::kRate: return "rate";
  }
  return "?";
}

absl::Status fromErrno(int err, absl::string_view what) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case EOPNOTSUPP: return absl::UnimplementedError(msg);
    case EPERM:
    case EACCES: return absl::PermissionDeniedError(msg);
    case ENODEV: return absl::NotFoundError(msg);
    case EINVAL:
    case ERANGE: return absl::InvalidArgumentError(msg);
    default: return absl::InternalError(msg);
  }
}

// The kernel acknowledges a SETLINK within microseconds; a PF driver that
// talks to firmware may take longer. Beyond this the call is reported failed.
constexpr std::chrono::seconds kAckTimeout{5};

}  // namespace

std::vector<uint8_t> buildVfSetLinkRequest(uint32_t seq, int pf_ifindex, const VfSettingValue& v) {
  rtnetlink::RequestBuilder req(RTM_SETLINK, 0, seq);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = pf_ifindex;
  req.addFamilyMessage(ifi);
  const size_t list = req.beginNested(IFLA_VFINFO_LIST);
  const size_t info = req.beginNested(IFLA_VF_INFO);
  switch (v.setting) {
    case VfSetting::kMac: {
      ifla_vf_mac mac{};
      mac.vf = v.vf;
      std::memcpy(mac.mac, v.mac.bytes.data(), v.mac.bytes.size());
      req.addAttribute(IFLA_VF_MAC, &mac, sizeof mac);
      break;
    }
    case VfSetting::kVlan: {
      if (v.vlan.proto == VlanProto::k8021Q) {
        // The older attribute: every PF driver with VF VLANs takes it.
        const ifla_vf_vlan vlan{v.vf, v.vlan.id, v.vlan.qos};
        req.addAttribute(IFLA_VF_VLAN, &vlan, sizeof vlan);
        break;
      }
      // 802.1ad needs the protocol, which only the list form carries.
      ifla_vf_vlan_info vlan_info{};
      vlan_info.vf = v.vf;
      vlan_info.vlan = v.vlan.id;
      vlan_info.qos = v.vlan.qos;
      vlan_info.vlan_proto = htons(ETH_P_8021AD);
      const size_t vlan_list = req.beginNested(IFLA_VF_VLAN_LIST);
      req.addAttribute(IFLA_VF_VLAN_INFO, &vlan_info, sizeof vlan_info);
      req.endNested(vlan_list);
      break;
    }
    case VfSetting::kLinkState: {
      const ifla_vf_link_state state{v.vf, static_cast<uint32_t>(v.link_state)};
      req.addAttribute(IFLA_VF_LINK_STATE, &state, sizeof state);
      break;
    }
    case VfSetting::kRate: {
      const ifla_vf_rate rate{v.vf, v.min_tx_rate, v.max_tx_rate};
      req.addAttribute(IFLA_VF_RATE, &rate, sizeof rate);
      break;
    }
    case VfSetting::kTrust: {
      const ifla_vf_trust trust{v.vf, v.on ? 1u : 0u};
      req.addAttribute(IFLA_VF_TRUST, &trust, sizeof trust);
      break;
    }
    case VfSetting::kSpoofCheck: {
      const ifla_vf_spoofchk spoofchk{v.vf, v.on ? 1u : 0u};
      req.addAttribute(IFLA_VF_SPOOFCHK, &spoofchk, sizeof spoofchk);
      break;
    }
  }
  req.endNested(info);
  req.endNested(list);
  return std::move(req).finish();
}

absl::Status parseNetlinkAck(std::span<const uint8_t> reply, uint32_t seq) {
  rtnetlink::ReplyReader reader(reply);
  nlmsghdr hdr;
  std::span<const uint8_t> message;
  if (!reader.next(hdr, message))
    return absl::InternalError(reader.malformed() ? "netlink: reply length field out of range"
                                                  : "netlink: truncated reply");
  if (hdr.nlmsg_seq != seq)
    return absl::InternalError(absl::StrCat("netlink: reply to request ", hdr.nlmsg_seq, ", expected ", seq));
  if (hdr.nlmsg_type != NLMSG_ERROR)
    return absl::InternalError(absl::StrCat("netlink: unexpected reply type ", hdr.nlmsg_type));
  const std::optional<int> error = rtnetlink::ackError(message);
  if (!error) return absl::InternalError("netlink: truncated error reply");
  if (*error == 0) return absl::OkStatus();
  if (*error > 0) return absl::InternalError(absl::StrCat("netlink: positive error code ", *error));
  return fromErrno(-*error, "netlink");
}

absl::Status NetlinkPfControl::apply(const std::string& pf, const VfSettingValue& value) {
  const std::string what = absl::StrCat("pf ", pf, " vf ", value.vf, " ", settingName(value.setting));
  unsigned ifindex = ::if_nametoindex(pf.c_str());
  if (ifindex == 0) return fromErrno(errno == ENXIO ? ENODEV : errno, absl::StrCat(what, ": no netdev ", pf));
  rtnetlink::RouteSocket sock = rtnetlink::RouteSocket::open(kAckTimeout);
  if (!sock.isOpen()) return fromErrno(sock.openErrno(), absl::StrCat(what, ": netlink socket"));
  const uint32_t seq = seq_++;
  if (int err = sock.send(buildVfSetLinkRequest(seq, static_cast<int>(ifindex), value)); err != 0)
    return fromErrno(err, absl::StrCat(what, ": send"));
  // An ack is a header, the error code and the echoed request header; with
  // extended acks the kernel may append attributes. 8 KiB is ample.
  std::array<uint8_t, 8192> buf;
  const ssize_t n = sock.receive(buf);
  if (n < 0) return fromErrno(static_cast<int>(-n), absl::StrCat(what, ": waiting for the kernel's answer"));
  absl::Status s = parseNetlinkAck(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)), seq);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
  return s;
}

absl::Status NetlinkPfControl::setVfMac(const std::string& pf, uint32_t vf, const MacAddress& mac) {
  VfSettingValue v;
  v.setting = VfSetting::kMac;
  v.vf = vf;
  v.mac = mac;
  return apply(pf, v);
}

absl::Status NetlinkPfControl::setVfVlan(const std::string& pf, uint32_t vf, const VfVlan& vlan) {
  VfSettingValue v;
  v.setting = VfSetting::kVlan;
  v.vf = vf;
  v.vlan = vlan;
  return apply(pf, v);
}

absl::Status NetlinkPfControl::setVfTrust(const std::string& pf, uint32_t vf, bool on) {
  VfSettingValue v;
  v.setting = VfSetting::kTrust;
  v.vf = vf;
  v.on = on;
  return apply(pf, v);
}

absl::Status NetlinkPfControl::setVfSpoofCheck(const std::string& pf, uint32_t vf, bool on) {
  VfSettingValue v;
  v.setting = VfSetting::kSpoofCheck;
  v.vf = vf;
  v.on = on;
  return apply(pf, v);
}

absl::Status NetlinkPfControl::setVfLinkState(const std::string& pf, uint32_t vf, VfLinkState state) {
  VfSettingValue v;
  v.setting = VfSetting::kLinkState;
  v.vf = vf;
  v.link_state = state;
  return apply(pf, v);
}

absl::Status NetlinkPfControl::setVfRate(const std::string& pf, uint32_t vf, uint32_t min_tx_rate,
                                         uint32_t max_tx_rate) {
  VfSettingValue v;
  v.setting = VfSetting::kRate;
  v.vf = vf;
  v.min_tx_rate = min_tx_rate;
  v.max_tx_rate = max_tx_rate;
  return apply(pf, v);
}

absl::Status NetlinkPfControl::resetVf(const std::string& pf, uint32_t vf) {
  absl::Status first;
  for (absl::Status s : {setVfMac(pf, vf, MacAddress{}), setVfVlan(pf, vf, VfVlan{}), setVfTrust(pf, vf, false),
                         setVfSpoofCheck(pf, vf, true)})
    if (first.ok()) first = s;
  return first;
}

}  // namespace sluice::sriov

namespace {
std::unique_ptr<sluice::sriov::PfControl> makeNetlinkPfControl() {
  return std::make_unique<sluice::sriov::NetlinkPfControl>();
}
}  // namespace

SLUICE_REGISTER_PF_CONTROL(netlink, makeNetlinkPfControl);
