#include "dataplane/api/metrics_exposition.h"

#include <map>
#include <string_view>

#include "dataplane/api/prometheus_text.h"
#include "sluice/v1/metrics.pb.h"

namespace sluice {
namespace {

namespace pb = google::protobuf;

// How the elements of a repeated message field are told apart: the metric
// name stem for their figures and which of their fields are labels (label
// fields are not exported as figures). A repeated field of a type not
// listed is not exported.
struct LabelField {
  std::string_view field;
  std::string_view label;
};
struct Collection {
  std::string_view type;  // the element's full message name
  std::string_view stem;  // empty: the parent's prefix and the field's name
  std::vector<LabelField> labels;
  // A (reason, count) pair: the count is the metric itself, named by the
  // stem alone.
  bool value_only = false;
};

const std::vector<Collection>& collections() {
  static const std::vector<Collection> kCollections = {
      {"sluice.v1.PmdStats", "pmd", {{"index", "pmd"}, {"lcore", "lcore"}}},
      {"sluice.v1.PortStats", "port", {{"port_no", "port"}}},
      // The PMD polling a queue is a figure (a gauge), not a label: a queue
      // that moves keeps its series.
      {"sluice.v1.RxQueueStats", "rx_queue", {{"port_no", "port"}, {"queue", "queue"}}},
      {"sluice.v1.RemoteNode", "tunnel", {{"name", "node"}, {"tunnel", "tunnel"}}},
      {"sluice.v1.DropCounter", "", {{"reason", "reason"}}, true},
  };
  return kCollections;
}

const Collection* collectionOf(const pb::Descriptor* type) {
  for (const Collection& c : collections())
    if (c.type == type->full_name()) return &c;
  return nullptr;
}

// What each PMD counter counts, from the list that declares them.
const std::map<std::string, std::string>& pmdCounterHelp() {
  static const std::map<std::string, std::string> kHelp = {
#define SLUICE_PMD_COUNTER(field, proto_field, help) {#proto_field, help},
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  };
  return kHelp;
}

std::string helpOf(const pb::FieldDescriptor* f) {
  std::string help = f->containing_type()->full_name() + "." + f->name();
  if (f->containing_type() == v1::PmdStats::descriptor()) {
    auto it = pmdCounterHelp().find(f->name());
    if (it != pmdCounterHelp().end()) help += ": " + it->second;
  }
  return help;
}

bool isNumber(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
    case pb::FieldDescriptor::CPPTYPE_BOOL: return true;
    default: return false;
  }
}

bool isCounter(const pb::FieldDescriptor* f) {
  return f->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64 && !f->options().GetExtension(v1::gauge);
}

// Prometheus wants base units: a field in microseconds or milliseconds
// (named _us, _ms) is exported in seconds.
struct UnitScale {
  std::string_view suffix;
  double to_seconds;
};
constexpr UnitScale kScaledUnits[] = {{"_us", 1e-6}, {"_ms", 1e-3}};

double numberOf(const pb::FieldDescriptor* f, const pb::Message& m) {
  const pb::Reflection* r = m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_UINT64: return double(r->GetUInt64(m, f));
    case pb::FieldDescriptor::CPPTYPE_UINT32: return double(r->GetUInt32(m, f));
    case pb::FieldDescriptor::CPPTYPE_INT32: return double(r->GetInt32(m, f));
    case pb::FieldDescriptor::CPPTYPE_INT64: return double(r->GetInt64(m, f));
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: return r->GetDouble(m, f);
    case pb::FieldDescriptor::CPPTYPE_FLOAT: return double(r->GetFloat(m, f));
    case pb::FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(m, f) ? 1 : 0;
    default: return 0;
  }
}

void addNumber(PrometheusText& out, const std::string& field_name, const pb::FieldDescriptor* f,
               const pb::Message& m, const MetricLabels& labels) {
  const pb::Reflection* r = m.GetReflection();
  std::string name = field_name;
  for (const UnitScale& u : kScaledUnits) {
    if (name.size() > u.suffix.size() && name.compare(name.size() - u.suffix.size(), u.suffix.size(), u.suffix) == 0) {
      name.replace(name.size() - u.suffix.size(), u.suffix.size(), "_seconds");
      const std::string family = isCounter(f) ? name + "_total" : name;
      out.family(family, isCounter(f) ? MetricType::kCounter : MetricType::kGauge, helpOf(f));
      out.sample(family, "", labels, numberOf(f, m) * u.to_seconds);
      return;
    }
  }
  const std::string family = isCounter(f) ? name + "_total" : name;
  out.family(family, isCounter(f) ? MetricType::kCounter : MetricType::kGauge, helpOf(f));
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_UINT64: out.sample(family, "", labels, r->GetUInt64(m, f)); break;
    case pb::FieldDescriptor::CPPTYPE_UINT32: out.sample(family, "", labels, uint64_t{r->GetUInt32(m, f)}); break;
    case pb::FieldDescriptor::CPPTYPE_INT32: out.sample(family, "", labels, double(r->GetInt32(m, f))); break;
    case pb::FieldDescriptor::CPPTYPE_INT64: out.sample(family, "", labels, double(r->GetInt64(m, f))); break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: out.sample(family, "", labels, r->GetDouble(m, f)); break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT: out.sample(family, "", labels, double(r->GetFloat(m, f))); break;
    case pb::FieldDescriptor::CPPTYPE_BOOL: out.sample(family, "", labels, uint64_t{r->GetBool(m, f)}); break;
    default: break;
  }
}

std::string fieldAsLabel(const pb::Message& m, std::string_view field) {
  const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(std::string(field));
  if (f == nullptr || f->is_repeated()) return "";
  const pb::Reflection* r = m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING: return r->GetString(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT32: return std::to_string(r->GetUInt32(m, f));
    case pb::FieldDescriptor::CPPTYPE_UINT64: return std::to_string(r->GetUInt64(m, f));
    case pb::FieldDescriptor::CPPTYPE_INT32: return std::to_string(r->GetInt32(m, f));
    default: return "";
  }
}

// What a port's series add beside its number, from the port listing: its
// interface, and its pod when `with_pod` (nothing for a port of no pod,
// e.g. the uplink or a vdev).
using PodLabels = std::map<uint32_t, MetricLabels>;

PodLabels podLabels(const v1::ListPortsResponse& ports, bool with_pod) {
  PodLabels out;
  for (const v1::Port& p : ports.ports()) {
    if (with_pod)
      out[p.port_no()] = {{"namespace", p.pod_namespace()}, {"pod", p.pod_name()}, {"interface", p.attachment().ifname()}};
    else
      out[p.port_no()] = {{"interface", p.attachment().ifname()}};
  }
  return out;
}

void walk(PrometheusText& out, const std::string& prefix, const pb::Message& m, const MetricLabels& labels,
          const PodLabels& pods);

void walkRepeated(PrometheusText& out, const std::string& prefix, const pb::Message& m,
                  const pb::FieldDescriptor* f, const MetricLabels& labels, const PodLabels& pods) {
  const Collection* c = collectionOf(f->message_type());
  if (c == nullptr) return;
  const std::string stem = c->stem.empty() ? prefix + "_" + f->name() : prefix + "_" + std::string(c->stem);
  const pb::Reflection* r = m.GetReflection();
  for (int i = 0; i < r->FieldSize(m, f); ++i) {
    const pb::Message& e = r->GetRepeatedMessage(m, f, i);
    MetricLabels element_labels = labels;
    for (const LabelField& l : c->labels) element_labels.emplace_back(l.label, fieldAsLabel(e, l.field));
    if (f->message_type() == v1::PortStats::descriptor() || f->message_type() == v1::RxQueueStats::descriptor()) {
      const pb::FieldDescriptor* port_no = f->message_type()->FindFieldByName("port_no");
      auto pod = pods.find(e.GetReflection()->GetUInt32(e, port_no));
      if (pod != pods.end()) element_labels.insert(element_labels.end(), pod->second.begin(), pod->second.end());
    }
    const pb::Descriptor* d = e.GetDescriptor();
    for (int j = 0; j < d->field_count(); ++j) {
      const pb::FieldDescriptor* ef = d->field(j);
      bool is_label = false;
      for (const LabelField& l : c->labels) is_label |= l.field == ef->name();
      if (is_label || ef->is_repeated() || !isNumber(ef)) continue;
      addNumber(out, c->value_only ? stem : stem + "_" + ef->name(), ef, e, element_labels);
    }
  }
}

void walk(PrometheusText& out, const std::string& prefix, const pb::Message& m, const MetricLabels& labels,
          const PodLabels& pods) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) walkRepeated(out, prefix, m, f, labels, pods);
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      // A module's figures (offload, overlay) when the module runs.
      if (r->HasField(m, f)) walk(out, prefix + "_" + f->name(), r->GetMessage(m, f), labels, pods);
    } else if (isNumber(f)) {
      addNumber(out, prefix + "_" + f->name(), f, m, labels);
    }
  }
}

void renderCalls(PrometheusText& out, const GrpcCallSnapshot& calls) {
  out.family("sluice_grpc_server_handled_total", MetricType::kCounter,
             "gRPC calls sluiced completed, by method and status code");
  for (const auto& [key, count] : calls.handled)
    out.sample("sluice_grpc_server_handled_total", "", {{"grpc_method", key.first}, {"grpc_code", key.second}}, count);
  out.family("sluice_grpc_server_handling_seconds", MetricType::kHistogram,
             "Time from a gRPC call's arrival to its status being sent, by method");
  for (const auto& [method, l] : calls.latency) {
    for (size_t b = 0; b < kGrpcLatencyBuckets.size(); ++b)
      out.sample("sluice_grpc_server_handling_seconds", "_bucket",
                 {{"grpc_method", method}, {"le", formatMetricDouble(kGrpcLatencyBuckets[b])}}, l.buckets[b]);
    out.sample("sluice_grpc_server_handling_seconds", "_bucket", {{"grpc_method", method}, {"le", "+Inf"}}, l.count);
    out.sample("sluice_grpc_server_handling_seconds", "_sum", {{"grpc_method", method}}, l.sum_seconds);
    out.sample("sluice_grpc_server_handling_seconds", "_count", {{"grpc_method", method}}, l.count);
  }
}

}  // namespace

std::string renderMetrics(const MetricsSnapshot& s, const MetricsPageOptions& options) {
  PrometheusText out;
  out.family("sluice_build_info", MetricType::kGauge, "Always 1; the running sluiced's version as a label");
  out.sample("sluice_build_info", "", {{"version", s.health.version()}}, uint64_t{1});
  out.family("sluice_process_start_time_seconds", MetricType::kGauge, "Unix time sluiced started");
  out.sample("sluice_process_start_time_seconds", "", {}, s.process.start_time_seconds);
  out.family("sluice_process_resident_memory_bytes", MetricType::kGauge, "Resident set size of sluiced");
  out.sample("sluice_process_resident_memory_bytes", "", {}, s.process.resident_memory_bytes);
  out.family("sluice_metrics_bind_failures_total", MetricType::kCounter,
             "Attempts of the metrics endpoint to listen that failed (it retries while sluiced runs)");
  out.sample("sluice_metrics_bind_failures_total", "", {}, s.process.metrics_bind_failures);
  const PodLabels pods = podLabels(s.ports, options.pod_labels);
  walk(out, "sluice", s.health, {}, pods);
  walk(out, "sluice", s.stats, {}, pods);
  renderCalls(out, s.calls);
  return out.str();
}

}  // namespace sluice
