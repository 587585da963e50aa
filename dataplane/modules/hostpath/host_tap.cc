#include "dataplane/modules/hostpath/host_tap.h"

#include <absl/strings/str_cat.h>
#include <net/if.h>
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "dataplane/core/ethdev_open.h"

namespace sluice::hostpath {
namespace {

absl::Status errnoStatus(const std::string& what, int err) {
  return absl::InternalError(absl::StrCat("host-interface: ", what, ": ", std::strerror(err)));
}

// The kernel interface's index, MAC and MTU, and it brought up (net_tap
// brings it up on start; asked again so that the route below finds it up).
absl::Status readKernelSide(const std::string& iface, int& ifindex, MacAddress& mac, uint16_t& mtu) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoStatus("socket", errno);
  auto ioctlOn = [&](unsigned long request, ifreq& ifr) -> int {
    std::memset(&ifr, 0, sizeof ifr);
    std::strncpy(ifr.ifr_name, iface.c_str(), IFNAMSIZ - 1);
    return ::ioctl(fd, request, &ifr);
  };
  ifreq ifr;
  absl::Status status = absl::OkStatus();
  if (ioctlOn(SIOCGIFFLAGS, ifr) != 0) {
    status = errnoStatus(absl::StrCat("reading ", iface), errno);
  } else {
    const short flags = ifr.ifr_flags;
    if ((flags & IFF_UP) == 0) {
      ioctlOn(SIOCGIFFLAGS, ifr);
      ifr.ifr_flags = static_cast<short>(flags | IFF_UP);
      if (::ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) status = errnoStatus(absl::StrCat("bringing ", iface, " up"), errno);
    }
  }
  if (status.ok() && ioctlOn(SIOCGIFINDEX, ifr) == 0) ifindex = ifr.ifr_ifindex;
  else if (status.ok()) status = errnoStatus(absl::StrCat("index of ", iface), errno);
  if (status.ok() && ioctlOn(SIOCGIFHWADDR, ifr) == 0) std::memcpy(mac.bytes.data(), ifr.ifr_hwaddr.sa_data, 6);
  else if (status.ok()) status = errnoStatus(absl::StrCat("MAC of ", iface), errno);
  if (status.ok() && ioctlOn(SIOCGIFMTU, ifr) == 0) mtu = static_cast<uint16_t>(ifr.ifr_mtu);
  else if (status.ok()) status = errnoStatus(absl::StrCat("MTU of ", iface), errno);
  ::close(fd);
  return status;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HostTap>> HostTap::open(const std::string& iface, const std::vector<KernelRoute>& routes,
                                                       rte_mempool* pool) {
  std::unique_ptr<HostTap> t(new HostTap());
  t->iface_ = iface;
  if (::if_nametoindex(iface.c_str()) != 0)
    return absl::AlreadyExistsError(absl::StrCat("host-interface: ", iface,
                                                 " exists already in this network namespace (another sluiced's, or "
                                                 "a leftover: delete it)"));
  t->vdev_name_ = "net_tap_sluice_host";
  const std::string args = absl::StrCat("iface=", iface);
  if (int rc = rte_eal_hotplug_add("vdev", t->vdev_name_.c_str(), args.c_str()); rc != 0)
    return absl::InternalError(absl::StrCat("host-interface: creating the TAP ", iface, ": ", rte_strerror(-rc)));
  t->hotplugged_ = true;
  if (int rc = rte_eth_dev_get_port_by_name(t->vdev_name_.c_str(), &t->port_); rc != 0)
    return absl::InternalError(absl::StrCat("host-interface: finding the TAP's port: ", rte_strerror(-rc)));
  t->have_port_ = true;
  rte_eth_conf conf{};
  if (absl::Status s = openEthdev(t->port_, conf, pool); !s.ok())
    return absl::Status(s.code(), absl::StrCat("host-interface: ", s.message()));
  t->started_ = true;
  if (absl::Status s = readKernelSide(iface, t->ifindex_, t->kernel_mac_, t->mtu_); !s.ok()) return s;
  for (const KernelRoute& r : routes) {
    if (absl::Status s = changeKernelRoute(true, t->ifindex_, r); !s.ok())
      return absl::Status(s.code(), absl::StrCat("host-interface: ", s.message(),
                                                 s.code() == absl::StatusCode::kInvalidArgument
                                                     ? " (is each of host-addresses an address of this node?)"
                                                     : ""));
    t->routes_added_.push_back(r);
  }
  logInfo("host interface ", iface, ": port ", t->port_, ", kernel MAC ", t->kernel_mac_.toString(), ", MTU ",
          t->mtu_, ", ", t->routes_added_.size(), " route(s) to the pods");
  return t;
}

HostTap::~HostTap() {
  // The kernel drops an interface's routes with it; deleted first anyway,
  // so that nothing routes into a TAP that is going away.
  for (const KernelRoute& r : routes_added_)
    if (absl::Status s = changeKernelRoute(false, ifindex_, r); !s.ok()) logWarning("host-interface: ", s.message());
  if (started_) rte_eth_dev_stop(port_);
  if (hotplugged_) {
    if (have_port_) rte_eth_dev_close(port_);
    rte_eal_hotplug_remove("vdev", vdev_name_.c_str());
  }
}

}  // namespace sluice::hostpath
