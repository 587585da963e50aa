// A minimal rtnetlink client for sluice-cni's SR-IOV kernel mode: look up a
// link, set its name, MAC, MTU and up/down state, move it to another network
// namespace, add IPv4 and IPv6 addresses and routes. Raw NETLINK_ROUTE sockets (no
// libnl); a socket works in the namespace it was created in, so one opened
// "in" a pod's namespace keeps acting there after the thread returns to its
// own. Request building is a pure function (unit-tested to the byte). Used by
// the single (main) thread of the sluice-cni process; gRPC's threads never
// change namespace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/net_address.h"
#include "common/rtnetlink/netlink_socket.h"

namespace sluice::cni {

struct LinkInfo {
  int ifindex = 0;
  std::string name;
  MacAddress mac;
  uint32_t mtu = 0;
  bool up = false;  // IFF_UP
};

// What one RTM_SETLINK changes (unset fields are left alone).
struct LinkChange {
  std::optional<std::string> name;
  std::optional<MacAddress> mac;
  std::optional<uint32_t> mtu;
  std::optional<bool> up;
  std::optional<int> netns_fd;  // move the link to this namespace
};

// The RTM_SETLINK request for `change` on `ifindex` (pure; for tests).
std::vector<uint8_t> buildSetLinkRequest(uint32_t seq, int ifindex, const LinkChange& change);
// RTM_NEWADDR for address/prefix on ifindex (IFA_LOCAL and IFA_ADDRESS).
std::vector<uint8_t> buildAddAddressRequest(uint32_t seq, int ifindex, Ipv4Address address, uint8_t prefix_len);
// RTM_NEWROUTE (main table, static, universe or link scope) to dst/len via
// `gateway` (none: directly on the link) out of ifindex.
std::vector<uint8_t> buildAddRouteRequest(uint32_t seq, int ifindex, Ipv4Address dst, uint8_t dst_len,
                                          std::optional<Ipv4Address> gateway);
// The same for IPv6 (RTM_NEWROUTE in universe scope, as the kernel has all
// IPv6 routes). The address is added with IFA_F_NODAD: IPAM handed it
// out of this node's range to this pod alone, and a tentative address
// (Duplicate Address Detection takes a second by the kernel's defaults)
// could not be bound to by the pod's application nor used as a route's
// source until then, so the pod would start with IPv6 not yet working.
std::vector<uint8_t> buildAddAddressRequest(uint32_t seq, int ifindex, const Ipv6Address& address,
                                            uint8_t prefix_len);
std::vector<uint8_t> buildAddRouteRequest(uint32_t seq, int ifindex, const Ipv6Address& dst, uint8_t dst_len,
                                          const std::optional<Ipv6Address>& gateway);

// A network namespace opened by path (/var/run/netns/x, /proc/<pid>/ns/net).
class NetnsFd {
 public:
  // NotFound when the path does not exist; InvalidArgument when it is not a
  // network namespace.
  static absl::StatusOr<NetnsFd> open(const std::string& path);
  // The calling thread's current namespace.
  static absl::StatusOr<NetnsFd> current();
  NetnsFd(NetnsFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  NetnsFd& operator=(NetnsFd&& o) noexcept;
  NetnsFd(const NetnsFd&) = delete;
  NetnsFd& operator=(const NetnsFd&) = delete;
  ~NetnsFd();
  int fd() const { return fd_; }

 private:
  explicit NetnsFd(int fd) : fd_(fd) {}
  int fd_ = -1;
};

class RtNetlink {
 public:
  // A socket in the calling thread's namespace, or in `netns` (the thread
  // enters it only to create the socket, and returns).
  static absl::StatusOr<RtNetlink> open(const NetnsFd* netns = nullptr);
  RtNetlink(RtNetlink&& o) noexcept = default;
  RtNetlink& operator=(RtNetlink&&) = delete;
  RtNetlink(const RtNetlink&) = delete;
  RtNetlink& operator=(const RtNetlink&) = delete;

  // NotFound when there is no such link in this socket's namespace.
  absl::StatusOr<LinkInfo> getLink(const std::string& name);
  absl::StatusOr<LinkInfo> getLink(int ifindex);
  absl::Status setLink(int ifindex, const LinkChange& change);
  absl::Status addAddress(int ifindex, Ipv4Address address, uint8_t prefix_len);
  absl::Status addRoute(int ifindex, Ipv4Address dst, uint8_t dst_len, std::optional<Ipv4Address> gateway);
  absl::Status addAddress(int ifindex, const Ipv6Address& address, uint8_t prefix_len);
  absl::Status addRoute(int ifindex, const Ipv6Address& dst, uint8_t dst_len,
                        const std::optional<Ipv6Address>& gateway);

 private:
  explicit RtNetlink(rtnetlink::RouteSocket socket) : socket_(std::move(socket)) {}
  // Sends a request and reads replies up to its ack; a reply carrying a
  // link (RTM_NEWLINK) is parsed into *link when given.
  absl::Status transact(std::vector<uint8_t> request, uint32_t seq, LinkInfo* link);
  absl::StatusOr<LinkInfo> getLinkRequest(int ifindex, const std::string& name);

  rtnetlink::RouteSocket socket_;
  uint32_t seq_ = 1;
};

}  // namespace sluice::cni
