// See netlink_pf_control.h.
#include "dataplane/modules/sriov/netlink_pf_control.h"

#include <absl/strings/str_cat.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace sluice::sriov {
namespace {

// Appends a plain struct's bytes (netlink is in host byte order).
template <typename T>
void put(std::vector<uint8_t>& buf, const T& value) {
  const auto* p = reinterpret_cast<const uint8_t*>(&value);
  buf.insert(buf.end(), p, p + sizeof(T));
}

void pad(std::vector<uint8_t>& buf) { buf.resize(NLMSG_ALIGN(buf.size()), 0); }

// Opens an attribute; returns its offset so closeAttr can fill in the length.
size_t openAttr(std::vector<uint8_t>& buf, uint16_t type) {
  size_t at = buf.size();
  put(buf, rtattr{0, type});
  return at;
}

void closeAttr(std::vector<uint8_t>& buf, size_t at) {
  auto len = static_cast<unsigned short>(buf.size() - at);
  std::memcpy(buf.data() + at + offsetof(rtattr, rta_len), &len, sizeof len);
  pad(buf);
}

absl::string_view settingName(VfSetting s) {
  switch (s) {
    case VfSetting::kMac: return "mac";
    case VfSetting::kVlan: return "vlan";
    case VfSetting::kTrust: return "trust";
    case VfSetting::kSpoofCheck: return "spoofchk";
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

// A NETLINK_ROUTE socket closed on scope exit.
class Socket {
 public:
  Socket() : fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// The kernel acknowledges a SETLINK within microseconds; a PF driver that
// talks to firmware may take longer. Beyond this the call is reported failed.
constexpr int kAckTimeoutSeconds = 5;

}  // namespace

std::vector<uint8_t> buildVfSetLinkRequest(uint32_t seq, int pf_ifindex, const VfSettingValue& v) {
  std::vector<uint8_t> buf;
  nlmsghdr hdr{};
  hdr.nlmsg_type = RTM_SETLINK;
  hdr.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  hdr.nlmsg_seq = seq;
  put(buf, hdr);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = pf_ifindex;
  put(buf, ifi);
  pad(buf);
  size_t list = openAttr(buf, IFLA_VFINFO_LIST);
  size_t info = openAttr(buf, IFLA_VF_INFO);
  size_t attr = 0;
  switch (v.setting) {
    case VfSetting::kMac: {
      attr = openAttr(buf, IFLA_VF_MAC);
      ifla_vf_mac mac{};
      mac.vf = v.vf;
      std::memcpy(mac.mac, v.mac.bytes.data(), v.mac.bytes.size());
      put(buf, mac);
      break;
    }
    case VfSetting::kVlan: {
      attr = openAttr(buf, IFLA_VF_VLAN);
      put(buf, ifla_vf_vlan{v.vf, v.vlan, 0});
      break;
    }
    case VfSetting::kTrust: {
      attr = openAttr(buf, IFLA_VF_TRUST);
      put(buf, ifla_vf_trust{v.vf, v.on ? 1u : 0u});
      break;
    }
    case VfSetting::kSpoofCheck: {
      attr = openAttr(buf, IFLA_VF_SPOOFCHK);
      put(buf, ifla_vf_spoofchk{v.vf, v.on ? 1u : 0u});
      break;
    }
  }
  closeAttr(buf, attr);
  closeAttr(buf, info);
  closeAttr(buf, list);
  auto total = static_cast<uint32_t>(buf.size());
  std::memcpy(buf.data() + offsetof(nlmsghdr, nlmsg_len), &total, sizeof total);
  return buf;
}

absl::Status parseNetlinkAck(std::span<const uint8_t> reply, uint32_t seq) {
  if (reply.size() < sizeof(nlmsghdr)) return absl::InternalError("netlink: truncated reply");
  nlmsghdr hdr;
  std::memcpy(&hdr, reply.data(), sizeof hdr);
  if (hdr.nlmsg_len < sizeof(nlmsghdr) || hdr.nlmsg_len > reply.size())
    return absl::InternalError("netlink: reply length field out of range");
  if (hdr.nlmsg_seq != seq)
    return absl::InternalError(absl::StrCat("netlink: reply to request ", hdr.nlmsg_seq, ", expected ", seq));
  if (hdr.nlmsg_type != NLMSG_ERROR)
    return absl::InternalError(absl::StrCat("netlink: unexpected reply type ", hdr.nlmsg_type));
  if (hdr.nlmsg_len < NLMSG_LENGTH(sizeof(int))) return absl::InternalError("netlink: truncated error reply");
  int error = 0;
  std::memcpy(&error, reply.data() + NLMSG_HDRLEN, sizeof error);
  if (error == 0) return absl::OkStatus();
  if (error > 0) return absl::InternalError(absl::StrCat("netlink: positive error code ", error));
  return fromErrno(-error, "netlink");
}

absl::Status NetlinkPfControl::apply(const std::string& pf, const VfSettingValue& value) {
  const std::string what = absl::StrCat("pf ", pf, " vf ", value.vf, " ", settingName(value.setting));
  unsigned ifindex = ::if_nametoindex(pf.c_str());
  if (ifindex == 0) return fromErrno(errno == ENXIO ? ENODEV : errno, absl::StrCat(what, ": no netdev ", pf));
  Socket sock;
  if (sock.fd() < 0) return fromErrno(errno, absl::StrCat(what, ": netlink socket"));
  timeval tv{kAckTimeoutSeconds, 0};
  ::setsockopt(sock.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const uint32_t seq = seq_++;
  std::vector<uint8_t> req = buildVfSetLinkRequest(seq, static_cast<int>(ifindex), value);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(sock.fd(), req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return fromErrno(errno, absl::StrCat(what, ": send"));
  // An ack is a header, the error code and the echoed request header; with
  // extended acks the kernel may append attributes. 8 KiB is ample.
  std::array<uint8_t, 8192> buf;
  ssize_t n = ::recv(sock.fd(), buf.data(), buf.size(), 0);
  if (n < 0) return fromErrno(errno, absl::StrCat(what, ": waiting for the kernel's answer"));
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

absl::Status NetlinkPfControl::setVfVlan(const std::string& pf, uint32_t vf, uint16_t vlan) {
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

absl::Status NetlinkPfControl::resetVf(const std::string& pf, uint32_t vf) {
  absl::Status first;
  for (absl::Status s : {setVfMac(pf, vf, MacAddress{}), setVfVlan(pf, vf, 0), setVfTrust(pf, vf, false),
                         setVfSpoofCheck(pf, vf, true)})
    if (first.ok()) first = s;
  return first;
}

}  // namespace sluice::sriov
