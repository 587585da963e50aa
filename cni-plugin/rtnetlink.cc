// See rtnetlink.h.
#include "cni-plugin/rtnetlink.h"

#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

// Every request here is answered within milliseconds; bound the wait so a
// wedged kernel path fails the ADD instead of hanging the runtime.
constexpr int kReplyTimeoutSeconds = 5;

// resize + memcpy rather than insert(): GCC 12 warns (wrongly) about
// insert() of a few bytes into a vector that may be empty.
void putBytes(std::vector<uint8_t>& buf, const void* data, size_t len) {
  const size_t at = buf.size();
  buf.resize(at + len);
  std::memcpy(buf.data() + at, data, len);
}

template <typename T>
void put(std::vector<uint8_t>& buf, const T& value) {
  putBytes(buf, &value, sizeof(T));
}

void pad(std::vector<uint8_t>& buf) { buf.resize(NLMSG_ALIGN(buf.size()), 0); }

void attr(std::vector<uint8_t>& buf, uint16_t type, const void* data, size_t len) {
  put(buf, rtattr{static_cast<unsigned short>(RTA_LENGTH(len)), type});
  putBytes(buf, data, len);
  pad(buf);
}

std::vector<uint8_t> start(uint16_t type, uint16_t flags, uint32_t seq) {
  std::vector<uint8_t> buf;
  nlmsghdr hdr{};
  hdr.nlmsg_type = type;
  hdr.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags);
  hdr.nlmsg_seq = seq;
  put(buf, hdr);
  return buf;
}

std::vector<uint8_t> finish(std::vector<uint8_t> buf) {
  auto len = static_cast<uint32_t>(buf.size());
  std::memcpy(buf.data() + offsetof(nlmsghdr, nlmsg_len), &len, sizeof len);
  return buf;
}

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

void parseLink(const uint8_t* msg, size_t len, LinkInfo& out) {
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
  std::vector<uint8_t> buf = start(RTM_SETLINK, 0, seq);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  if (c.up) {
    ifi.ifi_change = IFF_UP;
    ifi.ifi_flags = *c.up ? IFF_UP : 0;
  }
  put(buf, ifi);
  pad(buf);
  if (c.name) attr(buf, IFLA_IFNAME, c.name->c_str(), c.name->size() + 1);
  if (c.mac) attr(buf, IFLA_ADDRESS, c.mac->bytes.data(), c.mac->bytes.size());
  if (c.mtu) attr(buf, IFLA_MTU, &*c.mtu, sizeof(uint32_t));
  if (c.netns_fd) {
    auto fd = static_cast<uint32_t>(*c.netns_fd);
    attr(buf, IFLA_NET_NS_FD, &fd, sizeof fd);
  }
  return finish(std::move(buf));
}

std::vector<uint8_t> buildAddAddressRequest(uint32_t seq, int ifindex, Ipv4Address address, uint8_t prefix_len) {
  std::vector<uint8_t> buf = start(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, seq);
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = prefix_len;
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  put(buf, ifa);
  pad(buf);
  uint32_t be = address.networkOrder();
  attr(buf, IFA_LOCAL, &be, sizeof be);
  attr(buf, IFA_ADDRESS, &be, sizeof be);
  return finish(std::move(buf));
}

std::vector<uint8_t> buildAddRouteRequest(uint32_t seq, int ifindex, Ipv4Address dst, uint8_t dst_len,
                                          std::optional<Ipv4Address> gateway) {
  std::vector<uint8_t> buf = start(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, seq);
  rtmsg rt{};
  rt.rtm_family = AF_INET;
  rt.rtm_dst_len = dst_len;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_BOOT;  // what `ip route add` uses
  rt.rtm_scope = gateway ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  rt.rtm_type = RTN_UNICAST;
  put(buf, rt);
  pad(buf);
  if (dst_len > 0) {
    uint32_t be = dst.networkOrder();
    attr(buf, RTA_DST, &be, sizeof be);
  }
  if (gateway) {
    uint32_t be = gateway->networkOrder();
    attr(buf, RTA_GATEWAY, &be, sizeof be);
  }
  auto oif = static_cast<uint32_t>(ifindex);
  attr(buf, RTA_OIF, &oif, sizeof oif);
  return finish(std::move(buf));
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
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  int socket_errno = errno;
  if (home && ::setns(home->fd(), CLONE_NEWNET) != 0) {
    // This thread would go on (and exec IPAM) in the pod's namespace: stop.
    if (fd >= 0) ::close(fd);
    return fromErrno(errno, "returning to sluice-cni's own netns");
  }
  if (fd < 0) return fromErrno(socket_errno, "netlink socket");
  timeval tv{kReplyTimeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return RtNetlink(fd);
}

RtNetlink::~RtNetlink() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status RtNetlink::transact(std::vector<uint8_t> request, uint32_t seq, LinkInfo* link) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return fromErrno(errno, "netlink send");
  }
  std::array<uint8_t, 16384> buf;
  for (;;) {
    ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
    if (n < 0) return fromErrno(errno, "netlink receive");
    size_t off = 0;
    while (off + sizeof(nlmsghdr) <= static_cast<size_t>(n)) {
      nlmsghdr hdr;
      std::memcpy(&hdr, buf.data() + off, sizeof hdr);
      if (hdr.nlmsg_len < sizeof(nlmsghdr) || off + hdr.nlmsg_len > static_cast<size_t>(n)) {
        return absl::InternalError("netlink: malformed reply");
      }
      const uint8_t* msg = buf.data() + off;
      off += NLMSG_ALIGN(hdr.nlmsg_len);
      if (hdr.nlmsg_seq != seq) continue;
      if (hdr.nlmsg_type == NLMSG_ERROR) {
        if (hdr.nlmsg_len < NLMSG_LENGTH(sizeof(int))) return absl::InternalError("netlink: truncated ack");
        int error = 0;
        std::memcpy(&error, msg + NLMSG_HDRLEN, sizeof error);
        return error == 0 ? absl::OkStatus() : fromErrno(-error, "netlink");
      }
      if (hdr.nlmsg_type == RTM_NEWLINK && link != nullptr) parseLink(msg, hdr.nlmsg_len, *link);
    }
  }
}

absl::StatusOr<LinkInfo> RtNetlink::getLinkRequest(int ifindex, const std::string& name) {
  const uint32_t seq = seq_++;
  std::vector<uint8_t> buf = start(RTM_GETLINK, 0, seq);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  put(buf, ifi);
  pad(buf);
  if (!name.empty()) attr(buf, IFLA_IFNAME, name.c_str(), name.size() + 1);
  LinkInfo link;
  absl::Status s = transact(finish(std::move(buf)), seq, &link);
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

}  // namespace sluice::cni
