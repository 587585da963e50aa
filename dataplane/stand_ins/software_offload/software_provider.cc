// The software flow engine's control side (see software_provider.h).
#include "dataplane/stand_ins/software_offload/software_provider.h"

#include <absl/strings/str_cat.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common/log.h"
#include "dataplane/modules/offload/offload_provider_registry.h"

namespace sluice::offload {
namespace {

// How long sync() waits for the callbacks to pass a version. A polled queue
// passes it within one PMD loop iteration (microseconds); a queue nobody
// polls marks nothing, but we cannot tell it from a stalled PMD, so after
// this the old versions are kept (never freed early) and sync reports false.
constexpr auto kGraceLimit = std::chrono::milliseconds(500);
constexpr auto kGracePoll = std::chrono::microseconds(20);

absl::Status unsupported(const std::string& what) {
  return absl::UnimplementedError(absl::StrCat("software engine: ", what));
}

bool anyBytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != 0) return true;
  return false;
}

// TTL (or hop limit) spec[..last] under a full mask -> the TTL class.
absl::Status ttlClass(uint8_t lo, uint8_t hi, uint8_t* out) {
  if (lo == 0 && hi == 0) *out = static_cast<uint8_t>(flow::TtlClass::kZero);
  else if (lo == 1 && hi == 1) *out = static_cast<uint8_t>(flow::TtlClass::kOne);
  else if (lo == 2 && hi == 255) *out = static_cast<uint8_t>(flow::TtlClass::kMany);
  else return unsupported(absl::StrCat("TTL range ", lo, "..", hi, " (only 0, 1 and 2..255)"));
  return absl::OkStatus();
}

// Sets the IP protocol a following L4 item implies (and checks it agrees).
absl::Status impliesProto(CompiledRule& r, uint8_t proto) {
  if (r.mask.ip_proto == 0xff && r.key.ip_proto != proto) return unsupported("L4 item contradicts the IP protocol");
  if (r.mask.ip_proto != 0 && r.mask.ip_proto != 0xff) return unsupported("partial IP protocol mask with an L4 item");
  r.key.ip_proto = proto;
  r.mask.ip_proto = 0xff;
  return absl::OkStatus();
}

}  // namespace

namespace {

// Items [begin, end) of one header layer (the frame, or a VXLAN frame's
// inner frame) into the ordinary fields of r.
absl::Status compileLayer(const FlowPattern& p, size_t begin, size_t end, CompiledRule& r) {
  // The engine parses untagged and single-tagged frames; it matches only
  // untagged ones (what the PMD routes).
  r.mask.flags = flow::kFlagVlan;
  uint16_t implied_type = 0;
  bool have_ip = false;
  for (size_t i = begin; i < end; ++i) {
    const PatternItem& it = p.at(i);
    if (it.has_last && it.type != RTE_FLOW_ITEM_TYPE_IPV4 && it.type != RTE_FLOW_ITEM_TYPE_IPV6)
      return unsupported("ranges only on TTL / hop limit");
    switch (it.type) {
      case RTE_FLOW_ITEM_TYPE_VOID:
        break;
      case RTE_FLOW_ITEM_TYPE_ETH: {
        if (i != begin) return unsupported("ETH must come first in its layer");
        const rte_flow_item_eth& s = it.spec.eth;
        const rte_flow_item_eth& m = it.mask.eth;
        if (m.has_vlan && s.has_vlan) return unsupported("VLAN-tagged frames");
        if (m.hdr.ether_type != 0 && m.hdr.ether_type != 0xffff) return unsupported("partial EtherType mask");
        r.key.eth_type = s.hdr.ether_type & m.hdr.ether_type;
        r.mask.eth_type = m.hdr.ether_type;
        for (int b = 0; b < 6; ++b) {
          r.mask.eth_dst[b] = m.hdr.dst_addr.addr_bytes[b];
          r.key.eth_dst[b] = s.hdr.dst_addr.addr_bytes[b] & m.hdr.dst_addr.addr_bytes[b];
          r.mask.eth_src[b] = m.hdr.src_addr.addr_bytes[b];
          r.key.eth_src[b] = s.hdr.src_addr.addr_bytes[b] & m.hdr.src_addr.addr_bytes[b];
        }
        break;
      }
      case RTE_FLOW_ITEM_TYPE_IPV4: {
        if (have_ip) return unsupported("a second IP header in one layer");
        have_ip = true;
        implied_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
        rte_ipv4_hdr m = it.mask.ipv4.hdr;
        const rte_ipv4_hdr& s = it.spec.ipv4.hdr;
        r.key.ipv4_src = s.src_addr & m.src_addr;
        r.mask.ipv4_src = m.src_addr;
        r.key.ipv4_dst = s.dst_addr & m.dst_addr;
        r.mask.ipv4_dst = m.dst_addr;
        r.key.ip_proto = s.next_proto_id & m.next_proto_id;
        r.mask.ip_proto = m.next_proto_id;
        r.key.ip_tos = s.type_of_service & m.type_of_service;
        r.mask.ip_tos = m.type_of_service;
        if (m.time_to_live != 0) {
          if (m.time_to_live != 0xff) return unsupported("partial TTL mask");
          const uint8_t hi = it.has_last ? it.last.ipv4.hdr.time_to_live : s.time_to_live;
          if (absl::Status st = ttlClass(s.time_to_live, hi, &r.key.ttl_class); !st.ok()) return st;
          r.mask.ttl_class = 0xff;
        }
        m.src_addr = m.dst_addr = 0;
        m.next_proto_id = m.type_of_service = m.time_to_live = 0;
        if (anyBytes(&m, sizeof m)) return unsupported("IPv4 fields other than addresses, protocol, TOS, TTL");
        if (it.has_last) {
          rte_ipv4_hdr l = it.last.ipv4.hdr;
          l.time_to_live = 0;
          rte_ipv4_hdr sp = s;
          sp.time_to_live = 0;
          if (std::memcmp(&l, &sp, sizeof l) != 0) return unsupported("ranges only on TTL");
        }
        break;
      }
      case RTE_FLOW_ITEM_TYPE_IPV6: {
        if (have_ip) return unsupported("a second IP header in one layer");
        have_ip = true;
        implied_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
        rte_ipv6_hdr m = it.mask.ipv6.hdr;
        const rte_ipv6_hdr& s = it.spec.ipv6.hdr;
        for (int b = 0; b < 16; ++b) {
          r.mask.ipv6_src[b] = m.src_addr[b];
          r.key.ipv6_src[b] = s.src_addr[b] & m.src_addr[b];
          r.mask.ipv6_dst[b] = m.dst_addr[b];
          r.key.ipv6_dst[b] = s.dst_addr[b] & m.dst_addr[b];
        }
        r.key.ip_proto = s.proto & m.proto;
        r.mask.ip_proto = m.proto;
        if (m.hop_limits != 0) {
          if (m.hop_limits != 0xff) return unsupported("partial hop-limit mask");
          const uint8_t hi = it.has_last ? it.last.ipv6.hdr.hop_limits : s.hop_limits;
          if (absl::Status st = ttlClass(s.hop_limits, hi, &r.key.ttl_class); !st.ok()) return st;
          r.mask.ttl_class = 0xff;
        }
        std::memset(m.src_addr, 0, 16);
        std::memset(m.dst_addr, 0, 16);
        m.proto = m.hop_limits = 0;
        if (anyBytes(&m, sizeof m)) return unsupported("IPv6 fields other than addresses, protocol, hop limit");
        break;
      }
      case RTE_FLOW_ITEM_TYPE_UDP:
      case RTE_FLOW_ITEM_TYPE_TCP: {
        const bool udp = it.type == RTE_FLOW_ITEM_TYPE_UDP;
        if (!have_ip) return unsupported("L4 item without an IP item");
        if (absl::Status st = impliesProto(r, udp ? IPPROTO_UDP : IPPROTO_TCP); !st.ok()) return st;
        uint16_t sm, dm, ss, ds;
        if (udp) {
          rte_udp_hdr m = it.mask.udp.hdr;
          sm = m.src_port, dm = m.dst_port, ss = it.spec.udp.hdr.src_port, ds = it.spec.udp.hdr.dst_port;
          m.src_port = m.dst_port = 0;
          if (anyBytes(&m, sizeof m)) return unsupported("UDP fields other than ports");
        } else {
          rte_tcp_hdr m = it.mask.tcp.hdr;
          sm = m.src_port, dm = m.dst_port, ss = it.spec.tcp.hdr.src_port, ds = it.spec.tcp.hdr.dst_port;
          m.src_port = m.dst_port = 0;
          if (anyBytes(&m, sizeof m)) return unsupported("TCP fields other than ports");
        }
        r.key.tp_src = ss & sm;
        r.mask.tp_src = sm;
        r.key.tp_dst = ds & dm;
        r.mask.tp_dst = dm;
        break;
      }
      case RTE_FLOW_ITEM_TYPE_ICMP: {
        if (implied_type != RTE_BE16(RTE_ETHER_TYPE_IPV4)) return unsupported("ICMP without IPv4");
        if (absl::Status st = impliesProto(r, IPPROTO_ICMP); !st.ok()) return st;
        rte_icmp_hdr m = it.mask.icmp.hdr;
        r.key.icmp_type = it.spec.icmp.hdr.icmp_type & m.icmp_type;
        r.mask.icmp_type = m.icmp_type;
        r.key.icmp_code = it.spec.icmp.hdr.icmp_code & m.icmp_code;
        r.mask.icmp_code = m.icmp_code;
        m.icmp_type = m.icmp_code = 0;
        if (anyBytes(&m, sizeof m)) return unsupported("ICMP fields other than type and code");
        break;
      }
      default:
        return unsupported(absl::StrCat("item type ", static_cast<int>(it.type)));
    }
  }
  if (implied_type != 0) {
    if (r.mask.eth_type != 0 && r.key.eth_type != implied_type)
      return unsupported("EtherType contradicts the IP item");
    r.key.eth_type = implied_type;
    r.mask.eth_type = 0xffff;
  }
  return absl::OkStatus();
}

// Items [0, vxlan] of a tunnel pattern: outer ETH / IPV4 / UDP / VXLAN, into
// tun_src / tun_dst / tun_vni and the outer facts of the layer word. Only
// what the engine's parser can tell apart exactly: an outer MAC, a partial
// fact mask or any other outer field is refused.
absl::Status compileOuter(const FlowPattern& p, size_t vxlan, CompiledRule& r) {
  if (vxlan != 3 || p.at(0).type != RTE_FLOW_ITEM_TYPE_ETH || p.at(1).type != RTE_FLOW_ITEM_TYPE_IPV4 ||
      p.at(2).type != RTE_FLOW_ITEM_TYPE_UDP)
    return unsupported("tunnels only as outer ETH / IPV4 / UDP / VXLAN");
  for (size_t i = 0; i <= vxlan; ++i)
    if (p.at(i).has_last) return unsupported("ranges in outer headers");
  const rte_flow_item_eth& em = p.at(0).mask.eth;
  const rte_flow_item_eth& es = p.at(0).spec.eth;
  if (anyBytes(&em.hdr.dst_addr, 6) || anyBytes(&em.hdr.src_addr, 6)) return unsupported("outer MAC addresses");
  if (em.has_vlan && es.has_vlan) return unsupported("VLAN-tagged frames");
  if (em.hdr.ether_type != 0 && (em.hdr.ether_type != 0xffff || es.hdr.ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4)))
    return unsupported("outer EtherType other than IPv4");
  rte_ipv4_hdr im = p.at(1).mask.ipv4.hdr;
  const rte_ipv4_hdr& is = p.at(1).spec.ipv4.hdr;
  r.key.tun_src = is.src_addr & im.src_addr;
  r.mask.tun_src = im.src_addr;
  r.key.tun_dst = is.dst_addr & im.dst_addr;
  r.mask.tun_dst = im.dst_addr;
  if (im.next_proto_id != 0 && (im.next_proto_id != 0xff || is.next_proto_id != IPPROTO_UDP))
    return unsupported("outer IP protocol other than UDP");
  if (im.version_ihl != 0) {
    if (im.version_ihl != 0xff || is.version_ihl != 0x45) return unsupported("outer version_ihl other than 0x45");
    r.key.pad2 |= kSwOuterIhl5;
    r.mask.pad2 |= kSwOuterIhl5;
  }
  if (im.fragment_offset != 0) {
    if (im.fragment_offset != RTE_BE16(0x3fff) || is.fragment_offset != 0)
      return unsupported("outer fragment bits other than \"not a fragment\"");
    r.key.pad2 |= kSwOuterNoFrag;
    r.mask.pad2 |= kSwOuterNoFrag;
  }
  im.src_addr = im.dst_addr = 0;
  im.next_proto_id = im.version_ihl = 0;
  im.fragment_offset = 0;
  if (anyBytes(&im, sizeof im)) return unsupported("outer IPv4 fields other than addresses, protocol, version_ihl, fragment bits");
  rte_udp_hdr um = p.at(2).mask.udp.hdr;
  if (um.dst_port != 0xffff || p.at(2).spec.udp.hdr.dst_port != RTE_BE16(kSwVxlanPort))
    return unsupported("VXLAN only on UDP port 4789");
  um.dst_port = 0;
  if (anyBytes(&um, sizeof um)) return unsupported("outer UDP fields other than the destination port");
  const rte_flow_item_vxlan& vm = p.at(3).mask.vxlan;
  const rte_flow_item_vxlan& vs = p.at(3).spec.vxlan;
  if (vm.flags != 0) {
    if (vm.flags != 0xff || vs.flags != 0x08) return unsupported("VXLAN flags other than 0x08");
    r.key.pad2 |= kSwVxlanFlagI;
    r.mask.pad2 |= kSwVxlanFlagI;
  }
  if (anyBytes(vm.rsvd0, 3) || vm.rsvd1 != 0) return unsupported("VXLAN reserved fields");
  const uint32_t vni_mask = (uint32_t{vm.vni[0]} << 16) | (uint32_t{vm.vni[1]} << 8) | vm.vni[2];
  const uint32_t vni = (uint32_t{vs.vni[0]} << 16) | (uint32_t{vs.vni[1]} << 8) | vs.vni[2];
  r.key.tun_vni = vni & vni_mask;
  r.mask.tun_vni = vni_mask;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CompiledRule> compileSoftwareRule(const FlowPattern& p) {
  CompiledRule r{flow::zeroKey(), flow::zeroKey()};
  size_t vxlan = p.size();
  for (size_t i = 0; i < p.size(); ++i)
    if (p.at(i).type == RTE_FLOW_ITEM_TYPE_VXLAN) {
      vxlan = i;
      break;
    }
  // Every rule says which layer it matches (see kSwLayerTunnel).
  r.mask.pad2 = kSwLayerTunnel;
  if (vxlan == p.size()) {
    if (absl::Status s = compileLayer(p, 0, p.size(), r); !s.ok()) return s;
  } else {
    r.key.pad2 = kSwLayerTunnel;
    if (absl::Status s = compileOuter(p, vxlan, r); !s.ok()) return s;
    if (vxlan + 1 == p.size() || p.at(vxlan + 1).type != RTE_FLOW_ITEM_TYPE_ETH)
      return unsupported("VXLAN without an inner ETH item");
    if (absl::Status s = compileLayer(p, vxlan + 1, p.size(), r); !s.ok()) return s;
  }
  // The key must be masked (the classifier keys on key AND mask).
  r.key = flow::applyMask(r.key, r.mask);
  return r;
}

bool isTunnelRule(const flow::FlowKey& key) { return (key.pad2 & kSwLayerTunnel) != 0; }


SoftwareProvider::SoftwareProvider(uint32_t capacity)
    : capacity_(capacity), rules_(capacity), shared_(std::make_unique<SwEngineShared>()) {}

SoftwareProvider::~SoftwareProvider() {
  if (port_) detach(*port_);
}

Capability SoftwareProvider::probe(uint16_t dpdk_port, uint16_t rx_queues) {
  Capability cap;
  if (port_ && *port_ != dpdk_port) {
    cap.reason = absl::StrCat("the software engine already serves port ", *port_);
    return cap;
  }
  if (rx_queues > kSwEngineMaxQueues) {
    cap.reason = absl::StrCat("software engine: at most ", kSwEngineMaxQueues, " rx queues");
    return cap;
  }
  logWarning("OFFLOAD: the SOFTWARE flow engine stands in for NIC hardware on DPDK port ", dpdk_port,
             " (configured offload provider \"software\"): marks are applied by an rx callback on the PMD, "
             "NOT by hardware; for tests and demos only");
  if (!port_) {
    for (uint16_t q = 0; q < rx_queues; ++q) {
      const rte_eth_rxtx_callback* cb = rte_eth_add_rx_callback(dpdk_port, q, swEngineRxCallback, shared_.get());
      if (cb == nullptr) {
        for (uint16_t r = 0; r < q; ++r) rte_eth_remove_rx_callback(dpdk_port, r, callbacks_[r]);
        callbacks_.clear();
        cap.reason = absl::StrCat("software engine: rte_eth_add_rx_callback failed on queue ", q);
        return cap;
      }
      callbacks_.push_back(cb);
    }
    port_ = dpdk_port;
    rx_queues_ = rx_queues;
  }
  cap.supported = true;
  cap.reason = "software flow engine (rx callback), not hardware";
  return cap;
}

void SoftwareProvider::detach(uint16_t dpdk_port) {
  if (!port_ || *port_ != dpdk_port) return;
  // Called after the PMDs stopped polling the port (DataplaneControl
  // republishes first), so no callback runs now or later: every version and
  // rule can go without waiting.
  for (uint16_t q = 0; q < callbacks_.size(); ++q) rte_eth_remove_rx_callback(dpdk_port, q, callbacks_[q]);
  callbacks_.clear();
  shared_->current.store(nullptr, std::memory_order_release);
  port_.reset();
  rx_queues_ = 0;
  std::vector<flow::MegaflowIndex> live;
  rules_.forEachLive([&](flow::MegaflowIndex i, const flow::Megaflow&) { live.push_back(i); });
  for (flow::MegaflowIndex i : live) {
    rules_.kill(i);
    killed_.push_back(i);
  }
  for (flow::MegaflowIndex i : killed_) (void)rules_.recycle(i);
  killed_.clear();
  tunnel_rules_ = 0;
  next_.reset();
  sets_.clear();
  classifiers_.clear();
}

absl::Status SoftwareProvider::checkPort(uint16_t dpdk_port) const {
  if (!port_ || *port_ != dpdk_port)
    return absl::FailedPreconditionError(absl::StrCat("software engine: port ", dpdk_port, " not probed"));
  return absl::OkStatus();
}

flow::Classifier& SoftwareProvider::editable() {
  if (!next_) {
    next_ = classifiers_.empty() ? std::make_unique<flow::Classifier>() : classifiers_.back()->clone();
  }
  return *next_;
}

absl::Status SoftwareProvider::validate(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) {
  if (absl::Status s = checkPort(dpdk_port); !s.ok()) return s;
  if (mark >= capacity_) return absl::InvalidArgumentError(absl::StrCat("software engine: mark ", mark, " out of range"));
  auto r = compileSoftwareRule(pattern);
  return r.ok() ? absl::OkStatus() : r.status();
}

absl::StatusOr<RuleHandle> SoftwareProvider::create(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) {
  if (absl::Status s = validate(dpdk_port, pattern, mark); !s.ok()) return s;
  CompiledRule r = *compileSoftwareRule(pattern);
  flow::MegaflowActions a;
  a.arg = mark;
  auto i = rules_.install(r.key, r.mask, a);
  if (!i.ok()) return absl::ResourceExhaustedError("software engine: rule table full");
  const flow::Megaflow& rec = rules_.at(*i);
  if (absl::Status s = editable().insert(rec.mask, rec.key, *i); !s.ok()) {
    rules_.kill(*i);
    killed_.push_back(*i);
    return absl::Status(s.code(), absl::StrCat("software engine: ", s.message()));
  }
  if (isTunnelRule(rec.key)) ++tunnel_rules_;
  return static_cast<RuleHandle>(*i) + 1;
}

absl::Status SoftwareProvider::destroy(uint16_t dpdk_port, RuleHandle rule) {
  if (absl::Status s = checkPort(dpdk_port); !s.ok()) return s;
  if (rule == 0 || rule > capacity_ || !rules_.isAlive(static_cast<flow::MegaflowIndex>(rule - 1)))
    return absl::NotFoundError("software engine: no such rule");
  const auto i = static_cast<flow::MegaflowIndex>(rule - 1);
  const flow::Megaflow& rec = rules_.at(i);
  (void)editable().remove(rec.mask, rec.key);
  if (isTunnelRule(rec.key)) --tunnel_rules_;
  // Dead at once: the callback's classifier checks liveness on every hit.
  rules_.kill(i);
  killed_.push_back(i);
  return absl::OkStatus();
}

absl::Status SoftwareProvider::flush(uint16_t dpdk_port) {
  if (absl::Status s = checkPort(dpdk_port); !s.ok()) return s;
  std::vector<flow::MegaflowIndex> live;
  rules_.forEachLive([&](flow::MegaflowIndex i, const flow::Megaflow&) { live.push_back(i); });
  for (flow::MegaflowIndex i : live) (void)destroy(dpdk_port, static_cast<RuleHandle>(i) + 1);
  return absl::OkStatus();
}

bool SoftwareProvider::sync() {
  if (next_) {
    auto set = std::make_unique<SwRuleSet>();
    set->version = ++version_;
    set->classifier = next_.get();
    set->rules = &rules_;
    set->tunnel_rules = tunnel_rules_;
    shared_->current.store(set.get(), std::memory_order_release);
    classifiers_.push_back(std::move(next_));
    sets_.push_back(std::move(set));
  }
  if (sets_.size() <= 1 && killed_.empty()) return true;
  // Wait until every queue has processed everything marked before `version_`.
  const auto deadline = std::chrono::steady_clock::now() + kGraceLimit;
  bool passed = true;
  for (uint16_t q = 0; q < rx_queues_; ++q) {
    while (shared_->queues[q].seen.load(std::memory_order_acquire) < version_) {
      if (std::chrono::steady_clock::now() >= deadline) {
        passed = false;
        break;
      }
      std::this_thread::sleep_for(kGracePoll);
    }
    if (!passed) break;
  }
  if (!port_) passed = true;  // no callback installed: nothing can be marked
  if (!passed) return false;
  // Only the newest version can still be read.
  if (sets_.size() > 1) {
    sets_.erase(sets_.begin(), sets_.end() - 1);
    classifiers_.erase(classifiers_.begin(), classifiers_.end() - 1);
  }
  for (flow::MegaflowIndex i : killed_) (void)rules_.recycle(i);
  killed_.clear();
  return true;
}

void SoftwareProvider::selfCost(uint64_t* cycles, uint64_t* packets) const {
  *cycles = *packets = 0;
  for (const auto& q : shared_->queues) {
    *cycles += q.cycles.load(std::memory_order_relaxed);
    *packets += q.packets.load(std::memory_order_relaxed);
  }
}

uint64_t SoftwareProvider::packetsMarked() const {
  uint64_t n = 0;
  for (const auto& q : shared_->queues) n += q.marked.load(std::memory_order_relaxed);
  return n;
}

}  // namespace sluice::offload

namespace {
// Twice the cap: marks of destroyed rules wait a grace period before reuse.
std::unique_ptr<sluice::offload::OffloadProvider> makeSoftwareProvider(uint32_t max_flows) {
  return std::make_unique<sluice::offload::SoftwareProvider>(2 * max_flows);
}
}  // namespace

SLUICE_REGISTER_OFFLOAD_PROVIDER_STAND_IN(software, makeSoftwareProvider,
                                          "OFFLOAD: provider \"software\" configured: a SOFTWARE flow engine stands "
                                          "in for NIC hardware (tests and demos only, not hardware offload)");
