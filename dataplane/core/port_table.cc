#include "dataplane/core/port_table.h"

#include <absl/strings/str_cat.h>

#include "common/cidr_overlap.h"

namespace sluice {

PortTable::PortTable(uint16_t size, uint16_t max_ports) : max_ports_(max_ports), ports_(size) {}

PortEntry* PortTable::find(uint16_t port_no) {
  if (port_no >= size() || !ports_[port_no]) return nullptr;
  return &*ports_[port_no];
}

const PortEntry* PortTable::find(uint16_t port_no) const {
  if (port_no >= size() || !ports_[port_no]) return nullptr;
  return &*ports_[port_no];
}

std::optional<uint16_t> PortTable::portOf(const AttachmentId& id) const {
  auto it = by_attachment_.find(id);
  if (it == by_attachment_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint16_t> PortTable::freePortNumber() const {
  for (uint16_t n = 0; n < max_ports_ && n < size(); ++n)
    if (!ports_[n]) return n;
  return std::nullopt;
}

void PortTable::insert(uint16_t port_no, PortEntry entry) {
  if (entry.isPod()) by_attachment_[entry.request.attachment] = port_no;
  ports_[port_no] = std::move(entry);
}

PortEntry PortTable::take(uint16_t port_no) {
  PortEntry entry = std::move(*ports_[port_no]);
  ports_[port_no].reset();
  if (entry.isPod()) by_attachment_.erase(entry.request.attachment);
  return entry;
}

absl::Status PortTable::findCollision(const PortRequest& req) const {
  for (uint16_t n = 0; n < size(); ++n) {
    if (!ports_[n] || !ports_[n]->isPod()) continue;
    const PortRequest& other = ports_[n]->request;
    if (req.hasIpv4() && other.ip == req.ip)
      return absl::AlreadyExistsError(absl::StrCat("ip: ", req.ip.toString(), " belongs to port ", n));
    if (req.ipv6 && other.ipv6 == req.ipv6)
      return absl::AlreadyExistsError(absl::StrCat("ipv6: ", req.ipv6->toString(), " belongs to port ", n));
    if (other.mac == req.mac)
      return absl::AlreadyExistsError(absl::StrCat("mac: ", req.mac.toString(), " belongs to port ", n));
  }
  return absl::OkStatus();
}

absl::Status PortTable::findSocketCollision(const std::string& socket_path) const {
  for (uint16_t n = 0; n < size(); ++n)
    if (ports_[n] && ports_[n]->isPod() && ports_[n]->socket_path == socket_path)
      return absl::AlreadyExistsError(absl::StrCat("socket ", socket_path, " belongs to port ", n));
  return absl::OkStatus();
}

namespace {

absl::Status refused(const std::string& prefix, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("routed_prefixes: ", prefix, " ", why));
}

// The first of `mine` that holds `other`'s address or overlaps one of its
// prefixes (Cidr is Ipv4Cidr or Ipv6Cidr, `address` the matching one).
template <typename Cidr, typename Address>
absl::Status checkAgainst(const std::vector<Cidr>& mine, const std::optional<Address>& address,
                          const std::vector<Cidr>& theirs, uint16_t port_no) {
  for (const Cidr& c : mine) {
    if (address && c.contains(*address))
      return refused(c.toString(), absl::StrCat("holds port ", port_no, "'s address ", address->toString()));
    for (const Cidr& o : theirs)
      if (cidrsOverlap(c, o))
        return refused(c.toString(), absl::StrCat("overlaps ", o.toString(), ", routed to port ", port_no));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PortTable::checkRoutedPrefixes(const PortRequest& req) const {
  for (uint16_t n = 0; n < size(); ++n) {
    if (!ports_[n] || !ports_[n]->isPod()) continue;
    const PortRequest& other = ports_[n]->request;
    const std::optional<Ipv4Address> ip = other.hasIpv4() ? std::optional(other.ip) : std::nullopt;
    if (absl::Status s = checkAgainst(req.routed_prefixes, ip, other.routed_prefixes, n); !s.ok()) return s;
    if (absl::Status s = checkAgainst(req.routed_prefixes_v6, other.ipv6, other.routed_prefixes_v6, n); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

std::vector<Ipv4Cidr> PortTable::routedPrefixes() const {
  std::vector<Ipv4Cidr> out;
  forEachPod([&](uint16_t, const PortEntry& e) {
    out.insert(out.end(), e.request.routed_prefixes.begin(), e.request.routed_prefixes.end());
  });
  return out;
}

std::vector<Ipv6Cidr> PortTable::routedPrefixes6() const {
  std::vector<Ipv6Cidr> out;
  forEachPod([&](uint16_t, const PortEntry& e) {
    out.insert(out.end(), e.request.routed_prefixes_v6.begin(), e.request.routed_prefixes_v6.end());
  });
  return out;
}

std::vector<uint16_t> PortTable::podNumbers() const {
  std::vector<uint16_t> out;
  forEachPod([&](uint16_t n, const PortEntry&) { out.push_back(n); });
  return out;
}

PmdRxQueues PortTable::assignedRxQueues(size_t pmds) const {
  PmdRxQueues rx(pmds);
  forEachPort([&](uint16_t n, const PortEntry& e) {
    if (!e.isPod()) {
      rx[e.pmd].push_back({n, 0});
      return;
    }
    for (uint16_t q = 0; q < e.queue_pmds.size(); ++q) rx[e.queue_pmds[q]].push_back({n, q});
  });
  return rx;
}

void PortTable::recordPlacement(const PmdRxQueues& target) {
  for (size_t p = 0; p < target.size(); ++p) {
    for (const auto& [n, queue] : target[p]) {
      PortEntry& e = *ports_[n];
      if (!e.isPod()) continue;
      e.queue_pmds.resize(e.dpdk.rx_queues);
      e.queue_pmds[queue] = static_cast<unsigned>(p);
      if (queue == 0) e.pmd = static_cast<unsigned>(p);
      e.placed = true;
    }
  }
}

}  // namespace sluice
