// The Prometheus page: the text format's escaping and grouping, the page
// built from a stats snapshot (exact text), and the gRPC call counts.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "dataplane/api/grpc_call_metrics.h"
#include "dataplane/api/metrics_exposition.h"
#include "dataplane/api/prometheus_text.h"

namespace sluice {
namespace {

TEST(PrometheusText, GroupsSamplesByFamilyAndEscapes) {
  PrometheusText t;
  t.family("a_total", MetricType::kCounter, "back\\slash and\nnewline");
  t.family("b", MetricType::kGauge, "a gauge");
  t.family("empty", MetricType::kGauge, "never sampled: left out");
  t.sample("a_total", "", {{"x", "q\"uote"}}, uint64_t{18446744073709551615u});
  t.sample("b", "", {}, 0.5);
  t.sample("a_total", "", {{"x", "back\\slash\nnl"}}, uint64_t{2});
  t.sample("b", "", {{"k", ""}}, -1.0 / 0.0);
  EXPECT_EQ(t.str(),
            "# HELP a_total back\\\\slash and\\nnewline\n"
            "# TYPE a_total counter\n"
            "a_total{x=\"q\\\"uote\"} 18446744073709551615\n"
            "a_total{x=\"back\\\\slash\\nnl\"} 2\n"
            "# HELP b a gauge\n"
            "# TYPE b gauge\n"
            "b 0.5\n"
            "b{k=\"\"} -Inf\n");
}

TEST(PrometheusText, FormatsDoubles) {
  EXPECT_EQ(formatMetricDouble(0.0001), "0.0001");
  EXPECT_EQ(formatMetricDouble(1.0), "1");
  EXPECT_EQ(formatMetricDouble(1.0 / 0.0), "+Inf");
  EXPECT_EQ(formatMetricDouble(0.0 / 0.0), "NaN");
  EXPECT_EQ(formatMetricDouble(1764660000.25), "1764660000.25");
  EXPECT_EQ(formatMetricDouble(1e-9), "1e-09");
  EXPECT_EQ(formatMetricDouble(1e20), "1e+20");
}

TEST(PrometheusText, SampleOfUndeclaredFamilyIsRefused) {
  PrometheusText t;
  EXPECT_THROW(t.sample("nope", "", {}, uint64_t{1}), std::logic_error);
}

// The lines of one family (its HELP line up to the next family's).
std::string familyBlock(const std::string& page, const std::string& name) {
  const size_t begin = page.find("# HELP " + name + " ");
  if (begin == std::string::npos) return "";
  const size_t end = page.find("# HELP ", begin + 1);
  return page.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

MetricsSnapshot sampleSnapshot() {
  MetricsSnapshot s;
  s.stats.set_tsc_hz(2600000000);
  s.stats.set_seconds_since_clear(12.5);
  s.stats.set_tx_flush_interval_us(250);
  v1::PmdStats* pmd = s.stats.add_pmds();
  pmd->set_index(0);
  pmd->set_lcore(1);
  pmd->set_busy_cycles(1000);
  pmd->set_packets(10);
  pmd->set_megaflows(3);
  v1::PortStats* port = s.stats.add_ports();
  port->set_port_no(2);
  port->mutable_attachment()->set_container_id("c1");
  port->mutable_attachment()->set_ifname("eth0");
  port->set_rx_packets(7);
  port->set_tx_dropped(1);
  v1::PortStats* uplink = s.stats.add_ports();
  uplink->set_port_no(0);
  uplink->set_rx_packets(5);
  v1::RxQueueStats* q = s.stats.add_rx_queues();
  q->set_port_no(0);
  q->set_queue(0);
  q->set_packets(5);
  q = s.stats.add_rx_queues();
  q->set_port_no(2);
  q->set_queue(1);
  q->set_pmd(1);
  q->set_packets(6);
  v1::DropCounter* d = s.stats.add_drops();
  d->set_reason("no_route");
  d->set_packets(4);
  d = s.stats.add_drops();
  d->set_reason("ttl_exceeded");
  d->set_packets(0);
  v1::RemoteNode* n = s.stats.add_tunnels();
  n->set_name("node-b");
  n->set_tunnel(1);
  n->set_vtep("192.0.2.2");
  n->set_rx_bytes(640);
  v1::Port* p = s.ports.add_ports();
  p->set_port_no(2);
  p->set_pod_namespace("default");
  p->set_pod_name("web \"1\"");
  p->mutable_attachment()->set_ifname("eth0");
  s.health.set_ready(true);
  s.health.set_version("0.1.0");
  s.health.set_uptime_seconds(3.5);
  s.health.set_ports(2);
  s.health.set_pmds(1);
  s.process.start_time_seconds = 1764660000;
  s.process.resident_memory_bytes = 4096;
  return s;
}

TEST(MetricsExposition, ExactTextOfTheSnapshotsFamilies) {
  const std::string page = renderMetrics(sampleSnapshot(), {.pod_labels = true});
  EXPECT_EQ(familyBlock(page, "sluice_pmd_busy_cycles_total"),
            "# HELP sluice_pmd_busy_cycles_total sluice.v1.PmdStats.busy_cycles: TSC cycles of loop iterations "
            "that received packets\n"
            "# TYPE sluice_pmd_busy_cycles_total counter\n"
            "sluice_pmd_busy_cycles_total{pmd=\"0\",lcore=\"1\"} 1000\n");
  EXPECT_EQ(familyBlock(page, "sluice_pmd_megaflows"),
            "# HELP sluice_pmd_megaflows sluice.v1.PmdStats.megaflows\n"
            "# TYPE sluice_pmd_megaflows gauge\n"
            "sluice_pmd_megaflows{pmd=\"0\",lcore=\"1\"} 3\n");
  EXPECT_EQ(familyBlock(page, "sluice_port_rx_packets_total"),
            "# HELP sluice_port_rx_packets_total sluice.v1.PortStats.rx_packets\n"
            "# TYPE sluice_port_rx_packets_total counter\n"
            "sluice_port_rx_packets_total{port=\"2\",namespace=\"default\",pod=\"web \\\"1\\\"\",interface=\"eth0\"} 7\n"
            "sluice_port_rx_packets_total{port=\"0\"} 5\n");
  // Each rx queue: its packets and its PMD, by port and queue (a pod's
  // labels too).
  EXPECT_EQ(familyBlock(page, "sluice_rx_queue_packets_total"),
            "# HELP sluice_rx_queue_packets_total sluice.v1.RxQueueStats.packets\n"
            "# TYPE sluice_rx_queue_packets_total counter\n"
            "sluice_rx_queue_packets_total{port=\"0\",queue=\"0\"} 5\n"
            "sluice_rx_queue_packets_total{port=\"2\",queue=\"1\",namespace=\"default\",pod=\"web \\\"1\\\"\","
            "interface=\"eth0\"} 6\n");
  EXPECT_EQ(familyBlock(page, "sluice_rx_queue_pmd"),
            "# HELP sluice_rx_queue_pmd sluice.v1.RxQueueStats.pmd\n"
            "# TYPE sluice_rx_queue_pmd gauge\n"
            "sluice_rx_queue_pmd{port=\"0\",queue=\"0\"} 0\n"
            "sluice_rx_queue_pmd{port=\"2\",queue=\"1\",namespace=\"default\",pod=\"web \\\"1\\\"\","
            "interface=\"eth0\"} 1\n");
  EXPECT_EQ(familyBlock(page, "sluice_pmd_numa_socket"),
            "# HELP sluice_pmd_numa_socket sluice.v1.PmdStats.numa_socket\n"
            "# TYPE sluice_pmd_numa_socket gauge\n"
            "sluice_pmd_numa_socket{pmd=\"0\",lcore=\"1\"} 0\n");
  EXPECT_EQ(familyBlock(page, "sluice_drops_total"),
            "# HELP sluice_drops_total sluice.v1.DropCounter.packets\n"
            "# TYPE sluice_drops_total counter\n"
            "sluice_drops_total{reason=\"no_route\"} 4\n"
            "sluice_drops_total{reason=\"ttl_exceeded\"} 0\n");
  EXPECT_EQ(familyBlock(page, "sluice_tunnel_rx_bytes_total"),
            "# HELP sluice_tunnel_rx_bytes_total sluice.v1.RemoteNode.rx_bytes\n"
            "# TYPE sluice_tunnel_rx_bytes_total counter\n"
            "sluice_tunnel_rx_bytes_total{node=\"node-b\",tunnel=\"1\"} 640\n");
  EXPECT_EQ(familyBlock(page, "sluice_tsc_hz"),
            "# HELP sluice_tsc_hz sluice.v1.GetStatsResponse.tsc_hz\n# TYPE sluice_tsc_hz gauge\nsluice_tsc_hz 2600000000\n");
  // Microseconds in the API, seconds on the page.
  EXPECT_EQ(familyBlock(page, "sluice_tx_flush_interval_seconds"),
            "# HELP sluice_tx_flush_interval_seconds sluice.v1.GetStatsResponse.tx_flush_interval_us\n"
            "# TYPE sluice_tx_flush_interval_seconds gauge\nsluice_tx_flush_interval_seconds 0.00025\n");
  EXPECT_EQ(familyBlock(page, "sluice_ready"),
            "# HELP sluice_ready sluice.v1.HealthResponse.ready\n# TYPE sluice_ready gauge\nsluice_ready 1\n");
  EXPECT_EQ(familyBlock(page, "sluice_build_info"),
            "# HELP sluice_build_info Always 1; the running sluiced's version as a label\n"
            "# TYPE sluice_build_info gauge\nsluice_build_info{version=\"0.1.0\"} 1\n");
  EXPECT_EQ(familyBlock(page, "sluice_process_start_time_seconds"),
            "# HELP sluice_process_start_time_seconds Unix time sluiced started\n"
            "# TYPE sluice_process_start_time_seconds gauge\nsluice_process_start_time_seconds 1764660000\n");
  // Absent modules (offload, overlay) and no calls yet: none of their series.
  EXPECT_EQ(page.find("sluice_offload_"), std::string::npos);
  EXPECT_EQ(page.find("sluice_overlay_"), std::string::npos);
  EXPECT_EQ(page.find("sluice_grpc_server_handled_total"), std::string::npos);
}

// Every PMD counter is exported with no list of them here: a field added
// to PmdStats appears as a series with its value.
TEST(MetricsExposition, EveryPmdFieldIsExported) {
  MetricsSnapshot s;
  v1::PmdStats* pmd = s.stats.add_pmds();
  const auto* d = v1::PmdStats::descriptor();
  const auto* r = pmd->GetReflection();
  uint64_t value = 100;
  for (int i = 0; i < d->field_count(); ++i)
    if (d->field(i)->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_UINT64)
      r->SetUInt64(pmd, d->field(i), value++);
  pmd->set_index(3);
  pmd->set_lcore(5);
  const std::string page = renderMetrics(s);
  value = 100;
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_UINT64) continue;
    const std::string name = "sluice_pmd_" + f->name() + (f->name() == "megaflows" ? "" : "_total");
    EXPECT_NE(page.find("\n" + name + "{pmd=\"3\",lcore=\"5\"} " + std::to_string(value++) + "\n"), std::string::npos)
        << name;
  }
}

// Conventions every family keeps: a valid name, HELP then TYPE, counters
// named _total, and no family twice.
TEST(MetricsExposition, FamiliesFollowTheNamingConventions) {
  MetricsSnapshot s = sampleSnapshot();
  s.stats.mutable_offload()->set_provider("software");
  s.stats.mutable_offload()->add_refused()->set_reason("cap");
  s.health.mutable_overlay()->set_vni(42);
  s.calls.handled[{"/sluice.v1.Dataplane/GetStats", "OK"}] = 1;
  const std::string page = renderMetrics(s);
  std::istringstream lines(page);
  std::set<std::string> seen;
  const std::regex help(R"(# HELP (sluice_[a-z0-9_]+) .+)"), type(R"(# TYPE (sluice_[a-z0-9_]+) (counter|gauge|histogram))");
  std::string line, pending;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (line.rfind("# HELP", 0) == 0) {
      ASSERT_TRUE(std::regex_match(line, m, help)) << line;
      EXPECT_TRUE(seen.insert(m[1]).second) << "twice: " << m[1];
      pending = m[1];
    } else if (line.rfind("# TYPE", 0) == 0) {
      ASSERT_TRUE(std::regex_match(line, m, type)) << line;
      EXPECT_EQ(m[1], pending);
      const std::string name = m[1];
      const bool total = name.size() > 6 && name.substr(name.size() - 6) == "_total";
      EXPECT_EQ(m[2] == "counter", total) << name;
    } else {
      EXPECT_EQ(line.rfind(pending, 0), 0u) << line;
    }
  }
  EXPECT_TRUE(seen.count("sluice_offload_refused_total"));
  EXPECT_TRUE(seen.count("sluice_overlay_vni"));
}

TEST(GrpcCallMetrics, CountsByMethodAndCodeWithCumulativeBuckets) {
  GrpcCallMetrics m;
  m.record("/sluice.v1.Dataplane/AddPort", 0, 0.0003);
  m.record("/sluice.v1.Dataplane/AddPort", 3, 0.02);
  m.record("/sluice.v1.Dataplane/AddPort", 0, 100.0);
  MetricsSnapshot s;
  s.calls = m.snapshot();
  const std::string page = renderMetrics(s);
  EXPECT_EQ(familyBlock(page, "sluice_grpc_server_handled_total"),
            "# HELP sluice_grpc_server_handled_total gRPC calls sluiced completed, by method and status code\n"
            "# TYPE sluice_grpc_server_handled_total counter\n"
            "sluice_grpc_server_handled_total{grpc_method=\"/sluice.v1.Dataplane/AddPort\",grpc_code=\"INVALID_ARGUMENT\"} 1\n"
            "sluice_grpc_server_handled_total{grpc_method=\"/sluice.v1.Dataplane/AddPort\",grpc_code=\"OK\"} 2\n");
  const std::string h = familyBlock(page, "sluice_grpc_server_handling_seconds");
  const std::string b = "sluice_grpc_server_handling_seconds_bucket{grpc_method=\"/sluice.v1.Dataplane/AddPort\",le=";
  EXPECT_NE(h.find(b + "\"0.0001\"} 0\n"), std::string::npos) << h;
  EXPECT_NE(h.find(b + "\"0.0005\"} 1\n"), std::string::npos) << h;
  EXPECT_NE(h.find(b + "\"0.025\"} 2\n"), std::string::npos) << h;
  EXPECT_NE(h.find(b + "\"5\"} 2\n"), std::string::npos) << h;
  EXPECT_NE(h.find(b + "\"+Inf\"} 3\n"), std::string::npos) << h;
  EXPECT_NE(h.find("sluice_grpc_server_handling_seconds_count{grpc_method=\"/sluice.v1.Dataplane/AddPort\"} 3\n"),
            std::string::npos);
  EXPECT_NE(h.find("# TYPE sluice_grpc_server_handling_seconds histogram\n"), std::string::npos);
}

TEST(GrpcCallMetrics, MethodNamesBeyondTheBoundAreOther) {
  GrpcCallMetrics m;
  for (size_t i = 0; i < GrpcCallMetrics::kMaxMethods + 5; ++i) m.record("/x/" + std::to_string(i), 12, 0.001);
  GrpcCallSnapshot s = m.snapshot();
  EXPECT_EQ(s.latency.size(), GrpcCallMetrics::kMaxMethods + 1);
  EXPECT_EQ(s.latency.at("other").count, 5u);
  EXPECT_EQ((s.handled.at({"other", "UNIMPLEMENTED"})), 5u);
}

// Without metrics-pod-labels a port's series name its number and interface
// only: nothing on the page says which pods run on the node.
TEST(MetricsExposition, PodLabelsOnlyWhenAsked) {
  MetricsSnapshot s = sampleSnapshot();
  s.process.metrics_bind_failures = 3;
  const std::string page = renderMetrics(s);
  EXPECT_EQ(familyBlock(page, "sluice_port_rx_packets_total"),
            "# HELP sluice_port_rx_packets_total sluice.v1.PortStats.rx_packets\n"
            "# TYPE sluice_port_rx_packets_total counter\n"
            "sluice_port_rx_packets_total{port=\"2\",interface=\"eth0\"} 7\n"
            "sluice_port_rx_packets_total{port=\"0\"} 5\n");
  EXPECT_EQ(page.find("namespace="), std::string::npos);
  EXPECT_EQ(page.find("pod="), std::string::npos);
  EXPECT_EQ(page.find("web "), std::string::npos);
  EXPECT_EQ(familyBlock(page, "sluice_metrics_bind_failures_total"),
            "# HELP sluice_metrics_bind_failures_total Attempts of the metrics endpoint to listen that failed (it "
            "retries while sluiced runs)\n"
            "# TYPE sluice_metrics_bind_failures_total counter\n"
            "sluice_metrics_bind_failures_total 3\n");
}

}  // namespace
}  // namespace sluice
