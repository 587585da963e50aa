#include "dataplane/modules/overlay/neighbor_table.h"

namespace sluice {

void NeighborTable::setStatic(Ipv4Address ip, MacAddress mac) {
  Entry& e = entries_[ip];
  e.mac = mac;
  e.is_static = true;
}

bool NeighborTable::setWanted(const std::set<Ipv4Address>& ips) {
  bool changed = false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.is_static && !ips.contains(it->first)) {
      changed |= it->second.mac.has_value();
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  for (Ipv4Address ip : ips) entries_.try_emplace(ip);
  return changed;
}

NeighborTable::Learned NeighborTable::learn(Ipv4Address ip, MacAddress mac, Clock::time_point now) {
  auto it = entries_.find(ip);
  if (it == entries_.end()) return {false, ArpRefusal::kNotANextHop};
  Entry& e = it->second;
  if (e.is_static) return {false, ArpRefusal::kStaticEntry};
  if (!e.awaiting_reply) return {false, ArpRefusal::kUnsolicited};
  e.awaiting_reply = false;
  const bool changed = e.mac != mac;
  e.mac = mac;
  e.confirmed = now;
  return {changed, std::nullopt};
}

NeighborTable::State NeighborTable::stateOf(const Entry& e, Clock::time_point now) const {
  if (e.is_static) return State::kStatic;
  if (!e.mac) return State::kIncomplete;
  return now - e.confirmed < timing_.reachable_time ? State::kReachable : State::kStale;
}

std::vector<Ipv4Address> NeighborTable::due(Clock::time_point now, bool* changed) {
  *changed = false;
  std::vector<Ipv4Address> out;
  for (auto& [ip, e] : entries_) {
    const State s = stateOf(e, now);
    if (s == State::kStatic || s == State::kReachable) continue;
    if (s == State::kStale && now - e.confirmed >= timing_.reachable_time + timing_.stale_time) {
      e.mac.reset();
      *changed = true;
    }
    if (!e.ever_asked || now - e.asked >= timing_.retry_interval) {
      e.asked = now;
      e.ever_asked = true;
      e.awaiting_reply = true;
      ++e.requests;
      out.push_back(ip);
    }
  }
  return out;
}

std::optional<MacAddress> NeighborTable::lookup(Ipv4Address ip) const {
  auto it = entries_.find(ip);
  if (it == entries_.end()) return std::nullopt;
  return it->second.mac;
}

std::optional<NeighborTable::State> NeighborTable::state(Ipv4Address ip, Clock::time_point now) const {
  auto it = entries_.find(ip);
  if (it == entries_.end()) return std::nullopt;
  return stateOf(it->second, now);
}

std::vector<NeighborTable::View> NeighborTable::list(Clock::time_point now) const {
  std::vector<View> out;
  for (const auto& [ip, e] : entries_) {
    View v;
    v.ip = ip;
    v.mac = e.mac;
    v.state = stateOf(e, now);
    v.age_seconds = e.mac && !e.is_static ? std::chrono::duration<double>(now - e.confirmed).count() : 0;
    v.requests = e.requests;
    out.push_back(v);
  }
  return out;
}

const char* arpRefusalName(ArpRefusal r) {
  switch (r) {
#define SLUICE_ARP_REFUSAL(e, name, what) \
  case ArpRefusal::e: return name;
#include "dataplane/modules/overlay/arp_refusals.def"
#undef SLUICE_ARP_REFUSAL
  }
  return "?";
}

std::string neighborStateName(NeighborTable::State s) {
  switch (s) {
    case NeighborTable::State::kIncomplete: return "incomplete";
    case NeighborTable::State::kReachable: return "reachable";
    case NeighborTable::State::kStale: return "stale";
    case NeighborTable::State::kStatic: return "static";
  }
  return "?";
}

}  // namespace sluice
