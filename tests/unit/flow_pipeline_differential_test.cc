// Differential test of the cached decision against the tables current at
// that moment: random traffic over random, changing pod tables (and, in the
// last tests, changing source validation: spoofed and own sources from ports
// whose checking and addresses change; and in the last, the external
// network: destinations outside the cluster and packets from the uplink).
// It drives
// the real flow components the PMD uses (FlowLookup over a MegaflowTable,
// inline translation of misses, upcalls through the queue) and the real
// control side (FlowControl: install, revalidate, expire, commit), honouring
// the PMD's quiescent point by hand, and compares every packet's decision
// with an independent model of the routing rules. No EAL: keys are built
// from frames with extractFlowKey, as the PMD does.
#include <gtest/gtest.h>

#include <cstring>
#include <array>
#include <map>
#include <random>
#include <set>

#include "dataplane/core/flow_control.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "tests/support/frames.h"

namespace sluice {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace flow_pipeline_differential_test {

using flow::FlowKey;
using flow::MegaflowActions;

const Ipv4Address kGw = *Ipv4Address::parse("10.7.0.1");
constexpr uint16_t kUplinkPort = 9;  // the encap action's output port

Ipv4Address addr(uint32_t host) { return Ipv4Address{kGw.value - 1 + host}; }  // 10.7.0.<host>

// The routing rules, written independently of flow_translate.cc.
struct Decision {
  bool output;
  uint16_t port_or_reason;  // an encap's tunnel
  bool encap = false;
  bool external = false;    // through the external gateway (port_or_reason: the uplink)
  bool operator==(const Decision&) const = default;
};
Decision model(const std::map<uint32_t, uint16_t>& pods, Ipv4Address dst, uint8_t ttl) {
  if (dst == kGw) return {false, static_cast<uint16_t>(DropReason::kToGateway)};
  auto it = pods.find(dst.value);
  if (it == pods.end()) return {false, static_cast<uint16_t>(DropReason::kNoRoute)};
  if (ttl <= 1) return {false, static_cast<uint16_t>(DropReason::kTtlExceeded)};
  return {true, it->second};
}
Decision fromActions(const MegaflowActions& a) {
  if (a.kind == MegaflowActions::Kind::kEncap) return Decision{true, static_cast<uint16_t>(a.arg), true};
  if (a.kind == MegaflowActions::Kind::kExternal) return Decision{true, a.out_port, false, true};
  return a.kind == MegaflowActions::Kind::kOutput ? Decision{true, a.out_port} : Decision{false, a.drop_reason};
}

uint64_t g_tsc = 1;
uint64_t fakeTsc() { return g_tsc; }

TEST(FlowPipelineDifferentialTest, CachedDecisionsEqualTheCurrentTables) {
  std::mt19937 rng(4242);
  PmdContext pmd;
  pmd.megaflows = std::make_unique<flow::MegaflowTable>(64);  // small: the flow limit is hit too
  flow::MegaflowTable& table = *pmd.megaflows;
  UpcallQueue& queue = pmd.upcalls;
  PmdMailbox& mailbox = pmd.mailbox;
  FlowControl control({&pmd}, 1'000'000, /*idle_ms=*/5, &fakeTsc);
  flow::FlowLookupConfig cfg;
  cfg.emc = {256, 2, 7};
  cfg.smc = {1024, true};
  cfg.cycles = &fakeTsc;
  auto lookup_or = flow::FlowLookup::create(cfg, table);
  ASSERT_TRUE(lookup_or.ok());
  flow::FlowLookup& lookup = **lookup_or;

  std::map<uint32_t, uint16_t> pods;  // address -> port
  auto fibOf = [&](const std::map<uint32_t, uint16_t>& p) {
    std::vector<ForwardingTable::Entry> e;
    for (auto [ip, port] : p) e.push_back({Ipv4Address{ip}, port, MacAddress::fromIpv4(Ipv4Address{ip})});
    return std::make_shared<const ForwardingTable>(e);
  };
  std::shared_ptr<const ForwardingTable> fib = fibOf(pods);
  // The PMD's quiescent point: it drops its classifier pointer while control
  // commits (frees the old version, recycles), then picks up the new one.
  auto commit = [&] {
    lookup.setClassifier(nullptr);
    control.commit();
    lookup.setClassifier(mailbox.classifier.load());
  };

  uint64_t hits = 0, misses = 0, checked = 0;
  // One burst as the PMD runs it. Hits must agree with `now_pods` (the new
  // tables: a surviving megaflow is valid for them); misses are translated
  // with the PMD's snapshot tables (`pmd_fib`), so they agree with `pmd_pods`.
  auto burst = [&](const std::map<uint32_t, uint16_t>& now_pods, const std::map<uint32_t, uint16_t>& pmd_pods,
                   const ForwardingTable& pmd_fib) {
    FlowKey keys[32];
    Ipv4Address dst[32];
    uint8_t ttl[32];
    for (int i = 0; i < 32; ++i) {
      dst[i] = addr(1 + rng() % 24);
      ttl[i] = std::array<uint8_t, 4>{0, 1, 2, 64}[rng() % 4];
      test::UdpFrameSpec s{MacAddress::fromIpv4(addr(2)), MacAddress::fromIpv4(kGw), addr(2 + rng() % 3), dst[i]};
      s.ttl = ttl[i];
      s.src_port = static_cast<uint16_t>(rng());
      test::Frame f = test::udpFrame(s);
      ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), static_cast<uint16_t>(rng() % 4),
                                     std::nullopt, keys[i]),
                flow::ParseResult::kOk);
    }
    flow::MegaflowIndex out[32];
    uint16_t miss_idx[32];
    uint32_t n_miss = lookup.lookupBurst(keys, 32, out, miss_idx);
    for (int i = 0; i < 32; ++i) {
      if (out[i] == flow::kNoMegaflow) continue;
      ++hits;
      ASSERT_EQ(fromActions(table.at(out[i]).actions), model(now_pods, dst[i], ttl[i]))
          << dst[i].toString() << " ttl " << int(ttl[i]);
    }
    for (uint32_t j = 0; j < n_miss; ++j) {
      const int i = miss_idx[j];
      ++misses;
      FlowTranslation t;
      translateFlow({&pmd_fib, kGw.networkOrder()}, keys[i], t);
      ASSERT_EQ(fromActions(t.actions), model(pmd_pods, dst[i], ttl[i]));
      (void)queue.push(keys[i]);
    }
    checked += 32;
  };

  for (int epoch = 0; epoch < 400; ++epoch) {
    g_tsc += 1000;  // 1 ms per epoch: megaflows unused for 5 epochs expire
    if (rng() % 4 == 0) {
      // A table change: a pod comes (possibly on another port) or goes.
      std::map<uint32_t, uint16_t> next = pods;
      uint32_t host = 2 + rng() % 20;
      if (next.erase(addr(host).value) == 0) next[addr(host).value] = static_cast<uint16_t>(rng() % 8);
      auto next_fib = fibOf(next);
      control.revalidate({next_fib.get(), kGw.networkOrder()});
      // Between revalidation and the PMD's pick-up of the new snapshot.
      burst(next, pods, *fib);
      pods = std::move(next);
      fib = next_fib;
      commit();
    }
    burst(pods, pods, *fib);
    if (rng() % 2 == 0) {
      control.handleUpcalls({fib.get(), kGw.networkOrder()});
      if (epoch % 7 == 0) control.expireIdle();
      commit();
    }
  }
  EXPECT_EQ(checked, hits + misses);
  EXPECT_GT(hits, checked / 2) << "the caches answered most packets";
  EXPECT_GT(control.counters()[0].revalidated, 0u);
  EXPECT_GT(control.counters()[0].expired, 0u);
}

// The same over mixed IPv4 and IPv6 traffic, with both families' pod tables
// and the remote nodes' IPv6 pod CIDRs changing: a megaflow of one family
// must never answer a packet of the other, and IPv6 decisions must follow
// the /128 table and the remote routes as IPv4's follow theirs.
const Ipv6Cidr kCidr6 = *Ipv6Cidr::parse("fd00:7::/64");
Ipv6Address addr6(uint32_t host) { return kCidr6.host(host); }  // fd00:7::<host>

// Remote nodes' IPv6 pod CIDRs that come and go (nested, adjacent, narrow)
// and the tunnel of each; destinations in, between and beside them.
struct RemoteCidr6 {
  Ipv6Cidr cidr;
  uint16_t tunnel;
};
const RemoteCidr6 kRemote6[] = {{*Ipv6Cidr::parse("fd00:8::/64"), 0},
                                {*Ipv6Cidr::parse("fd00:8::/48"), 1},
                                {*Ipv6Cidr::parse("fd00:9::/64"), 1},
                                {*Ipv6Cidr::parse("2001:db8::/127"), 0}};
const Ipv6Address kFar6[] = {*Ipv6Address::parse("fd00:8::5"),    *Ipv6Address::parse("fd00:8:0:1::5"),
                             *Ipv6Address::parse("fd00:9::5"),    *Ipv6Address::parse("2001:db8::"),
                             *Ipv6Address::parse("2001:db8::3"),  *Ipv6Address::parse("fd00:a::1")};
constexpr uint32_t kFarBase = 0x10000;  // dst numbers from here on index kFar6

Decision model6(const std::map<uint32_t, uint16_t>& pods6, const std::set<size_t>& remote, uint32_t dst_host,
                uint8_t hop_limit) {
  if (dst_host >= kFarBase) {
    const Ipv6Address& to = kFar6[dst_host - kFarBase];
    const RemoteCidr6* best = nullptr;
    for (size_t r : remote)
      if (kRemote6[r].cidr.contains(to) && (best == nullptr || kRemote6[r].cidr.prefix_len > best->cidr.prefix_len))
        best = &kRemote6[r];
    if (best == nullptr) return {false, static_cast<uint16_t>(DropReason::kNoRoute)};
    if (hop_limit <= 1) return {false, static_cast<uint16_t>(DropReason::kTtlExceeded)};
    return {true, best->tunnel, true};
  }
  if (dst_host == 1) return {false, static_cast<uint16_t>(DropReason::kToGateway)};
  auto it = pods6.find(dst_host);
  if (it == pods6.end()) return {false, static_cast<uint16_t>(DropReason::kNoRoute)};
  if (hop_limit <= 1) return {false, static_cast<uint16_t>(DropReason::kTtlExceeded)};
  return {true, it->second};
}

TEST(FlowPipelineDifferentialTest, MixedIpv4AndIpv6DecisionsEqualTheCurrentTables) {
  std::mt19937 rng(6060);
  PmdContext pmd;
  pmd.megaflows = std::make_unique<flow::MegaflowTable>(96);
  flow::MegaflowTable& table = *pmd.megaflows;
  UpcallQueue& queue = pmd.upcalls;
  PmdMailbox& mailbox = pmd.mailbox;
  FlowControl control({&pmd}, 1'000'000, /*idle_ms=*/5, &fakeTsc);
  flow::FlowLookupConfig cfg;
  cfg.emc = {256, 2, 7};
  cfg.smc = {1024, true};
  cfg.cycles = &fakeTsc;
  auto lookup_or = flow::FlowLookup::create(cfg, table);
  ASSERT_TRUE(lookup_or.ok());
  flow::FlowLookup& lookup = **lookup_or;

  Ipv6PodNet net;
  net.enabled = true;
  net.prefix_len = 64;
  std::memcpy(net.net, kCidr6.network.bytes.data(), 16);
  std::memcpy(net.gateway, addr6(1).bytes.data(), 16);
  std::memcpy(net.gateway_link_local, linkLocalFromMac(MacAddress::fromIpv4(kGw)).bytes.data(), 16);

  struct Tables {
    std::map<uint32_t, uint16_t> pods, pods6;  // host order IPv4 / IPv6 host number -> port
    std::set<size_t> remote;                   // indices into kRemote6
    std::shared_ptr<const ForwardingTable> fib;
    std::shared_ptr<const Ipv6ForwardingTable> fib6;
    std::shared_ptr<const vxlan::OverlayTables> overlay;
  };
  auto build = [](Tables& t) {
    std::vector<vxlan::OverlayTables::Tunnel> tunnels(2);
    tunnels[0].vtep_be = Ipv4Address{0xc0a84d02}.networkOrder();
    tunnels[1].vtep_be = Ipv4Address{0xc0a84d03}.networkOrder();
    std::vector<vxlan::RemoteRoute6> routes6;
    for (size_t r : t.remote) {
      vxlan::RemoteRoute6 route;
      route.net = kRemote6[r].cidr.network.bytes;
      route.prefix_len = kRemote6[r].cidr.prefix_len;
      route.tunnel = kRemote6[r].tunnel;
      routes6.push_back(route);
    }
    t.overlay = std::make_shared<const vxlan::OverlayTables>(std::move(tunnels), std::vector<vxlan::RemoteRoute>{},
                                                             std::move(routes6));
    std::vector<ForwardingTable::Entry> e;
    for (auto [ip, port] : t.pods) e.push_back({Ipv4Address{ip}, port, MacAddress::fromIpv4(Ipv4Address{ip})});
    std::vector<Ipv6ForwardingTable::Entry> e6;
    for (auto [host, port] : t.pods6) e6.push_back({addr6(host), port, MacAddress::fromIpv6(addr6(host))});
    t.fib = std::make_shared<const ForwardingTable>(e);
    t.fib6 = std::make_shared<const Ipv6ForwardingTable>(e6);
  };
  auto routes = [&](const Tables& t) {
    return RouteTables{t.fib.get(), kGw.networkOrder(), t.overlay.get(), kUplinkPort, t.fib6.get(), &net};
  };
  Tables tables;
  build(tables);
  auto commit = [&] {
    lookup.setClassifier(nullptr);
    control.commit();
    lookup.setClassifier(mailbox.classifier.load());
  };

  uint64_t hits = 0, misses = 0, checked = 0, v6_hits = 0, encap_hits = 0;
  auto burst = [&](const Tables& now, const Tables& at_pmd) {
    FlowKey keys[32];
    bool v6[32];
    uint32_t dst[32];
    uint8_t ttl[32];
    for (int i = 0; i < 32; ++i) {
      v6[i] = rng() % 2 == 0;
      ttl[i] = std::array<uint8_t, 4>{0, 1, 2, 64}[rng() % 4];
      test::Frame f;
      if (v6[i]) {
        // Mostly the pod CIDR; now and then a remote node or far away (a
        // prefix megaflow).
        dst[i] = rng() % 4 == 0 ? kFarBase + rng() % std::size(kFar6) : 1 + rng() % 24;
        const Ipv6Address to = dst[i] >= kFarBase ? kFar6[dst[i] - kFarBase] : addr6(dst[i]);
        test::Udp6FrameSpec s{MacAddress::fromIpv6(addr6(2)), MacAddress::fromIpv4(kGw), addr6(2 + rng() % 3), to};
        s.hop_limit = ttl[i];
        s.src_port = static_cast<uint16_t>(rng());
        f = test::udp6Frame(s);
      } else {
        dst[i] = addr(1 + rng() % 24).value;
        test::UdpFrameSpec s{MacAddress::fromIpv4(addr(2)), MacAddress::fromIpv4(kGw), addr(2 + rng() % 3),
                             Ipv4Address{dst[i]}};
        s.ttl = ttl[i];
        s.src_port = static_cast<uint16_t>(rng());
        f = test::udpFrame(s);
      }
      ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), static_cast<uint16_t>(rng() % 4),
                                     std::nullopt, keys[i]),
                flow::ParseResult::kOk);
    }
    auto expected = [&](const Tables& t, int i) {
      return v6[i] ? model6(t.pods6, t.remote, dst[i], ttl[i]) : model(t.pods, Ipv4Address{dst[i]}, ttl[i]);
    };
    flow::MegaflowIndex out[32];
    uint16_t miss_idx[32];
    uint32_t n_miss = lookup.lookupBurst(keys, 32, out, miss_idx);
    for (int i = 0; i < 32; ++i) {
      if (out[i] == flow::kNoMegaflow) continue;
      ++hits;
      v6_hits += v6[i];
      ASSERT_EQ(fromActions(table.at(out[i]).actions), expected(now, i)) << (v6[i] ? "v6 " : "v4 ") << dst[i];
      if (fromActions(table.at(out[i]).actions).output) {
        EXPECT_EQ(table.at(out[i]).actions.rewrite_flags, v6[i] ? kRewriteL3v6 : kRewriteL3);
      }
      if (table.at(out[i]).actions.kind == MegaflowActions::Kind::kEncap) {
        ++encap_hits;
        EXPECT_EQ(table.at(out[i]).actions.out_port, kUplinkPort);
      }
    }
    for (uint32_t j = 0; j < n_miss; ++j) {
      const int i = miss_idx[j];
      ++misses;
      FlowTranslation t;
      translateFlow(routes(at_pmd), keys[i], t);
      ASSERT_EQ(fromActions(t.actions), expected(at_pmd, i)) << (v6[i] ? "v6 " : "v4 ") << dst[i];
      (void)queue.push(keys[i]);
    }
    checked += 32;
  };

  for (int epoch = 0; epoch < 400; ++epoch) {
    g_tsc += 1000;
    if (rng() % 4 == 0) {
      Tables next = tables;
      const uint32_t host = 2 + rng() % 20;
      const uint32_t what = rng() % 3;
      if (what == 0) {
        if (next.pods.erase(addr(host).value) == 0) next.pods[addr(host).value] = static_cast<uint16_t>(rng() % 8);
      } else if (what == 1) {
        if (next.pods6.erase(host) == 0) next.pods6[host] = static_cast<uint16_t>(rng() % 8);
      } else {
        const size_t r = rng() % std::size(kRemote6);  // a remote node's IPv6 CIDR comes or goes
        if (next.remote.erase(r) == 0) next.remote.insert(r);
      }
      build(next);
      control.revalidate(routes(next));
      burst(next, tables);
      tables = std::move(next);
      commit();
    }
    burst(tables, tables);
    if (rng() % 2 == 0) {
      control.handleUpcalls(routes(tables));
      if (epoch % 7 == 0) control.expireIdle();
      commit();
    }
  }
  EXPECT_EQ(checked, hits + misses);
  EXPECT_GT(hits, checked / 2) << "the caches answered most packets";
  EXPECT_GT(v6_hits, hits / 4) << "IPv6 went through the caches too";
  EXPECT_GT(encap_hits, 0u) << "remote IPv6 destinations were encapsulated from the caches";
  EXPECT_GT(control.counters()[0].revalidated, 0u);
}


// The same with source validation: four pod ports, each owning the IPv4,
// IPv6 and MAC of one host number (which changes when the port is re-made
// for another pod) and checked or not (which changes too). Sources are
// drawn from a few hosts' addresses and link-local addresses, so that most
// packets of a checked port are spoofed in one way or another: no megaflow
// made for one port's own or spoofed source may answer a packet decided
// otherwise, before or after any change.
// A port's own sources are its owner host's MAC and IPv4 / IPv6 / link-local
// address (the link-local one made from that MAC): `src_host` names whose
// address the packet carries, whichever kind it is.
Decision modelSources(bool checked, uint32_t owner, uint32_t mac_host, uint32_t src_host) {
  if (!checked) return {true, 0};
  if (mac_host != owner) return {false, static_cast<uint16_t>(DropReason::kSpoofedSourceMac)};
  if (src_host != owner) return {false, static_cast<uint16_t>(DropReason::kSpoofedSourceIp)};
  return {true, 0};
}

TEST(FlowPipelineDifferentialTest, SpoofedAndOwnSourcesAreDecidedByTheCurrentSourceTable) {
  std::mt19937 rng(9191);
  PmdContext pmd;
  pmd.megaflows = std::make_unique<flow::MegaflowTable>(256);
  flow::MegaflowTable& table = *pmd.megaflows;
  UpcallQueue& queue = pmd.upcalls;
  PmdMailbox& mailbox = pmd.mailbox;
  FlowControl control({&pmd}, 1'000'000, /*idle_ms=*/5, &fakeTsc);
  flow::FlowLookupConfig cfg;
  cfg.emc = {256, 2, 7};
  cfg.smc = {1024, true};
  cfg.cycles = &fakeTsc;
  auto lookup_or = flow::FlowLookup::create(cfg, table);
  ASSERT_TRUE(lookup_or.ok());
  flow::FlowLookup& lookup = **lookup_or;

  Ipv6PodNet net;
  net.enabled = true;
  net.prefix_len = 64;
  std::memcpy(net.net, kCidr6.network.bytes.data(), 16);
  std::memcpy(net.gateway, addr6(1).bytes.data(), 16);
  std::memcpy(net.gateway_link_local, linkLocalFromMac(MacAddress::fromIpv4(kGw)).bytes.data(), 16);
  auto macOf = [](uint32_t host) { return MacAddress::fromIpv4(addr(host)); };

  constexpr uint16_t kPorts = 4;
  struct Tables {
    std::array<uint32_t, kPorts> owner{2, 3, 4, 5};  // the host number whose addresses the port has
    std::array<bool, kPorts> checked{true, true, true, false};
    std::shared_ptr<const ForwardingTable> fib;
    std::shared_ptr<const Ipv6ForwardingTable> fib6;
    std::shared_ptr<const SourceTable> sources;
  };
  // Every port's pod is also a destination (port p at its owner's addresses).
  auto build = [&](Tables& t) {
    std::vector<ForwardingTable::Entry> e;
    std::vector<Ipv6ForwardingTable::Entry> e6;
    auto src = std::make_shared<SourceTable>();
    for (uint16_t p = 0; p < kPorts; ++p) {
      e.push_back({addr(t.owner[p]), p, macOf(t.owner[p])});
      e6.push_back({addr6(t.owner[p]), p, macOf(t.owner[p])});
      PortSources& ps = src->ports[p];
      ps.checked = t.checked[p];
      std::memcpy(ps.mac, macOf(t.owner[p]).bytes.data(), 6);
      ps.has_ipv4 = ps.has_ipv6 = true;
      ps.ipv4_be = addr(t.owner[p]).networkOrder();
      std::memcpy(ps.ipv6, addr6(t.owner[p]).bytes.data(), 16);
      std::memcpy(ps.link_local, linkLocalFromMac(macOf(t.owner[p])).bytes.data(), 16);
    }
    t.fib = std::make_shared<const ForwardingTable>(e);
    t.fib6 = std::make_shared<const Ipv6ForwardingTable>(e6);
    t.sources = src;
  };
  auto routes = [&](const Tables& t) {
    return RouteTables{.fib = t.fib.get(), .gateway_ip_be = kGw.networkOrder(), .fib6 = t.fib6.get(), .v6 = &net,
                       .sources = t.sources.get()};
  };
  Tables tables;
  build(tables);
  auto commit = [&] {
    lookup.setClassifier(nullptr);
    control.commit();
    lookup.setClassifier(mailbox.classifier.load());
  };

  uint64_t hits = 0, misses = 0, checked = 0, spoofed_hits = 0;
  auto burst = [&](const Tables& now, const Tables& at_pmd) {
    FlowKey keys[32];
    struct Sent {
      uint16_t in_port;
      bool v6, link_local;
      uint32_t src_host, mac_host, dst_port;
    } sent[32];
    for (int i = 0; i < 32; ++i) {
      Sent& x = sent[i];
      x.in_port = static_cast<uint16_t>(rng() % kPorts);
      x.v6 = rng() % 2 == 0;
      x.src_host = 2 + rng() % 6;
      x.mac_host = rng() % 4 == 0 ? 2 + rng() % 6 : x.src_host;
      x.link_local = x.v6 && rng() % 4 == 0;
      x.dst_port = rng() % kPorts;  // to another port's pod, as the tables at the PMD place it
      test::Frame f;
      if (x.v6) {
        const Ipv6Address src = x.link_local ? linkLocalFromMac(macOf(x.src_host)) : addr6(x.src_host);
        test::Udp6FrameSpec s{macOf(x.mac_host), MacAddress::fromIpv4(kGw), src, addr6(at_pmd.owner[x.dst_port])};
        s.src_port = static_cast<uint16_t>(rng());
        f = test::udp6Frame(s);
      } else {
        test::UdpFrameSpec s{macOf(x.mac_host), MacAddress::fromIpv4(kGw), addr(x.src_host),
                             addr(at_pmd.owner[x.dst_port])};
        s.src_port = static_cast<uint16_t>(rng());
        f = test::udpFrame(s);
      }
      ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), x.in_port, std::nullopt, keys[i]),
                flow::ParseResult::kOk);
    }
    // The uncached rules: sources first, then the destination (a pod of
    // `t`, or unrouted when that host's pod moved away meanwhile).
    auto expected = [&](const Tables& t, int i) {
      const Sent& x = sent[i];
      Decision d = modelSources(t.checked[x.in_port], t.owner[x.in_port], x.mac_host, x.src_host);
      if (!d.output) return d;
      const uint32_t dst_host = at_pmd.owner[x.dst_port];
      for (uint16_t p = 0; p < kPorts; ++p)
        if (t.owner[p] == dst_host) return Decision{true, p};
      return Decision{false, static_cast<uint16_t>(DropReason::kNoRoute)};
    };
    flow::MegaflowIndex out[32];
    uint16_t miss_idx[32];
    uint32_t n_miss = lookup.lookupBurst(keys, 32, out, miss_idx);
    for (int i = 0; i < 32; ++i) {
      if (out[i] == flow::kNoMegaflow) continue;
      ++hits;
      const Decision got = fromActions(table.at(out[i]).actions);
      spoofed_hits += !got.output && got.port_or_reason != static_cast<uint16_t>(DropReason::kNoRoute);
      ASSERT_EQ(got, expected(now, i)) << "port " << sent[i].in_port << " mac " << sent[i].mac_host << " src "
                                       << sent[i].src_host << (sent[i].v6 ? " v6" : " v4");
    }
    for (uint32_t j = 0; j < n_miss; ++j) {
      const int i = miss_idx[j];
      ++misses;
      FlowTranslation t;
      translateFlow(routes(at_pmd), keys[i], t);
      ASSERT_EQ(fromActions(t.actions), expected(at_pmd, i));
      (void)queue.push(keys[i]);
    }
    checked += 32;
  };

  for (int epoch = 0; epoch < 600; ++epoch) {
    g_tsc += 1000;
    if (rng() % 4 == 0) {
      // A port's checking turned over, or the port re-made for another
      // pod (other addresses, possibly one another port had).
      Tables next = tables;
      const uint16_t p = static_cast<uint16_t>(rng() % kPorts);
      if (rng() % 2 == 0) {
        next.checked[p] = !next.checked[p];
      } else {
        uint32_t host = 2 + rng() % 6;
        bool taken = false;
        for (uint16_t q = 0; q < kPorts; ++q) taken |= q != p && next.owner[q] == host;
        if (!taken) next.owner[p] = host;
      }
      build(next);
      control.revalidate(routes(next));
      burst(next, tables);
      tables = std::move(next);
      commit();
    }
    burst(tables, tables);
    if (rng() % 2 == 0) {
      control.handleUpcalls(routes(tables));
      if (epoch % 7 == 0) control.expireIdle();
      commit();
    }
  }
  EXPECT_EQ(checked, hits + misses);
  EXPECT_GT(hits, checked / 2) << "the caches answered most packets";
  EXPECT_GT(spoofed_hits, hits / 10) << "spoofed packets were dropped from the caches too";
  EXPECT_GT(control.counters()[0].revalidated, 0u);
}

// The same with prefixes routed to local pods' ports, both families: the
// prefixes come, go and move between ports (as pods own and release them),
// beside remote nodes' pod CIDRs (adjacent to some, nested in none: the
// control path refuses overlaps) and the local pods. Destinations fall
// inside, at the edges of and just outside every prefix; sources of the
// checked ports are their own, inside their own prefixes, or inside
// another port's. No megaflow made for one prefix's owner may answer a
// packet whose prefix moved or went, nor a source decided otherwise.
// With them, the exception path to the node's kernel (host_path.h): its
// host addresses sit just beside unrouted probes (so a widened no_route
// megaflow must not swallow them), and its TAP port sends from the host
// addresses, its link-local address, or anything else (spoofed).
struct PrefixCandidate {
  const char* cidr;
  // Addresses inside it and just outside it (edges).
  std::array<const char*, 4> probes;
};
const PrefixCandidate kPrefixes4[] = {
    {"10.100.0.0/16", {"10.100.0.0", "10.100.255.255", "10.101.0.0", "10.99.255.255"}},
    {"10.101.4.0/22", {"10.101.4.1", "10.101.7.255", "10.101.8.0", "10.101.3.255"}},
    {"10.101.8.0/24", {"10.101.8.7", "10.101.8.255", "10.101.9.0", "10.101.7.7"}},
    {"192.168.0.0/30", {"192.168.0.1", "192.168.0.3", "192.168.0.4", "192.167.255.255"}},
};
const PrefixCandidate kPrefixes6[] = {
    {"fd00:100::/48", {"fd00:100::1", "fd00:100:0:ffff::9", "fd00:101::", "fd00:ff:ffff::1"}},
    {"fd00:101:0:4::/62", {"fd00:101:0:4::1", "fd00:101:0:7::1", "fd00:101:0:8::", "fd00:101:0:3::5"}},
    {"2001:db8:1::/127", {"2001:db8:1::", "2001:db8:1::1", "2001:db8:1::2", "2001:db8::1"}},
};
// Remote nodes: IPv4 10.101.0.0/22 (beside 10.101.4.0/22) on tunnel 0,
// IPv6 fd00:101::/62 (beside fd00:101:0:4::/62) on tunnel 1.
const Ipv4Cidr kRemotePrefix4 = *Ipv4Cidr::parse("10.101.0.0/22");
// With the external network: this node's pod CIDR, and addresses outside
// the cluster, some beside its ranges, some no router forwards.
const Ipv4Cidr kPodCidr4 = *Ipv4Cidr::parse("10.7.0.0/24");
const char* const kOutside[] = {"203.0.113.9", "8.8.8.8",     "10.7.1.9",  "10.101.9.9",  "192.168.0.8",
                                "224.0.0.5",   "169.254.1.1", "169.1.1.1", "127.0.0.1",   "255.255.255.255"};
const Ipv6Cidr kRemotePrefix6 = *Ipv6Cidr::parse("fd00:101::/62");
const Ipv4Address kHost4 = *Ipv4Address::parse("10.101.9.1");
const Ipv6Address kHost6 = *Ipv6Address::parse("fd00:101:0:8::1");
const MacAddress kKernelMac = *MacAddress::parse("02:fe:00:00:00:05");
constexpr uint16_t kHostPort = 5;

TEST(FlowPipelineDifferentialTest, RoutedPrefixesAreDecidedByTheCurrentTables) {
  std::mt19937 rng(2727);
  PmdContext pmd;
  pmd.megaflows = std::make_unique<flow::MegaflowTable>(1024);
  flow::MegaflowTable& table = *pmd.megaflows;
  UpcallQueue& queue = pmd.upcalls;
  PmdMailbox& mailbox = pmd.mailbox;
  FlowControl control({&pmd}, 1'000'000, /*idle_ms=*/5, &fakeTsc);
  flow::FlowLookupConfig cfg;
  cfg.emc = {256, 2, 7};
  cfg.smc = {1024, true};
  cfg.cycles = &fakeTsc;
  auto lookup_or = flow::FlowLookup::create(cfg, table);
  ASSERT_TRUE(lookup_or.ok());
  flow::FlowLookup& lookup = **lookup_or;

  Ipv6PodNet net;
  net.enabled = true;
  net.prefix_len = 64;
  std::memcpy(net.net, kCidr6.network.bytes.data(), 16);
  std::memcpy(net.gateway, addr6(1).bytes.data(), 16);
  std::memcpy(net.gateway_link_local, linkLocalFromMac(MacAddress::fromIpv4(kGw)).bytes.data(), 16);
  auto macOf = [](uint32_t host) { return MacAddress::fromIpv4(addr(host)); };

  // Ports 0..3 own host 2+p's addresses; 0..2 checked, 3 not.
  constexpr uint16_t kPorts = 4;
  constexpr uint16_t kNone = 0xffff;
  struct Tables {
    std::array<uint16_t, std::size(kPrefixes4)> owner4{kNone, kNone, kNone, kNone};
    std::array<uint16_t, std::size(kPrefixes6)> owner6{kNone, kNone, kNone};
    std::shared_ptr<const ForwardingTable> fib;
    std::shared_ptr<const Ipv6ForwardingTable> fib6;
    std::shared_ptr<const SourceTable> sources;
    std::shared_ptr<const RoutedPrefixTable> prefixes;
    std::shared_ptr<const vxlan::OverlayTables> overlay;
    bool external = true;  // the external network on the uplink
  };
  auto build = [&](Tables& t) {
    std::vector<ForwardingTable::Entry> e;
    std::vector<Ipv6ForwardingTable::Entry> e6;
    auto src = std::make_shared<SourceTable>();
    for (uint16_t p = 0; p < kPorts; ++p) {
      const uint32_t host = 2u + p;
      e.push_back({addr(host), p, macOf(host)});
      e6.push_back({addr6(host), p, macOf(host)});
      PortSources& ps = src->ports[p];
      ps.checked = p != 3;
      std::memcpy(ps.mac, macOf(host).bytes.data(), 6);
      ps.has_ipv4 = ps.has_ipv6 = true;
      ps.ipv4_be = addr(host).networkOrder();
      std::memcpy(ps.ipv6, addr6(host).bytes.data(), 16);
      std::memcpy(ps.link_local, linkLocalFromMac(macOf(host)).bytes.data(), 16);
    }
    std::vector<RoutedPrefix> v4;
    std::vector<RoutedPrefix6> v6;
    for (size_t i = 0; i < std::size(kPrefixes4); ++i) {
      if (t.owner4[i] == kNone) continue;
      const Ipv4Cidr c = *Ipv4Cidr::parse(kPrefixes4[i].cidr);
      v4.push_back({c.network.networkOrder(), Ipv4Address{c.mask()}.networkOrder(), t.owner4[i]});
    }
    for (size_t i = 0; i < std::size(kPrefixes6); ++i) {
      if (t.owner6[i] == kNone) continue;
      const Ipv6Cidr c = *Ipv6Cidr::parse(kPrefixes6[i].cidr);
      v6.push_back({c.network.bytes, c.prefix_len, t.owner6[i]});
    }
    std::vector<vxlan::OverlayTables::Tunnel> tunnels(2);
    tunnels[0].vtep_be = Ipv4Address{0xc0a84d02}.networkOrder();
    tunnels[1].vtep_be = Ipv4Address{0xc0a84d03}.networkOrder();
    vxlan::RemoteRoute6 r6;
    r6.net = kRemotePrefix6.network.bytes;
    r6.prefix_len = kRemotePrefix6.prefix_len;
    r6.tunnel = 1;
    t.overlay = std::make_shared<const vxlan::OverlayTables>(
        std::move(tunnels),
        std::vector<vxlan::RemoteRoute>{
            {kRemotePrefix4.network.networkOrder(), Ipv4Address{kRemotePrefix4.mask()}.networkOrder(), 0}},
        std::vector<vxlan::RemoteRoute6>{r6});
    t.fib = std::make_shared<const ForwardingTable>(e);
    t.fib6 = std::make_shared<const Ipv6ForwardingTable>(e6);
    PortSources& hs = src->ports[kHostPort];
    hs.checked = true;
    std::memcpy(hs.mac, kKernelMac.bytes.data(), 6);
    hs.has_ipv4 = hs.has_ipv6 = true;
    hs.ipv4_be = kHost4.networkOrder();
    std::memcpy(hs.ipv6, kHost6.bytes.data(), 16);
    std::memcpy(hs.link_local, linkLocalFromMac(kKernelMac).bytes.data(), 16);
    t.sources = src;
    t.prefixes = std::make_shared<const RoutedPrefixTable>(std::move(v4), std::move(v6));
  };
  HostPath host;
  host.enabled = true;
  host.port_no = kHostPort;
  host.has_ipv4 = host.has_ipv6 = true;
  host.ipv4_be = kHost4.networkOrder();
  std::memcpy(host.ipv6, kHost6.bytes.data(), 16);
  auto routes = [&](const Tables& t) {
    return RouteTables{.fib = t.fib.get(), .gateway_ip_be = kGw.networkOrder(), .overlay = t.overlay.get(),
                       .uplink_port = kUplinkPort, .fib6 = t.fib6.get(), .v6 = &net,
                       .pod_net_be = kPodCidr4.network.networkOrder(),
                       .pod_mask_be = Ipv4Address{kPodCidr4.mask()}.networkOrder(), .sources = t.sources.get(),
                       .prefixes = t.prefixes.get(), .external = t.external, .external_max_frame = 1514,
                       .host = &host};
  };
  Tables tables;
  build(tables);
  auto commit = [&] {
    lookup.setClassifier(nullptr);
    control.commit();
    lookup.setClassifier(mailbox.classifier.load());
  };

  // A destination or source: a pod host (0: none), or a probe of a prefix.
  struct Addr {
    bool v6 = false;
    uint32_t host = 0;       // 10.7.0.<host> / fd00:7::<host> when non-zero
    size_t prefix = 0;       // else kPrefixesN[prefix].probes[probe]
    size_t probe = 0;
    int outside = -1;         // else, IPv4, kOutside[outside] when >= 0
    bool host_addr = false;   // else, the node's host address of the family
    bool link_local = false;  // else, the kernel interface's link-local address (IPv6)
  };
  auto text = [](const Addr& a) -> std::string {
    if (a.outside >= 0) return kOutside[a.outside];
    if (a.host_addr) return a.v6 ? kHost6.toString() : kHost4.toString();
    if (a.link_local) return linkLocalFromMac(kKernelMac).toString();
    if (a.host != 0) return a.v6 ? addr6(a.host).toString() : addr(a.host).toString();
    return a.v6 ? kPrefixes6[a.prefix].probes[a.probe] : kPrefixes4[a.prefix].probes[a.probe];
  };
  // The routing rules, written independently of flow_translate.cc: which
  // candidate prefix (owned now) holds an address.
  auto ownerOf = [&](const Tables& t, const Addr& a) -> uint16_t {
    if (a.v6) {
      const Ipv6Address ip = a.host != 0 ? addr6(a.host) : *Ipv6Address::parse(text(a));
      for (size_t i = 0; i < std::size(kPrefixes6); ++i)
        if (t.owner6[i] != kNone && Ipv6Cidr::parse(kPrefixes6[i].cidr)->contains(ip)) return t.owner6[i];
      return kNone;
    }
    const Ipv4Address ip = a.host != 0 ? addr(a.host) : *Ipv4Address::parse(text(a));
    if (a.outside >= 0) return kNone;
    for (size_t i = 0; i < std::size(kPrefixes4); ++i)
      if (t.owner4[i] != kNone && Ipv4Cidr::parse(kPrefixes4[i].cidr)->contains(ip)) return t.owner4[i];
    return kNone;
  };
  auto remoteTunnelOf = [&](const Addr& a) -> int {
    if (a.host != 0 || a.outside >= 0) return -1;
    if (a.v6) return kRemotePrefix6.contains(*Ipv6Address::parse(text(a))) ? 1 : -1;
    return kRemotePrefix4.contains(*Ipv4Address::parse(text(a))) ? 0 : -1;
  };
  auto randomAddr = [&](bool v6) {
    Addr a;
    a.v6 = v6;
    if (rng() % 8 == 0) {
      a.host_addr = true;
    } else if (!v6 && rng() % 4 == 0) {
      a.outside = static_cast<int>(rng() % std::size(kOutside));
    } else if (rng() % 4 == 0) {
      a.host = 1 + rng() % 7;  // the gateway, the pods, unrouted hosts of the pod CIDR
    } else {
      a.prefix = rng() % (v6 ? std::size(kPrefixes6) : std::size(kPrefixes4));
      a.probe = rng() % 4;
    }
    return a;
  };

  // Where a pod's IPv4 packet that nothing in the cluster holds may leave
  // through the external gateway (written apart from external_decision.cc).
  auto leavesOutside = [&](const Addr& a) {
    if (a.v6) return false;
    const Ipv4Address ip = a.host != 0 ? addr(a.host) : *Ipv4Address::parse(text(a));
    const uint32_t first = ip.value >> 24;
    return !kPodCidr4.contains(ip) && first != 0 && first != 127 && first < 224 && (ip.value >> 16) != 0xa9fe;
  };
  // Whether an IPv4 address is the cluster's as sources from outside go.
  auto clusters = [&](const Tables& t, const Addr& a) {
    const Ipv4Address ip = a.host != 0 ? addr(a.host) : *Ipv4Address::parse(text(a));
    return kPodCidr4.contains(ip) || ownerOf(t, a) != kNone || kRemotePrefix4.contains(ip);
  };

  uint64_t hits = 0, misses = 0, checked = 0, prefix_hits = 0, spoofed_hits = 0, external_hits = 0;
  uint64_t from_outside_hits = 0;
  uint64_t host_hits = 0, from_host_hits = 0;
  auto burst = [&](const Tables& now, const Tables& at_pmd) {
    FlowKey keys[32];
    struct Sent {
      uint16_t in_port;
      Addr src, dst;
      uint8_t ttl;
    } sent[32];
    for (int i = 0; i < 32; ++i) {
      Sent& x = sent[i];
      // One packet in six came in on the uplink untunnelled (IPv4 only: the
      // uplink stage passes nothing else); the others from a pod or the host port.
      const bool uplink = rng() % 6 == 0;
      const bool v6 = !uplink && rng() % 2 == 0;
      x.in_port = uplink ? kUplinkPort : static_cast<uint16_t>(rng() % (kPorts + 1));
      if (x.in_port == kPorts) x.in_port = kHostPort;
      x.ttl = std::array<uint8_t, 3>{1, 2, 64}[rng() % 3];
      x.dst = randomAddr(v6);
      // Mostly its own address or a probe (which its prefixes may hold).
      if (x.in_port == kHostPort && rng() % 2 == 0) {
        x.src.v6 = v6;
        x.src.host_addr = !v6 || rng() % 2 == 0;
        x.src.link_local = !x.src.host_addr;
      } else if (x.in_port == kHostPort) {
        x.src = randomAddr(v6);
      } else if (rng() % 2 == 0) {
        x.src.v6 = v6;
        x.src.host = 2u + x.in_port;
      } else {
        x.src = randomAddr(v6);
      }
      const MacAddress mac = uplink                   ? *MacAddress::parse("02:00:00:00:77:fe")
                             : x.in_port == kHostPort ? kKernelMac
                                                      : macOf(2u + x.in_port);
      test::Frame f;
      if (v6) {
        const Ipv6Address src = x.src.host != 0 ? addr6(x.src.host) : *Ipv6Address::parse(text(x.src));
        const Ipv6Address dst = x.dst.host != 0 ? addr6(x.dst.host) : *Ipv6Address::parse(text(x.dst));
        test::Udp6FrameSpec s{mac, MacAddress::fromIpv4(kGw), src, dst};
        s.hop_limit = x.ttl;
        s.src_port = static_cast<uint16_t>(rng());
        f = test::udp6Frame(s);
      } else {
        const Ipv4Address src = x.src.host != 0 ? addr(x.src.host) : *Ipv4Address::parse(text(x.src));
        const Ipv4Address dst = x.dst.host != 0 ? addr(x.dst.host) : *Ipv4Address::parse(text(x.dst));
        test::UdpFrameSpec s{mac, MacAddress::fromIpv4(kGw), src, dst};
        s.ttl = x.ttl;
        s.src_port = static_cast<uint16_t>(rng());
        f = test::udpFrame(s);
      }
      ASSERT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), x.in_port, std::nullopt, keys[i]),
                flow::ParseResult::kOk);
    }
    auto expected = [&](const Tables& t, int i) -> Decision {
      const Sent& x = sent[i];
      if (x.in_port == kHostPort) {
        if (!x.src.host_addr && !x.src.link_local) return {false, static_cast<uint16_t>(DropReason::kSpoofedSourceIp)};
      } else {
        const bool own_src = x.src.host == 2u + x.in_port;
        if (x.in_port < 3 && !own_src && ownerOf(t, x.src) != x.in_port)
          return {false, static_cast<uint16_t>(DropReason::kSpoofedSourceIp)};
      }
      uint16_t port = kNone;
      if (x.dst.host >= 2 && x.dst.host < 2u + kPorts) port = static_cast<uint16_t>(x.dst.host - 2);
      if (x.dst.host == 0 && x.dst.outside < 0) port = ownerOf(t, x.dst);
      if (t.external && x.in_port == kUplinkPort) {
        // From outside, the node's own addresses are not reached (its kernel has the uplink).
        if (clusters(t, x.src)) return {false, static_cast<uint16_t>(DropReason::kExternalSpoofedSource)};
        if (port == kNone) return {false, static_cast<uint16_t>(DropReason::kExternalNotLocal)};
        if (x.ttl <= 1) return {false, static_cast<uint16_t>(DropReason::kTtlExceeded)};
        return {true, port};
      }
      if (x.dst.host == 1) return {false, static_cast<uint16_t>(DropReason::kToGateway)};
      if (x.dst.host_addr) port = kHostPort;
      const int tunnel = remoteTunnelOf(x.dst);
      if (port == kNone && tunnel < 0 && t.external && leavesOutside(x.dst)) {
        if (x.ttl <= 1) return {false, static_cast<uint16_t>(DropReason::kTtlExceeded)};
        return {true, kUplinkPort, false, true};
      }
      if (port == kNone && tunnel < 0) return {false, static_cast<uint16_t>(DropReason::kNoRoute)};
      if (x.ttl <= 1) return {false, static_cast<uint16_t>(DropReason::kTtlExceeded)};
      if (port == kNone) return {true, static_cast<uint16_t>(tunnel), true};
      return {true, port};
    };
    flow::MegaflowIndex out[32];
    uint16_t miss_idx[32];
    uint32_t n_miss = lookup.lookupBurst(keys, 32, out, miss_idx);
    for (int i = 0; i < 32; ++i) {
      if (out[i] == flow::kNoMegaflow) continue;
      ++hits;
      const Decision got = fromActions(table.at(out[i]).actions);
      prefix_hits += got.output && !got.encap && !got.external && sent[i].dst.host == 0 &&
                     sent[i].dst.outside < 0 && !sent[i].dst.host_addr;
      external_hits += got.external;
      from_outside_hits += sent[i].in_port == kUplinkPort && got.output;
      host_hits += got.output && sent[i].dst.host_addr;
      from_host_hits += got.output && sent[i].in_port == kHostPort;
      spoofed_hits += !got.output && got.port_or_reason == static_cast<uint16_t>(DropReason::kSpoofedSourceIp);
      ASSERT_EQ(got, expected(now, i)) << "port " << sent[i].in_port << " src " << text(sent[i].src) << " dst "
                                       << text(sent[i].dst);
    }
    for (uint32_t j = 0; j < n_miss; ++j) {
      const int i = miss_idx[j];
      ++misses;
      FlowTranslation t;
      translateFlow(routes(at_pmd), keys[i], t);
      ASSERT_EQ(fromActions(t.actions), expected(at_pmd, i))
          << "port " << sent[i].in_port << " src " << text(sent[i].src) << " dst " << text(sent[i].dst);
      (void)queue.push(keys[i]);
    }
    checked += 32;
  };

  for (int epoch = 0; epoch < 600; ++epoch) {
    g_tsc += 1000;
    if (rng() % 4 == 0) {
      // A prefix is taken by a port, released, or moves to another port.
      Tables next = tables;
      const uint16_t owner = rng() % 3 == 0 ? kNone : static_cast<uint16_t>(rng() % kPorts);
      if (rng() % 2 == 0) next.owner4[rng() % std::size(kPrefixes4)] = owner;
      else next.owner6[rng() % std::size(kPrefixes6)] = owner;
      if (rng() % 10 == 0) next.external = !next.external;  // sluiced restarted with(out) it, as far as flows see
      build(next);
      control.revalidate(routes(next));
      burst(next, tables);
      tables = std::move(next);
      commit();
    }
    burst(tables, tables);
    if (rng() % 2 == 0) {
      control.handleUpcalls(routes(tables));
      if (epoch % 7 == 0) control.expireIdle();
      commit();
    }
  }
  EXPECT_EQ(checked, hits + misses);
  EXPECT_GT(hits, checked / 2) << "the caches answered most packets";
  EXPECT_GT(prefix_hits, hits / 20) << "packets to routed prefixes were forwarded from the caches";
  EXPECT_GT(spoofed_hits, hits / 20) << "sources outside a port's prefixes were dropped from the caches";
  EXPECT_GT(external_hits, hits / 50) << "packets left through the external gateway from the caches";
  EXPECT_GT(from_outside_hits, 0u) << "packets from outside reached pods from the caches";
  EXPECT_GT(host_hits, hits / 50) << "packets to the host addresses were forwarded from the caches";
  EXPECT_GT(from_host_hits, hits / 50) << "packets from the host port were forwarded from the caches";
  EXPECT_GT(control.counters()[0].revalidated, 0u);
}

}  // namespace flow_pipeline_differential_test
}  // namespace sluice
