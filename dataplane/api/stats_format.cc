#include "dataplane/api/stats_format.h"

#include "dataplane/api/nodes_format.h"

#include <absl/strings/str_join.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace sluice {
namespace {

std::string fmt(const char* format, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

double ratio(uint64_t num, uint64_t den) { return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den); }

std::string attachmentText(const v1::Attachment& a) {
  std::string id = a.container_id().substr(0, 12);
  return id + "/" + a.ifname();
}

}  // namespace

std::string formatStats(const v1::GetStatsResponse& s) {
  std::string out = fmt("Statistics over the last %.1f s (tx-flush-interval %u us)\n", s.seconds_since_clear(),
                        s.tx_flush_interval_us());
  for (const v1::PmdStats& p : s.pmds()) {
    uint64_t total = p.busy_cycles() + p.idle_cycles() + p.sleep_cycles();
    double seconds = s.tsc_hz() ? static_cast<double>(total) / static_cast<double>(s.tsc_hz()) : 0;
    out += fmt("\nPMD %u (lcore %u, NUMA socket %u)\n", p.index(), p.lcore(), p.numa_socket());
    out += fmt("  packets received:       %14llu  (%.3f Mpps)\n", static_cast<unsigned long long>(p.packets()),
               seconds > 0 ? static_cast<double>(p.packets()) / seconds / 1e6 : 0.0);
    out += fmt("  cycles per packet:      %14.1f  (busy cycles / packets)\n", ratio(p.busy_cycles(), p.packets()));
    out += fmt("  busy cycles:            %14llu  (%.1f %% of %llu)\n", static_cast<unsigned long long>(p.busy_cycles()),
               100.0 * ratio(p.busy_cycles(), total), static_cast<unsigned long long>(total));
    if (p.sleeps() != 0)
      out += fmt("  asleep:                 %14llu  (%.1f %% of cycles, %llu sleeps)\n",
                 static_cast<unsigned long long>(p.sleep_cycles()), 100.0 * ratio(p.sleep_cycles(), total),
                 static_cast<unsigned long long>(p.sleeps()));
    // As VPP's runtime view: the busy cycles per packet split by stage.
    out += fmt("  cycles/packet by stage: rx %.1f, parse %.1f, lookup %.1f, actions %.1f, tx %.1f\n",
               ratio(p.rx_cycles(), p.packets()), ratio(p.parse_cycles(), p.packets()),
               ratio(p.lookup_cycles(), p.packets()), ratio(p.action_cycles(), p.packets()),
               ratio(p.tx_cycles(), p.packets()));
    out += fmt("  rx bursts:              %14llu  (%.1f packets/burst)\n", static_cast<unsigned long long>(p.rx_bursts()),
               ratio(p.packets(), p.rx_bursts()));
    out += fmt("  output batches:         %14llu  (%.1f packets/batch)\n",
               static_cast<unsigned long long>(p.tx_batches()), ratio(p.tx_batched_packets(), p.tx_batches()));
    // A queue shared with other PMDs (or control) is sent on under its lock.
    out += fmt("    under a shared queue's lock: %llu (%.1f %%)\n",
               static_cast<unsigned long long>(p.tx_locked_batches()),
               100.0 * ratio(p.tx_locked_batches(), p.tx_batches()));
    out += fmt("  packets sent:           %14llu\n", static_cast<unsigned long long>(p.tx_packets()));
    // Part of the packets sent; the dropped packets they answer are counted under their reasons.
    out += fmt("  ICMP errors sent:       %14llu  (%llu more held back by icmp-error-rate)\n",
               static_cast<unsigned long long>(p.icmp_errors_sent()),
               static_cast<unsigned long long>(p.icmp_errors_rate_limited()));
    out += fmt("  snapshot reloads:       %14llu\n", static_cast<unsigned long long>(p.reloads()));
    // Only once some queue went idle (polled in turn): on a node of few
    // busy ports this stays out of the way.
    if (p.rxq_idled() != 0 || p.rxq_idle_polls() != 0)
      out += fmt("  idle rx queue polls:    %14llu  (%llu left to later iterations; %llu queues went idle, %llu woke)\n",
                 static_cast<unsigned long long>(p.rxq_idle_polls()),
                 static_cast<unsigned long long>(p.rxq_idle_polls_skipped()),
                 static_cast<unsigned long long>(p.rxq_idled()), static_cast<unsigned long long>(p.rxq_woken()));
    // Like OVS's pmd-perf-show: where packets were resolved, one tier each.
    auto tier = [&](const char* name, uint64_t n) {
      out += fmt("  %-24s%14llu  (%5.1f %%)\n", name, static_cast<unsigned long long>(n), 100.0 * ratio(n, p.packets()));
    };
    if (s.has_offload()) {
      tier("- mark hits (offload):", p.mark_hits());
      out += fmt("    stale/unknown marks %llu (then looked up below)\n", static_cast<unsigned long long>(p.mark_misses()));
    }
    tier("- same-flow run hits:", p.run_hits());
    tier("- EMC hits:", p.emc_hits());
    tier("- SMC hits:", p.smc_hits());
    tier("- megaflow hits:", p.megaflow_hits());
    out += fmt("    avg. subtable lookups per megaflow hit: %.2f\n", ratio(p.subtable_lookups(), p.megaflow_hits()));
    tier("- misses:", p.misses());
    out += fmt("    upcalls %llu, coalesced %llu, lost %llu\n", static_cast<unsigned long long>(p.upcalls()),
               static_cast<unsigned long long>(p.upcalls_coalesced()), static_cast<unsigned long long>(p.lost_upcalls()));
    tier("- not looked up:", p.not_looked_up());
    out += fmt("  megaflows:              %14llu\n", static_cast<unsigned long long>(p.megaflows()));
  }
  out += "\nPorts\n";
  out += fmt("  %-4s  %-22s %14s %14s %12s %12s %16s %16s\n", "PORT", "ATTACHMENT", "RX", "TX", "TX-DROPPED",
             "RX-DROPPED", "RX-BYTES", "TX-BYTES");
  for (const v1::PortStats& p : s.ports())
    out += fmt("  %-4u  %-22s %14llu %14llu %12llu %12llu %16llu %16llu\n", p.port_no(),
               attachmentText(p.attachment()).c_str(), static_cast<unsigned long long>(p.rx_packets()),
               static_cast<unsigned long long>(p.tx_packets()), static_cast<unsigned long long>(p.tx_dropped()),
               static_cast<unsigned long long>(p.rx_dropped()), static_cast<unsigned long long>(p.rx_bytes()),
               static_cast<unsigned long long>(p.tx_bytes()));
  if (s.ports().empty()) out += "  (no ports)\n";
  out += "\nDrops by reason\n";
  for (const v1::DropCounter& d : s.drops())
    out += fmt("  %-24s %14llu\n", d.reason().c_str(), static_cast<unsigned long long>(d.packets()));
  if (s.has_offload()) {
    const v1::OffloadStats& o = s.offload();
    out += fmt("\nPartial offload (provider %s%s)\n", o.provider().c_str(),
               o.provider() == "software" ? ": SOFTWARE ENGINE, not hardware" : "");
    if (o.port_attached())
      out += fmt("  port %u: %s (%s)\n", o.port_no(), o.capable() ? "can mark" : "CANNOT mark",
                 o.capability_reason().c_str());
    else
      out += "  no offload port attached\n";
    out += fmt("  offloaded flows:        %14llu  (cap %u)\n", static_cast<unsigned long long>(o.offloaded()), o.max_flows());
    out += fmt("  rules installed %llu, removed %llu, create retries %llu, offered again after the cap %llu\n",
               static_cast<unsigned long long>(o.installed()), static_cast<unsigned long long>(o.removed()),
               static_cast<unsigned long long>(o.retries()), static_cast<unsigned long long>(o.cap_retries()));
    if (o.engine_packets() != 0)
      out += fmt("  software engine:        %14.1f  cycles/packet in the rx callback (part of the busy cycles)\n",
                 ratio(o.engine_cycles(), o.engine_packets()));
    for (const v1::DropCounter& d : o.refused())
      out += fmt("  refused %-22s %10llu\n", d.reason().c_str(), static_cast<unsigned long long>(d.packets()));
    for (const v1::DropCounter& d : o.failures())
      out += fmt("  failed %-23s %10llu\n", d.reason().c_str(), static_cast<unsigned long long>(d.packets()));
  }
  if (s.tunnels_size() > 0) out += "\nVXLAN tunnels\n" + formatTunnelCounters(s.tunnels());
  return out;
}

std::string formatPort(const v1::Port& p) {
  // An SR-IOV VF: no port number, PMD, link or socket; its PCI address, PF,
  // VF index, host netdev and VLAN instead.
  if (p.type() == v1::PORT_TYPE_SRIOV_VF)
    return fmt("  %-4s  %-22s %-15s %-17s %-6s %-4s %-4s %-5s %s (%s vf %u, netdev %s, vlan %u)\n", "vf",
               attachmentText(p.attachment()).c_str(), p.ip().c_str(), p.mac().c_str(),
               p.sriov_mode() == v1::SRIOV_MODE_DPDK ? "dpdk" : "kernel", "-", "-", "-", p.pci_id().c_str(),
               p.pf().c_str(), p.vf_index(), p.vf_netdev().empty() ? "-" : p.vf_netdev().c_str(), p.vlan());
  // An IPv6 address is too wide for the IP column: it follows the socket.
  // Unchecked sources (a router pod) are the exception, and said so.
  // Routed prefixes, if any, close the line.
  const std::string prefixes =
      p.routed_prefixes().empty() ? "" : " routes " + absl::StrJoin(p.routed_prefixes(), ",");
  // A multi-queue port names its queue count and each rx queue's PMD (the
  // PMD column is queue 0's).
  const std::string queues = p.queues() <= 1 ? ""
                                             : fmt(" queues %u pmds %s", p.queues(),
                                                   absl::StrJoin(p.queue_pmds(), ",").c_str());
  return fmt("  %-4u  %-22s %-15s %-17s %-6s %-4u %-4s %-5u %s%s%s%s%s%s\n", p.port_no(),
             attachmentText(p.attachment()).c_str(), p.ip().empty() ? "-" : p.ip().c_str(), p.mac().c_str(),
             p.vhost_mode() == v1::VHOST_MODE_CLIENT ? "client" : "server", p.pmd(), p.link_up() ? "up" : "down",
             p.mtu(), p.socket_path().c_str(), p.ipv6().empty() ? "" : " ipv6 ", p.ipv6().c_str(),
             p.source_validation() ? "" : " sources-unchecked", queues.c_str(), prefixes.c_str());
}

std::string formatPorts(const v1::ListPortsResponse& ports) {
  std::string out = fmt("  %-4s  %-22s %-15s %-17s %-6s %-4s %-4s %-5s %s\n", "PORT", "ATTACHMENT", "IP", "MAC",
                        "MODE", "PMD", "LINK", "MTU", "SOCKET");
  for (const v1::Port& p : ports.ports()) out += formatPort(p);
  if (ports.ports().empty()) out += "  (no ports)\n";
  return out;
}

std::string formatPmds(const v1::GetStatsResponse& stats, const v1::ListPortsResponse& ports) {
  std::string out;
  for (const v1::PmdStats& p : stats.pmds()) {
    const uint64_t total = p.busy_cycles() + p.idle_cycles() + p.sleep_cycles();
    out += fmt("PMD %u (lcore %u, NUMA socket %u): busy %.1f %% of its cycles, %llu packets received, %.1f "
               "cycles/packet\n",
               p.index(), p.lcore(), p.numa_socket(), 100.0 * ratio(p.busy_cycles(), total),
               static_cast<unsigned long long>(p.packets()), ratio(p.busy_cycles(), p.packets()));
    out += fmt("  %-4s  %-22s %6s %14s %7s  %s\n", "PORT", "ATTACHMENT", "SOCKET", "RX PACKETS", "SHARE", "PLACED BY");
    bool any = false;
    for (const v1::Port& port : ports.ports()) {
      if (port.type() == v1::PORT_TYPE_SRIOV_VF) continue;
      // A multi-queue port is listed under every PMD polling one of its
      // queues, with the queues it polls and what each brought.
      std::vector<unsigned> here;
      for (int q = 0; q < port.queue_pmds_size(); ++q)
        if (port.queue_pmds(q) == p.index()) here.push_back(static_cast<unsigned>(q));
      const bool multi = port.queue_pmds_size() > 1;
      if (multi ? here.empty() : port.pmd() != p.index()) continue;
      // The packets of the queues this PMD polls (a sluiced that reports no
      // queues: the whole port's, shared with no other PMD when it has one queue).
      uint64_t rx = 0;
      bool by_queue = false;
      std::vector<std::string> queue_packets;
      for (const v1::RxQueueStats& q : stats.rx_queues()) {
        if (q.port_no() != port.port_no()) continue;
        by_queue = true;
        if (std::find(here.begin(), here.end(), q.queue()) == here.end() && multi) continue;
        if (!multi && q.queue() != 0) continue;
        rx += q.packets();
        queue_packets.push_back(fmt("%u (%llu)", q.queue(), static_cast<unsigned long long>(q.packets())));
      }
      if (!by_queue)
        for (const v1::PortStats& ps : stats.ports())
          if (ps.port_no() == port.port_no()) rx = ps.rx_packets();
      const std::string share = multi && !by_queue ? "      -" : fmt("%6.1f%%", 100.0 * ratio(rx, p.packets()));
      const std::string queues =
          !multi     ? ""
          : by_queue ? fmt(", queues %s of %d", absl::StrJoin(queue_packets, ", ").c_str(), port.queue_pmds_size())
                     : fmt(", queues %s of %d", absl::StrJoin(here, ",").c_str(), port.queue_pmds_size());
      const std::string socket = port.has_numa_socket() ? std::to_string(port.numa_socket()) : "-";
      out += fmt("  %-4u  %-22s %6s %14llu %s  %s%s\n", port.port_no(), attachmentText(port.attachment()).c_str(),
                 socket.c_str(), static_cast<unsigned long long>(rx), share.c_str(),
                 port.pmd_pinned() ? "pin (AddPort pmd)" : "sluiced", queues.c_str());
      any = true;
    }
    if (!any) out += "  (no pod ports)\n";
  }
  if (stats.pmds().empty()) out += "(no PMDs)\n";
  return out;
}

std::string formatFlows(const v1::ListFlowsResponse& flows) {
  std::string out = fmt("  %-3s %-6s %12s %14s %8s %8s  %s -> %s\n", "PMD", "INDEX", "PACKETS", "BYTES", "IDLE(s)",
                        "AGE(s)", "MATCH", "ACTIONS");
  for (const v1::Flow& f : flows.flows())
    out += fmt("  %-3u %-6u %12llu %14llu %8.1f %8.1f  ", f.pmd(), f.index(), static_cast<unsigned long long>(f.packets()),
               static_cast<unsigned long long>(f.bytes()), f.idle_seconds(), f.age_seconds()) +
           f.match() + " -> " + f.actions() + "\n" + "      mask: " + f.mask() + "\n" +
           (f.offload().empty() ? "" : "      offloaded: " + f.offload() + "\n");
  if (flows.flows().empty()) out += "  (no megaflows)\n";
  return out;
}

std::string formatHealth(const v1::HealthResponse& h) {
  return fmt("%s: sluiced %s, up %.0f s, %u/%u ports, %u PMD(s), pod CIDR %s, gateway %s (%s)\n",
             h.ready() ? "ready" : "NOT READY", h.version().c_str(), h.uptime_seconds(), h.ports(), h.max_ports(),
             h.pmds(), h.pod_cidr().c_str(), h.gateway().c_str(), h.gateway_mac().c_str()) +
         (h.pod_cidr_v6().empty()
              ? std::string()
              : fmt("  IPv6: pod CIDR %s, gateway %s\n", h.pod_cidr_v6().c_str(), h.gateway_v6().c_str())) +
         fmt("  restored at start: %u ports; garbage-collected attachments: %llu\n", h.restored_ports(),
             static_cast<unsigned long long>(h.garbage_collected_attachments())) +
         fmt("  IPv4 fragmented to an MTU: %llu datagrams, %llu fragments\n",
             static_cast<unsigned long long>(h.ipv4_fragmented()), static_cast<unsigned long long>(h.ipv4_fragments()));
}

}  // namespace sluice
