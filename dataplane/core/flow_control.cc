#include "dataplane/core/flow_control.h"

#include <absl/strings/str_cat.h>
#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

#include "common/log.h"
#include "common/net_address.h"
#include "dataplane/core/pmd_grace_period.h"
#include "dataplane/datapath/drop_reason.h"

namespace sluice {
namespace {

// The identity of a megaflow: its mask and masked key (match words only).
std::string matchBytes(const flow::FlowMask& mask, const flow::FlowKey& masked_key) {
  std::string b(2 * flow::kMatchWords * 8, '\0');
  std::memcpy(b.data(), mask.words(), flow::kMatchWords * 8);
  std::memcpy(b.data() + flow::kMatchWords * 8, masked_key.words(), flow::kMatchWords * 8);
  return b;
}

bool sameActions(const flow::MegaflowActions& a, const flow::MegaflowActions& b) {
  return a.kind == b.kind && a.rewrite_flags == b.rewrite_flags && a.out_port == b.out_port &&
         a.drop_reason == b.drop_reason && a.arg == b.arg && a.max_frame == b.max_frame;
}

std::string ipv4Text(uint32_t be) {
  char buf[INET_ADDRSTRLEN];
  ::inet_ntop(AF_INET, &be, buf, sizeof(buf));
  return buf;
}

}  // namespace

std::string describeMatch(const flow::FlowKey& key, const flow::FlowMask& mask) {
  std::string out;
  auto field = [&](const char* name, uint64_t v, uint64_t m, uint64_t full, const std::string& text) {
    if (m == 0) return;
    absl::StrAppend(&out, out.empty() ? "" : ",", name, "=", text);
    if (m != full) absl::StrAppend(&out, "/0x", absl::Hex(m));
    (void)v;
  };
  field("in_port", key.in_port, mask.in_port, 0xffff, absl::StrCat(key.in_port));
  field("eth_type", key.eth_type, mask.eth_type, 0xffff, absl::StrCat("0x", absl::Hex(ntohs(key.eth_type), absl::kZeroPad4)));
  field("vlan_tci", key.vlan_tci, mask.vlan_tci, 0xffff, absl::StrCat(ntohs(key.vlan_tci)));
  field("ip_proto", key.ip_proto, mask.ip_proto, 0xff, absl::StrCat(key.ip_proto));
  static constexpr const char* kTtl[] = {"not_ip", "0", "1", "2+"};
  field("ttl", key.ttl_class, mask.ttl_class, 0xff, key.ttl_class < 4 ? kTtl[key.ttl_class] : "?");
  // An address under a prefix mask reads as a CIDR; any other mask as hex.
  auto address = [&](const char* name, uint32_t v, uint32_t m) {
    if (m == 0) return;
    const uint32_t host_mask = ntohl(m);
    const auto len = static_cast<uint32_t>(std::popcount(host_mask));
    if (len != 32 && host_mask == (len == 0 ? 0 : ~uint32_t{0} << (32 - len))) {
      absl::StrAppend(&out, out.empty() ? "" : ",", name, "=", ipv4Text(v), "/", len);
      return;
    }
    field(name, v, m, 0xffffffffU, ipv4Text(v));
  };
  // Source validation reads the Ethernet and IPv6 sources, whole or by
  // leading octets: shown as the address, with the prefix length when partial.
  auto prefixLen = [](const uint8_t* m, uint32_t bits) {
    uint32_t len = 0;
    while (len < bits && (m[len / 8] & (0x80 >> (len % 8))) != 0) ++len;
    return len;
  };
  const uint32_t mac_len = prefixLen(mask.eth_src, 48);
  if (mac_len != 0) {
    MacAddress mac;
    std::memcpy(mac.bytes.data(), key.eth_src, 6);
    absl::StrAppend(&out, out.empty() ? "" : ",", "eth_src=", mac.toString(), mac_len == 48 ? "" : "/",
                    mac_len == 48 ? "" : absl::StrCat(mac_len));
  }
  address("ipv4_src", key.ipv4_src, mask.ipv4_src);
  address("ipv4_dst", key.ipv4_dst, mask.ipv4_dst);
  // IPv6 decisions mask the destination by whole-octet prefixes: shown as a CIDR.
  uint32_t v6_len = 0;
  while (v6_len < 128 && (mask.ipv6_dst[v6_len / 8] & (0x80 >> (v6_len % 8))) != 0) ++v6_len;
  if (v6_len != 0) {
    Ipv6Address dst;
    std::memcpy(dst.bytes.data(), key.ipv6_dst, 16);
    absl::StrAppend(&out, out.empty() ? "" : ",", "ipv6_dst=", dst.toString(), v6_len == 128 ? "" : "/",
                    v6_len == 128 ? "" : absl::StrCat(v6_len));
  }
  const uint32_t v6_src_len = prefixLen(mask.ipv6_src, 128);
  if (v6_src_len != 0) {
    Ipv6Address src;
    std::memcpy(src.bytes.data(), key.ipv6_src, 16);
    absl::StrAppend(&out, out.empty() ? "" : ",", "ipv6_src=", src.toString(), v6_src_len == 128 ? "" : "/",
                    v6_src_len == 128 ? "" : absl::StrCat(v6_src_len));
  }
  field("tp_src", key.tp_src, mask.tp_src, 0xffff, absl::StrCat(ntohs(key.tp_src)));
  field("tp_dst", key.tp_dst, mask.tp_dst, 0xffff, absl::StrCat(ntohs(key.tp_dst)));
  address("tun_src", key.tun_src, mask.tun_src);
  address("tun_dst", key.tun_dst, mask.tun_dst);
  field("tun_vni", key.tun_vni, mask.tun_vni, 0xffffffffU, absl::StrCat(key.tun_vni));
  // Fields no current decision consults: reported in bulk if ever masked.
  for (uint32_t w = 3; w < flow::kMatchWords; ++w) {
    if (w == 7 || w == 8) continue;  // the tunnel words, named above
    if ((w == 11 || w == 12) && v6_len != 0) continue;  // ipv6_dst, named above
    if ((w == 9 || w == 10) && v6_src_len != 0) continue;  // ipv6_src, named above
    uint64_t m = mask.words()[w];
    if (w == 4 && mac_len != 0) {
      // eth_src is named above; the rest of its word (ip_tos) is not.
      flow::FlowMask rest = flow::zeroKey();
      rest.ip_tos = mask.ip_tos;
      rest.pad0 = mask.pad0;
      m = rest.words()[4];
    }
    if (m != 0) absl::StrAppend(&out, out.empty() ? "" : ",", "word", w, "=0x",
                                absl::Hex(key.words()[w] & m), "/0x", absl::Hex(m));
  }
  return out.empty() ? "any" : out;
}

std::string describeMask(const flow::FlowMask& mask) {
  std::string out;
  auto field = [&](const char* name, uint64_t m, const std::string& text) {
    if (m != 0) absl::StrAppend(&out, out.empty() ? "" : ",", name, "=", text);
  };
  field("in_port", mask.in_port, absl::StrCat("0x", absl::Hex(mask.in_port)));
  field("eth_type", mask.eth_type, absl::StrCat("0x", absl::Hex(ntohs(mask.eth_type))));
  field("vlan_tci", mask.vlan_tci, absl::StrCat("0x", absl::Hex(ntohs(mask.vlan_tci))));
  field("ip_proto", mask.ip_proto, absl::StrCat("0x", absl::Hex(mask.ip_proto)));
  field("ttl", mask.ttl_class, absl::StrCat("0x", absl::Hex(mask.ttl_class)));
  // The sources source validation reads, as addresses of their own kind.
  MacAddress eth_src_mask;
  std::memcpy(eth_src_mask.bytes.data(), mask.eth_src, 6);
  field("eth_src", eth_src_mask.isZero() ? 0 : 1, eth_src_mask.toString());
  field("ipv4_src", mask.ipv4_src, ipv4Text(mask.ipv4_src));
  field("ipv4_dst", mask.ipv4_dst, ipv4Text(mask.ipv4_dst));
  Ipv6Address ipv6_src_mask;
  std::memcpy(ipv6_src_mask.bytes.data(), mask.ipv6_src, 16);
  field("ipv6_src", ipv6_src_mask.isZero() ? 0 : 1, ipv6_src_mask.toString());
  field("tp_src", mask.tp_src, absl::StrCat("0x", absl::Hex(ntohs(mask.tp_src))));
  field("tp_dst", mask.tp_dst, absl::StrCat("0x", absl::Hex(ntohs(mask.tp_dst))));
  field("tun_src", mask.tun_src, ipv4Text(mask.tun_src));
  field("tun_dst", mask.tun_dst, ipv4Text(mask.tun_dst));
  field("tun_vni", mask.tun_vni, absl::StrCat("0x", absl::Hex(mask.tun_vni)));
  for (uint32_t w = 3; w < flow::kMatchWords; ++w) {
    if (w == 7 || w == 8 || w == 9 || w == 10) continue;  // tunnel words; ipv6_src, named above
    uint64_t m = mask.words()[w];
    if (w == 4) {
      // eth_src is named above; the rest of its word (ip_tos) is not.
      flow::FlowMask rest = flow::zeroKey();
      rest.ip_tos = mask.ip_tos;
      rest.pad0 = mask.pad0;
      m = rest.words()[4];
    }
    if (m != 0) absl::StrAppend(&out, out.empty() ? "" : ",", "word", w, "=0x", absl::Hex(m));
  }
  return out.empty() ? "none" : out;
}

std::string describeActions(const flow::MegaflowActions& a) {
  if (a.kind == flow::MegaflowActions::Kind::kOutput) {
    return absl::StrCat("output:", a.out_port,
                        (a.rewrite_flags & kRewriteL3)     ? "(l3_rewrite)"
                        : (a.rewrite_flags & kRewriteL3v6) ? "(l3v6_rewrite)"
                                                           : "");
  }
  if (a.kind == flow::MegaflowActions::Kind::kExternal) return absl::StrCat("external,output:", a.out_port);
  if (a.kind == flow::MegaflowActions::Kind::kEncap) {
    return absl::StrCat("vxlan_encap(tunnel ", a.arg, "),output:", a.out_port,
                        (a.rewrite_flags & kRewriteL3)     ? "(l3_rewrite)"
                        : (a.rewrite_flags & kRewriteL3v6) ? "(l3v6_rewrite)"
                                                           : "");
  }
  const size_t r = a.drop_reason;
  return "drop:" + std::string(r < kDropReasonCount ? kDropReasonNames[r] : std::string_view("?")) +
         ((a.rewrite_flags & kAnswerUnreachable) ? "(icmp_unreachable)"
          : (a.rewrite_flags & kAnswerEcho)  ? "(icmp_echo_reply)"
                                             : "");
}

FlowControl::FlowControl(const std::vector<PmdContext*>& pmds, uint64_t tsc_hz, uint32_t idle_timeout_ms, TscFn tsc)
    : tsc_hz_(tsc_hz), idle_cycles_(tsc_hz / 1000 * idle_timeout_ms), tsc_(tsc) {
  for (PmdContext* pmd : pmds) {
    PerPmd p;
    p.pmd = pmd;
    pmds_.push_back(std::move(p));
  }
}

bool FlowControl::hasFlows() const {
  for (const PerPmd& p : pmds_)
    if (p.pmd->megaflows != nullptr) return true;
  return false;
}

flow::Classifier& FlowControl::editable(PerPmd& p) {
  if (p.next) return *p.next;
  if (p.spare) {
    // The version before the published one, which no PMD reads any more:
    // the changes that made the published one bring it level.
    p.next = std::move(p.spare);
    for (const ClassifierChange& c : p.replay) {
      if (c.insert) (void)p.next->insert(c.mask, c.key, c.megaflow);
      else (void)p.next->remove(c.mask, c.key);
    }
  } else {
    p.next = p.published ? p.published->clone() : std::make_unique<flow::Classifier>();
  }
  p.replay.clear();
  return *p.next;
}

absl::Status FlowControl::classifierInsert(PerPmd& p, const flow::Megaflow& m, flow::MegaflowIndex i) {
  absl::Status s = editable(p).insert(m.mask, m.key, i);
  if (s.ok()) p.changes.push_back({true, i, m.mask, m.key});
  return s;
}

void FlowControl::classifierRemove(PerPmd& p, const flow::Megaflow& m) {
  if (editable(p).remove(m.mask, m.key).ok()) p.changes.push_back({false, flow::kNoMegaflow, m.mask, m.key});
}

void FlowControl::kill(PerPmd& p, flow::MegaflowIndex i) {
  const flow::Megaflow& m = p.pmd->megaflows->at(i);
  if (offload_ != nullptr)
    offload_->flowRemoved(static_cast<uint32_t>(&p - pmds_.data()), i, m.generation.load(std::memory_order_relaxed));
  classifierRemove(p, m);
  p.installed.erase(matchBytes(m.mask, m.key));
  p.pmd->megaflows->kill(i);
  p.killed.push_back(i);
  --p.c.megaflows;
}

void FlowControl::evictLeastRecentlyUsed(PerPmd& p, uint32_t free) {
  const uint32_t now_free = p.pmd->megaflows->freeSlots() + static_cast<uint32_t>(p.killed.size());
  if (now_free >= free) return;
  std::vector<std::pair<uint64_t, flow::MegaflowIndex>> by_use;  // (last used, megaflow)
  by_use.reserve(p.installed.size());
  for (const auto& [id, i] : p.installed)
    by_use.emplace_back(p.pmd->megaflows->at(i).last_used_tsc.load(std::memory_order_relaxed), i);
  const size_t n = std::min<size_t>(free - now_free, by_use.size());
  std::nth_element(by_use.begin(), by_use.begin() + static_cast<std::ptrdiff_t>(n), by_use.end());
  for (size_t k = 0; k < n; ++k) kill(p, by_use[k].second);
  p.c.evicted += n;
}

void FlowControl::handleUpcalls(const RouteTables& tables, Mutex* unlocked_while_waiting) {
  FlowTranslation t;
  for (PerPmd& p : pmds_) {
    if (p.pmd->megaflows == nullptr) continue;
    // Room for new flows: below 1/32 of the table free, the least recently
    // used go until 1/16 is, and their slots are recycled now (a commit
    // costs one PMD acknowledgement) so this drain can use them. Chunks of
    // 1/32 keep the O(n) choice of victims rare; a table that is full but
    // asked for nothing new keeps everything.
    const uint32_t capacity = p.pmd->megaflows->capacity();
    if (p.pmd->upcalls.pending() && p.pmd->megaflows->freeSlots() < std::max<uint32_t>(1, capacity / 32)) {
      evictLeastRecentlyUsed(p, std::max<uint32_t>(1, capacity / 16));
      commit(p, unlocked_while_waiting);
    }
    p.pmd->upcalls.drain([&](const flow::FlowKey& key) {
      translateFlow(tables, key, t);
      std::string id = matchBytes(t.mask, flow::applyMask(key, t.mask));
      if (auto it = p.installed.find(id); it != p.installed.end()) {
        ++p.c.duplicate_upcalls;
        // The megaflow may have been made for another port's packets first.
        if (offload_ != nullptr && offload_->wantsInPort(key.in_port))
          offload_->flowInstalled(static_cast<uint32_t>(&p - pmds_.data()), it->second,
                                  p.pmd->megaflows->at(it->second).generation.load(std::memory_order_relaxed), key,
                                  p.pmd->megaflows->at(it->second).mask, p.pmd->megaflows->at(it->second).actions);
        return;
      }
      auto i = p.pmd->megaflows->install(key, t.mask, t.actions, tsc_());
      if (!i.ok()) {
        ++p.c.flow_limit_hits;
        return;
      }
      const flow::Megaflow& m = p.pmd->megaflows->at(*i);
      if (absl::Status s = classifierInsert(p, m, *i); !s.ok()) {
        // Too many distinct masks: the flow stays uncached (its packets are
        // still forwarded by the PMD's inline translation).
        logWarning("megaflow not installed: ", s.message());
        p.pmd->megaflows->kill(*i);
        p.killed.push_back(*i);
        return;
      }
      p.installed.emplace(std::move(id), *i);
      ++p.c.installed;
      ++p.c.megaflows;
      if (offload_ != nullptr && offload_->wantsInPort(key.in_port))
        offload_->flowInstalled(static_cast<uint32_t>(&p - pmds_.data()), *i,
                                m.generation.load(std::memory_order_relaxed), key, m.mask, m.actions);
    });
  }
}

void FlowControl::revalidate(const RouteTables& tables) {
  FlowTranslation t;
  for (PerPmd& p : pmds_) {
    if (p.pmd->megaflows == nullptr) continue;
    std::vector<flow::MegaflowIndex> stale;
    for (const auto& [id, i] : p.installed) {
      const flow::Megaflow& m = p.pmd->megaflows->at(i);
      // The masked key holds every field the old decision read; the tables
      // still support the megaflow iff deciding again reads the same fields
      // and decides the same.
      translateFlow(tables, m.key, t);
      if (!flow::keysEqual(t.mask, m.mask) || !sameActions(t.actions, m.actions)) stale.push_back(i);
    }
    for (flow::MegaflowIndex i : stale) kill(p, i);
    p.c.revalidated += stale.size();
  }
}

void FlowControl::expireIdle() {
  const uint64_t now = tsc_();
  for (PerPmd& p : pmds_) {
    if (p.pmd->megaflows == nullptr) continue;
    std::vector<flow::MegaflowIndex> idle;
    for (const auto& [id, i] : p.installed) {
      const uint64_t last = p.pmd->megaflows->at(i).last_used_tsc.load(std::memory_order_relaxed);
      if (now > last && now - last >= idle_cycles_) idle.push_back(i);
    }
    for (flow::MegaflowIndex i : idle) kill(p, i);
    p.c.expired += idle.size();
  }
}

void FlowControl::commit(Mutex* unlocked_while_waiting) {
  for (PerPmd& p : pmds_) commit(p, unlocked_while_waiting);
}

void FlowControl::commit(PerPmd& p, Mutex* unlocked_while_waiting) {
  if (!p.next) return;
  const flow::Classifier* c = p.next.get();
  p.pmd->mailbox.classifier.store(c, std::memory_order_seq_cst);
  // A PMD that is not running holds no classifier; one that starts later
  // reads this one (seq_cst pairs with its store to `running`).
  if (unlocked_while_waiting != nullptr) unlocked_while_waiting->unlock();
  while (p.pmd->mailbox.running.load(std::memory_order_seq_cst) &&
         p.pmd->mailbox.classifier_acked.load(std::memory_order_acquire) != c)
    std::this_thread::sleep_for(kPmdAckPollInterval);
  if (unlocked_while_waiting != nullptr) unlocked_while_waiting->lock();
  p.spare = std::move(p.published);
  p.published = std::move(p.next);
  p.replay = std::move(p.changes);
  p.changes.clear();
  for (flow::MegaflowIndex i : p.killed) (void)p.pmd->megaflows->recycle(i);
  p.killed.clear();
}

std::vector<FlowView> FlowControl::list() const {
  std::vector<FlowView> out;
  const uint64_t now = tsc_();
  const double hz = tsc_hz_ != 0 ? static_cast<double>(tsc_hz_) : 1.0;
  for (size_t pi = 0; pi < pmds_.size(); ++pi) {
    const PerPmd& p = pmds_[pi];
    if (p.pmd->megaflows == nullptr) continue;
    const std::set<flow::MegaflowIndex> not_yet_searched = notYetSearched(p);
    for (const auto& [id, i] : p.installed) {
      if (not_yet_searched.contains(i)) continue;
      const flow::Megaflow& m = p.pmd->megaflows->at(i);
      FlowView v;
      v.pmd = static_cast<unsigned>(pi);
      v.index = i;
      v.match = describeMatch(m.key, m.mask);
      v.mask = describeMask(m.mask);
      v.actions = describeActions(m.actions);
      v.packets = m.packets.load(std::memory_order_relaxed);
      v.bytes = m.bytes.load(std::memory_order_relaxed);
      const uint64_t last = m.last_used_tsc.load(std::memory_order_relaxed);
      const uint64_t born = m.installed_tsc.load(std::memory_order_relaxed);
      v.idle_seconds = now > last ? static_cast<double>(now - last) / hz : 0;
      v.age_seconds = now > born ? static_cast<double>(now - born) / hz : 0;
      if (offload_ != nullptr)
        v.offload = offload_->flowState(static_cast<uint32_t>(pi), i, m.generation.load(std::memory_order_relaxed));
      out.push_back(std::move(v));
    }
  }
  return out;
}

std::vector<FlowControlCounters> FlowControl::counters() const {
  std::vector<FlowControlCounters> out;
  for (const PerPmd& p : pmds_) {
    out.push_back(p.c);
    out.back().megaflows -= notYetSearched(p).size();  // as list() counts them
  }
  return out;
}

std::set<flow::MegaflowIndex> FlowControl::notYetSearched(const PerPmd& p) const {
  std::set<flow::MegaflowIndex> out;
  if (p.pmd->megaflows == nullptr) return out;
  for (const ClassifierChange& c : p.changes)
    if (c.insert && p.pmd->megaflows->at(c.megaflow).alive.load(std::memory_order_relaxed)) out.insert(c.megaflow);
  return out;
}

}  // namespace sluice
