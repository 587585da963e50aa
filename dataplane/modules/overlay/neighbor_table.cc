#include "dataplane/modules/overlay/neighbor_table.h"

namespace sluice {

template <typename Addr>
void BasicNeighborTable<Addr>::setStatic(Addr ip, MacAddress mac) {
  Entry& e = entries_[ip];
  e.mac = mac;
  e.is_static = true;
}

template <typename Addr>
bool BasicNeighborTable<Addr>::setWanted(const std::set<Addr>& ips) {
  bool changed = false;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.is_static && !ips.contains(it->first)) {
      changed |= it->second.mac.has_value();
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  for (const Addr& ip : ips) entries_.try_emplace(ip);
  return changed;
}

template <typename Addr>
typename BasicNeighborTable<Addr>::Learned BasicNeighborTable<Addr>::learn(Addr ip, MacAddress mac, Clock::time_point now) {
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

template <typename Addr>
NeighborState BasicNeighborTable<Addr>::stateOf(const Entry& e, Clock::time_point now) const {
  if (e.is_static) return State::kStatic;
  if (!e.mac) return State::kIncomplete;
  return now - e.confirmed < timing_.reachable_time ? State::kReachable : State::kStale;
}

template <typename Addr>
std::vector<Addr> BasicNeighborTable<Addr>::due(Clock::time_point now, bool* changed) {
  *changed = false;
  std::vector<Addr> out;
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

template <typename Addr>
std::optional<MacAddress> BasicNeighborTable<Addr>::lookup(const Addr& ip) const {
  auto it = entries_.find(ip);
  if (it == entries_.end()) return std::nullopt;
  return it->second.mac;
}

template <typename Addr>
std::optional<NeighborState> BasicNeighborTable<Addr>::state(const Addr& ip, Clock::time_point now) const {
  auto it = entries_.find(ip);
  if (it == entries_.end()) return std::nullopt;
  return stateOf(it->second, now);
}

template <typename Addr>
std::vector<typename BasicNeighborTable<Addr>::View> BasicNeighborTable<Addr>::list(Clock::time_point now) const {
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

template class BasicNeighborTable<Ipv4Address>;
template class BasicNeighborTable<Ipv6Address>;

const char* arpRefusalName(ArpRefusal r) {
  switch (r) {
#define SLUICE_ARP_REFUSAL(e, name, what) \
  case ArpRefusal::e: return name;
#include "dataplane/modules/overlay/arp_refusals.def"
#undef SLUICE_ARP_REFUSAL
  }
  return "?";
}

std::string neighborStateName(NeighborState s) {
  switch (s) {
    case NeighborState::kIncomplete: return "incomplete";
    case NeighborState::kReachable: return "reachable";
    case NeighborState::kStale: return "stale";
    case NeighborState::kStatic: return "static";
  }
  return "?";
}

}  // namespace sluice
