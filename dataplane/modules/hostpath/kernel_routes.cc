#include "dataplane/modules/hostpath/kernel_routes.h"

#include <absl/strings/str_cat.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstring>

#include "common/rtnetlink/netlink_message.h"
#include "common/rtnetlink/netlink_socket.h"

namespace sluice::hostpath {
namespace {

// A route change is answered within milliseconds; a wedged kernel path
// fails sluiced's start instead of hanging it.
constexpr std::chrono::seconds kAckTimeout{5};

std::atomic<uint32_t> next_seq{1};

absl::Status fromErrno(int err, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case EEXIST: return absl::AlreadyExistsError(msg);
    case EPERM:
    case EACCES: return absl::PermissionDeniedError(msg);
    case EINVAL: return absl::InvalidArgumentError(msg);
    case ENODEV:
    case ESRCH:
    case ENOENT: return absl::NotFoundError(msg);
    default: return absl::InternalError(msg);
  }
}

}  // namespace

std::string KernelRoute::toString() const {
  std::string s = v4 ? v4->toString() : v6->toString();
  if (v4 && source4) absl::StrAppend(&s, " src ", source4->toString());
  if (v6 && source6) absl::StrAppend(&s, " src ", source6->toString());
  return s;
}

std::vector<uint8_t> buildRouteRequest(bool add, uint32_t seq, int ifindex, const KernelRoute& route) {
  rtnetlink::RequestBuilder req(add ? RTM_NEWROUTE : RTM_DELROUTE, add ? NLM_F_CREATE | NLM_F_EXCL : 0, seq);
  rtmsg rt{};
  rt.rtm_family = route.v4 ? AF_INET : AF_INET6;
  rt.rtm_dst_len = route.v4 ? route.v4->prefix_len : route.v6->prefix_len;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_BOOT;  // what `ip route add` uses
  // On-link: IPv4 link scope; IPv6 routes are universe whatever they are.
  rt.rtm_scope = route.v4 ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
  rt.rtm_type = RTN_UNICAST;
  req.addFamilyMessage(rt);
  if (route.v4) {
    const uint32_t dst = route.v4->network.networkOrder();
    req.addAttribute(RTA_DST, &dst, sizeof dst);
    if (route.source4) {
      const uint32_t src = route.source4->networkOrder();
      req.addAttribute(RTA_PREFSRC, &src, sizeof src);
    }
  } else {
    req.addAttribute(RTA_DST, route.v6->network.bytes.data(), 16);
    if (route.source6) req.addAttribute(RTA_PREFSRC, route.source6->bytes.data(), 16);
  }
  const auto oif = static_cast<uint32_t>(ifindex);
  req.addAttribute(RTA_OIF, &oif, sizeof oif);
  return std::move(req).finish();
}

absl::Status changeKernelRoute(bool add, int ifindex, const KernelRoute& route) {
  const std::string what = absl::StrCat(add ? "adding" : "deleting", " the kernel route ", route.toString());
  rtnetlink::RouteSocket sock = rtnetlink::RouteSocket::open(kAckTimeout);
  if (!sock.isOpen()) return fromErrno(sock.openErrno(), absl::StrCat(what, ": netlink socket"));
  const uint32_t seq = next_seq.fetch_add(1);
  if (int err = sock.send(buildRouteRequest(add, seq, ifindex, route)); err != 0)
    return fromErrno(err, absl::StrCat(what, ": send"));
  std::array<uint8_t, 8192> buf;
  const ssize_t n = sock.receive(buf);
  if (n < 0) return fromErrno(static_cast<int>(-n), absl::StrCat(what, ": waiting for the kernel's answer"));
  rtnetlink::ReplyReader reader(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
  nlmsghdr hdr;
  std::span<const uint8_t> message;
  if (!reader.next(hdr, message) || hdr.nlmsg_seq != seq || hdr.nlmsg_type != NLMSG_ERROR)
    return absl::InternalError(absl::StrCat(what, ": unexpected netlink reply"));
  const std::optional<int> error = rtnetlink::ackError(message);
  if (!error) return absl::InternalError(absl::StrCat(what, ": truncated netlink reply"));
  if (*error == 0) return absl::OkStatus();
  return fromErrno(-*error, what);
}

}  // namespace sluice::hostpath
