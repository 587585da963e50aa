// Prints the metrics page sluiced serves for a snapshot in which every
// figure of every stats and health message is set (every module on, one
// element in every repeated message, a gRPC call recorded): the page holds
// every series name the exporter can produce, for the dashboard's check.
#include <cstdio>

#include "dataplane/api/metrics_exposition.h"

namespace {

namespace pb = google::protobuf;

// Sets every scalar to 1 and gives every message field (and every repeated
// message) one element filled the same way.
void fill(pb::Message& m) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) fill(*r->AddMessage(&m, f));
      continue;
    }
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_MESSAGE: fill(*r->MutableMessage(&m, f)); break;
      case pb::FieldDescriptor::CPPTYPE_UINT64: r->SetUInt64(&m, f, 1); break;
      case pb::FieldDescriptor::CPPTYPE_UINT32: r->SetUInt32(&m, f, 1); break;
      case pb::FieldDescriptor::CPPTYPE_INT64: r->SetInt64(&m, f, 1); break;
      case pb::FieldDescriptor::CPPTYPE_INT32: r->SetInt32(&m, f, 1); break;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE: r->SetDouble(&m, f, 1); break;
      case pb::FieldDescriptor::CPPTYPE_FLOAT: r->SetFloat(&m, f, 1); break;
      case pb::FieldDescriptor::CPPTYPE_BOOL: r->SetBool(&m, f, true); break;
      case pb::FieldDescriptor::CPPTYPE_STRING: r->SetString(&m, f, "x"); break;
      default: break;
    }
  }
}

}  // namespace

int main() {
  sluice::MetricsSnapshot s;
  fill(s.stats);
  fill(s.health);
  fill(s.ports);
  s.ports.mutable_ports(0)->set_port_no(s.stats.ports(0).port_no());
  s.calls.handled[{"/sluice.v1.Dataplane/GetStats", "OK"}] = 1;
  s.calls.latency["/sluice.v1.Dataplane/GetStats"].count = 1;
  std::fputs(sluice::renderMetrics(s).c_str(), stdout);
  return 0;
}
