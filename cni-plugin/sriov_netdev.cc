// See sriov_netdev.h.
#include "cni-plugin/sriov_netdev.h"

#include "cni-plugin/rtnetlink.h"
#include "cni-plugin/undo_stack.h"
#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

LinkChange upState(bool up) {
  LinkChange c;
  c.up = up;
  return c;
}

LinkChange toNetns(int fd) {
  LinkChange c;
  c.netns_fd = fd;
  return c;
}

LinkChange identity(const std::string& name, const MacAddress& mac, std::optional<uint32_t> mtu) {
  LinkChange c;
  c.name = name;
  if (!mac.isZero()) c.mac = mac;
  if (mtu && *mtu != 0) c.mtu = mtu;
  return c;
}

absl::Status withContext(const absl::Status& s, std::string_view what) {
  return absl::Status(s.code(), asv(cat(what, ": ", sv(s.message()))));
}

// In `pod` (a socket in the pod's namespace): link down, original name, MAC
// and MTU back, then out to the host namespace.
absl::Status sendHome(RtNetlink& pod, int ifindex, const HostNetdev& original) {
  absl::StatusOr<NetnsFd> host = NetnsFd::current();
  if (!host.ok()) return host.status();
  if (absl::Status s = pod.setLink(ifindex, upState(false)); !s.ok()) return withContext(s, "link down");
  if (absl::Status s = pod.setLink(ifindex, identity(original.name, original.mac, original.mtu)); !s.ok()) {
    return withContext(s, cat("restoring name ", original.name, ", MAC and MTU"));
  }
  if (absl::Status s = pod.setLink(ifindex, toNetns(host->fd())); !s.ok()) {
    return withContext(s, "moving back to the host netns");
  }
  return absl::OkStatus();
}

}  // namespace

PodNetdevConfig podNetdevConfig(const Result& ipam, std::string ifname, MacAddress mac,
                                std::optional<uint32_t> mtu, std::vector<std::string>* skipped) {
  PodNetdevConfig cfg{std::move(ifname), mac, mtu, {}, {}, {}, {}};
  std::optional<Ipv4Address> default_gw;
  std::optional<Ipv6Address> default_gw6;
  for (const nlohmann::json& ip : ipam.ips) {
    std::string address = ip.at("address").get<std::string>();
    auto gw = ip.find("gateway");
    const std::string gateway = gw != ip.end() ? gw->get<std::string>() : std::string();
    if (std::optional<Ipv4Assignment> a = parseIpv4Cidr(address)) {
      a->gateway = Ipv4Address::parse(gateway);
      if (!default_gw && a->gateway) default_gw = a->gateway;
      cfg.addresses.push_back(*a);
    } else if (std::optional<Ipv6Assignment> a6 = parseIpv6Cidr(address)) {
      a6->gateway = Ipv6Address::parse(gateway);
      if (!default_gw6 && a6->gateway) default_gw6 = a6->gateway;
      cfg.addresses6.push_back(*a6);
    } else if (skipped != nullptr) {
      skipped->push_back(address);
    }
  }
  for (const nlohmann::json& route : ipam.routes) {
    std::string dst = route.at("dst").get<std::string>();
    auto gw = route.find("gw");
    const std::string gateway = gw != route.end() ? gw->get<std::string>() : std::string();
    if (std::optional<Ipv4Assignment> d = parseIpv4Cidr(dst); d && !cfg.addresses.empty()) {
      PodRoute r{d->address, d->prefix_len, default_gw};
      if (gw != route.end()) r.gateway = Ipv4Address::parse(gateway);
      cfg.routes.push_back(r);
    } else if (std::optional<Ipv6Assignment> d6 = parseIpv6Cidr(dst); d6 && !cfg.addresses6.empty()) {
      PodRoute6 r{d6->address, d6->prefix_len, default_gw6};
      if (gw != route.end()) r.gateway = Ipv6Address::parse(gateway);
      cfg.routes6.push_back(r);
    } else if (skipped != nullptr) {
      skipped->push_back(dst);
    }
  }
  return cfg;
}

absl::StatusOr<HostNetdev> lookUpHostNetdev(const std::string& name) {
  absl::StatusOr<RtNetlink> host = RtNetlink::open();
  if (!host.ok()) return host.status();
  absl::StatusOr<LinkInfo> link = host->getLink(name);
  if (!link.ok()) return withContext(link.status(), "VF netdev in the host netns");
  return HostNetdev{link->name, link->mac, link->mtu};
}

absl::StatusOr<HostNetdev> moveIntoPod(const std::string& host_name, const std::string& netns_path,
                                       const PodNetdevConfig& config) {
  absl::StatusOr<NetnsFd> pod_ns = NetnsFd::open(netns_path);
  if (!pod_ns.ok()) return pod_ns.status();
  absl::StatusOr<RtNetlink> host = RtNetlink::open();
  if (!host.ok()) return host.status();
  absl::StatusOr<LinkInfo> link = host->getLink(host_name);
  if (!link.ok()) return withContext(link.status(), "VF netdev in the host netns");
  const HostNetdev original{link->name, link->mac, link->mtu};

  // Down before it moves: a VF must not pass traffic half-configured.
  if (absl::Status s = host->setLink(link->ifindex, upState(false)); !s.ok()) return withContext(s, "link down");
  // Declared before the undo stack: its actions use them as it unwinds.
  std::optional<RtNetlink> pod;
  std::optional<LinkInfo> moved;
  UndoStack undo;
  if (link->up) {
    undo.push([&] { (void)host->setLink(link->ifindex, upState(true)); });
  }
  if (absl::Status s = host->setLink(link->ifindex, toNetns(pod_ns->fd())); !s.ok()) {
    return withContext(s, "moving into the pod netns");
  }
  absl::StatusOr<RtNetlink> pod_sock = RtNetlink::open(&*pod_ns);
  if (!pod_sock.ok()) return pod_sock.status();  // the kernel returns it when the pod's netns dies
  pod.emplace(std::move(*pod_sock));
  absl::StatusOr<LinkInfo> found = pod->getLink(host_name);
  if (!found.ok()) return withContext(found.status(), "VF netdev in the pod netns");
  moved = *found;
  undo.push([&pod, &moved, &original] { (void)sendHome(*pod, moved->ifindex, original); });

  if (absl::Status s = pod->setLink(moved->ifindex, identity(config.ifname, config.mac, config.mtu)); !s.ok()) {
    return withContext(s, cat("renaming to ", config.ifname, ", setting MAC", config.mtu ? " and MTU" : ""));
  }
  if (absl::Status s = pod->setLink(moved->ifindex, upState(true)); !s.ok()) return withContext(s, "link up");
  for (const Ipv4Assignment& a : config.addresses) {
    if (absl::Status s = pod->addAddress(moved->ifindex, a.address, a.prefix_len); !s.ok()) {
      return withContext(s, cat("address ", a.address.toString(), "/", a.prefix_len));
    }
  }
  for (const PodRoute& r : config.routes) {
    if (absl::Status s = pod->addRoute(moved->ifindex, r.dst, r.dst_len, r.gateway); !s.ok()) {
      return withContext(s, cat("route ", r.dst.toString(), "/", r.dst_len,
                                r.gateway ? cat(" via ", r.gateway->toString()) : std::string()));
    }
  }
  for (const Ipv6Assignment& a : config.addresses6) {
    if (absl::Status s = pod->addAddress(moved->ifindex, a.address, a.prefix_len); !s.ok()) {
      return withContext(s, cat("address ", a.address.toString(), "/", a.prefix_len));
    }
  }
  for (const PodRoute6& r : config.routes6) {
    if (absl::Status s = pod->addRoute(moved->ifindex, r.dst, r.dst_len, r.gateway); !s.ok()) {
      return withContext(s, cat("route ", r.dst.toString(), "/", r.dst_len,
                                r.gateway ? cat(" via ", r.gateway->toString()) : std::string()));
    }
  }
  undo.dismiss();
  return original;
}

absl::Status checkInPod(const std::string& netns_path, const std::string& ifname, const MacAddress& mac) {
  absl::StatusOr<NetnsFd> ns = NetnsFd::open(netns_path);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<RtNetlink> pod = RtNetlink::open(&*ns);
  if (!pod.ok()) return pod.status();
  absl::StatusOr<LinkInfo> link = pod->getLink(ifname);
  if (!link.ok()) return link.status();
  if (link->mac != mac) {
    return absl::FailedPreconditionError(asv(cat("netdev ", ifname, " has MAC ", link->mac.toString(), ", not ",
                                                 mac.toString())));
  }
  if (!link->up) return absl::FailedPreconditionError(asv(cat("netdev ", ifname, " is down")));
  return absl::OkStatus();
}

absl::Status returnToHost(const std::string& netns_path, const std::string& pod_ifname,
                          const HostNetdev& original, Logger& log) {
  if (!netns_path.empty()) {
    absl::StatusOr<NetnsFd> pod_ns = NetnsFd::open(netns_path);
    if (pod_ns.ok()) {
      absl::StatusOr<RtNetlink> pod = RtNetlink::open(&*pod_ns);
      if (!pod.ok()) return pod.status();
      absl::StatusOr<LinkInfo> link = pod->getLink(pod_ifname);
      if (link.ok()) {
        if (absl::Status s = sendHome(*pod, link->ifindex, original); !s.ok()) {
          return withContext(s, cat("returning VF netdev ", pod_ifname, " to the host as ", original.name));
        }
        log.info(cat("VF netdev ", pod_ifname, " returned to the host as ", original.name));
        return absl::OkStatus();
      }
      if (link.status().code() != absl::StatusCode::kNotFound) return link.status();
    } else if (pod_ns.status().code() != absl::StatusCode::kNotFound) {
      return pod_ns.status();
    }
  }
  absl::StatusOr<RtNetlink> host = RtNetlink::open();
  if (host.ok() && host->getLink(original.name).ok()) {
    log.info(cat("VF netdev ", original.name, " is already in the host netns"));
  } else {
    log.warn(cat("VF netdev ", original.name, " is neither in the pod's netns nor the host's; the kernel ",
                 "returns a VF to the host when the pod's namespace is destroyed"));
  }
  return absl::OkStatus();
}

}  // namespace sluice::cni
