// See rtnetlink.h.
#include "cni-plugin/rtnetlink.h"

#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "cni-plugin/text.h"
#include "common/rtnetlink/netlink_message.h"

namespace sluice::cni {
namespace {

// Every request here is answered within milliseconds; bound the wait so a
// wedged kernel path fails the ADD instead of hanging the runtime.
constexpr std::chrono::seconds kReplyTimeout{5};

using rtnetlink::RequestBuilder;

absl::Status fromErrno(int err, std::string_view what) {
  std::string msg = cat(what, ": ", std::strerror(err));
  switch (err) {
    case ENODEV:
    case ENOENT: return absl::NotFoundError(msg);
    case EEXIST:
    case EBUSY: return absl::AlreadyExistsError(msg);
    case EPERM:
    case EACCES: return absl::PermissionDeniedError(msg);
    case EINVAL:
    case ERANGE: return absl::InvalidArgumentError(msg);
    default: return absl::InternalError(msg);
  }
}

void parseLink(std::span<const uint8_t> message, LinkInfo& out) {
  const uint8_t* msg = message.data();
  const size_t len = message.size();
  if (len < NLMSG_LENGTH(sizeof(ifinfomsg))) return;
  ifinfomsg ifi;
  std::memcpy(&ifi, msg + NLMSG_HDRLEN, sizeof ifi);
  out.ifindex = ifi.ifi_index;
  out.up = (ifi.ifi_flags & IFF_UP) != 0;
  size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  while (off + sizeof(rtattr) <= len) {
    rtattr a;
    std::memcpy(&a, msg + off, sizeof a);
    if (a.rta_len < sizeof(rtattr) || off + a.rta_len > len) break;
    const uint8_t* data = msg + off + RTA_LENGTH(0);
    size_t dlen = a.rta_len - RTA_LENGTH(0);
    if (a.rta_type == IFLA_IFNAME) {
      out.name.assign(reinterpret_cast<const char*>(data), strnlen(reinterpret_cast<const char*>(data), dlen));
    } else if (a.rta_type == IFLA_ADDRESS && dlen == 6) {
      std::memcpy(out.mac.bytes.data(), data, 6);
    } else if (a.rta_type == IFLA_MTU && dlen == 4) {
      std::memcpy(&out.mtu, data, 4);
    }
    off += RTA_ALIGN(a.rta_len);
  }
}

}  // namespace

std::vector<uint8_t> buildSetLinkRequest(uint32_t seq, int ifindex, const LinkChange& c) {
  RequestBuilder req(RTM_SETLINK, 0, seq);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  if (c.up) {
    ifi.ifi_change = IFF_UP;
    ifi.ifi_flags = *c.up ? IFF_UP : 0;
  }
  req.addFamilyMessage(ifi);
  if (c.name) req.addAttribute(IFLA_IFNAME, c.name->c_str(), c.name->size() + 1);
  if (c.mac) req.addAttribute(IFLA_ADDRESS, c.mac->bytes.data(), c.mac->bytes.size());
  if (c.mtu) req.addAttribute(IFLA_MTU, &*c.mtu, sizeof(uint32_t));
  if (c.netns_fd) {
    auto fd = static_cast<uint32_t>(*c.netns_fd);
    req.addAttribute(IFLA_NET_NS_FD, &fd, sizeof fd);
  }
  return std::move(req).finish();
}

std::vector<uint8_t> buildAddAddressRequest(uint32_t seq, int ifindex, Ipv4Address address, uint8_t prefix_len) {
  RequestBuilder req(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, seq);
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = prefix_len;
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  req.addFamilyMessage(ifa);
  uint32_t be = address.networkOrder();
  req.addAttribute(IFA_LOCAL, &be, sizeof be);
  req.addAttribute(IFA_ADDRESS, &be, sizeof be);
  return std::move(req).finish();
}

std::vector<uint8_t> buildAddRouteRequest(uint32_t seq, int ifindex, Ipv4Address dst, uint8_t dst_len,
                                          std::optional<Ipv4Address> gateway) {
  RequestBuilder req(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, seq);
  rtmsg rt{};
  rt.rtm_family = AF_INET;
  rt.rtm_dst_len = dst_len;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_BOOT;  // what `ip route add` uses
  rt.rtm_scope = gateway ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  rt.rtm_type = RTN_UNICAST;
  req.addFamilyMessage(rt);
  if (dst_len > 0) {
    uint32_t be = dst.networkOrder();
    req.addAttribute(RTA_DST, &be, sizeof be);
  }
  if (gateway) {
    uint32_t be = gateway->networkOrder();
    req.addAttribute(RTA_GATEWAY, &be, sizeof be);
  }
  auto oif = static_cast<uint32_t>(ifindex);
  req.addAttribute(RTA_OIF, &oif, sizeof oif);
  return std::move(req).finish();
}

std::vector<uint8_t> buildAddAddressRequest(uint32_t seq, int ifindex, const Ipv6Address& address,
                                            uint8_t prefix_len) {
  RequestBuilder req(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, seq);
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET6;
  ifa.ifa_prefixlen = prefix_len;
  ifa.ifa_flags = IFA_F_NODAD;  // see rtnetlink.h
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  req.addFamilyMessage(ifa);
  // No peer: IFA_ADDRESS is the local address too (what `ip -6 addr add` sends).
  req.addAttribute(IFA_LOCAL, address.bytes.data(), address.bytes.size());
  req.addAttribute(IFA_ADDRESS, address.bytes.data(), address.bytes.size());
  return std::move(req).finish();
}

std::vector<uint8_t> buildAddRouteRequest(uint32_t seq, int ifindex, const Ipv6Address& dst, uint8_t dst_len,
                                          const std::optional<Ipv6Address>& gateway) {
  RequestBuilder req(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, seq);
  rtmsg rt{};
  rt.rtm_family = AF_INET6;
  rt.rtm_dst_len = dst_len;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_BOOT;  // what `ip route add` uses
  // IPv6 routes are universe scope whether on-link or via a gateway (the
  // kernel ignores the scope of IPv6 routes; `ip -6 route` sends universe).
  rt.rtm_scope = RT_SCOPE_UNIVERSE;
  rt.rtm_type = RTN_UNICAST;
  req.addFamilyMessage(rt);
  if (dst_len > 0) req.addAttribute(RTA_DST, dst.bytes.data(), dst.bytes.size());
  if (gateway) req.addAttribute(RTA_GATEWAY, gateway->bytes.data(), gateway->bytes.size());
  auto oif = static_cast<uint32_t>(ifindex);
  req.addAttribute(RTA_OIF, &oif, sizeof oif);
  return std::move(req).finish();
}

absl::StatusOr<NetnsFd> NetnsFd::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fromErrno(errno, cat("netns ", path));
  NetnsFd ns(fd);
  // A bind-mounted nsfs file or /proc/<pid>/ns/net; setns() would refuse
  // anything else, but an early, clear answer beats a late EINVAL.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(cat("netns ", path, ": not a network namespace file"));
  }
  return ns;
}

absl::StatusOr<NetnsFd> NetnsFd::current() { return open("/proc/thread-self/ns/net"); }

NetnsFd& NetnsFd::operator=(NetnsFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

NetnsFd::~NetnsFd() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<RtNetlink> RtNetlink::open(const NetnsFd* netns) {
  std::optional<NetnsFd> home;
  if (netns != nullptr) {
    absl::StatusOr<NetnsFd> self = NetnsFd::current();
    if (!self.ok()) return self.status();
    home = std::move(*self);
    if (::setns(netns->fd(), CLONE_NEWNET) != 0) return fromErrno(errno, "entering the pod's netns");
  }
  rtnetlink::RouteSocket socket = rtnetlink::RouteSocket::open(kReplyTimeout);
  if (home && ::setns(home->fd(), CLONE_NEWNET) != 0) {
    // This thread would go on (and exec IPAM) in the pod's namespace: stop.
    return fromErrno(errno, "returning to sluice-cni's own netns");
  }
  if (!socket.isOpen()) return fromErrno(socket.openErrno(), "netlink socket");
  return RtNetlink(std::move(socket));
}

absl::Status RtNetlink::transact(std::vector<uint8_t> request, uint32_t seq, LinkInfo* link) {
  if (int err = socket_.send(request); err != 0) return fromErrno(err, "netlink send");
  std::array<uint8_t, 16384> buf;
  for (;;) {
    const ssize_t n = socket_.receive(buf);
    if (n < 0) return fromErrno(static_cast<int>(-n), "netlink receive");
    rtnetlink::ReplyReader reader(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
    nlmsghdr hdr;
    std::span<const uint8_t> msg;
    while (reader.next(hdr, msg)) {
      if (hdr.nlmsg_seq != seq) continue;
      if (hdr.nlmsg_type == NLMSG_ERROR) {
        const std::optional<int> error = rtnetlink::ackError(msg);
        if (!error) return absl::InternalError("netlink: truncated ack");
        return *error == 0 ? absl::OkStatus() : fromErrno(-*error, "netlink");
      }
      if (hdr.nlmsg_type == RTM_NEWLINK && link != nullptr) parseLink(msg, *link);
    }
    if (reader.malformed()) return absl::InternalError("netlink: malformed reply");
  }
}

absl::StatusOr<LinkInfo> RtNetlink::getLinkRequest(int ifindex, const std::string& name) {
  const uint32_t seq = seq_++;
  RequestBuilder req(RTM_GETLINK, 0, seq);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  req.addFamilyMessage(ifi);
  if (!name.empty()) req.addAttribute(IFLA_IFNAME, name.c_str(), name.size() + 1);
  LinkInfo link;
  absl::Status s = transact(std::move(req).finish(), seq, &link);
  if (!s.ok()) {
    return absl::Status(s.code(), asv(cat("link ", name.empty() ? cat("#", ifindex) : name, ": ", sv(s.message()))));
  }
  if (link.ifindex == 0) return absl::NotFoundError(asv(cat("link ", name, ": no reply")));
  return link;
}

absl::StatusOr<LinkInfo> RtNetlink::getLink(const std::string& name) { return getLinkRequest(0, name); }
absl::StatusOr<LinkInfo> RtNetlink::getLink(int ifindex) { return getLinkRequest(ifindex, ""); }

absl::Status RtNetlink::setLink(int ifindex, const LinkChange& change) {
  const uint32_t seq = seq_++;
  return transact(buildSetLinkRequest(seq, ifindex, change), seq, nullptr);
}

absl::Status RtNetlink::addAddress(int ifindex, Ipv4Address address, uint8_t prefix_len) {
  const uint32_t seq = seq_++;
  return transact(buildAddAddressRequest(seq, ifindex, address, prefix_len), seq, nullptr);
}

absl::Status RtNetlink::addRoute(int ifindex, Ipv4Address dst, uint8_t dst_len, std::optional<Ipv4Address> gateway) {
  const uint32_t seq = seq_++;
  return transact(buildAddRouteRequest(seq, ifindex, dst, dst_len, gateway), seq, nullptr);
}

absl::Status RtNetlink::addAddress(int ifindex, const Ipv6Address& address, uint8_t prefix_len) {
  const uint32_t seq = seq_++;
  return transact(buildAddAddressRequest(seq, ifindex, address, prefix_len), seq, nullptr);
}

absl::Status RtNetlink::addRoute(int ifindex, const Ipv6Address& dst, uint8_t dst_len,
                                 const std::optional<Ipv6Address>& gateway) {
  const uint32_t seq = seq_++;
  return transact(buildAddRouteRequest(seq, ifindex, dst, dst_len, gateway), seq, nullptr);
}

}  // namespace sluice::cni
