// A minimal CRI client (the gRPC API kubelet speaks to its container runtime),
// used by tests/e2e/cri_sandbox_test.sh to drive containerd's CRI plugin the
// way kubelet does, pod sandboxes only. Single-threaded command-line tool.
//
//   cri_client --endpoint SOCK version
//   cri_client --endpoint SOCK run NAME UID NAMESPACE     prints the sandbox id
//   cri_client --endpoint SOCK status ID                  PodSandboxStatus (verbose) as JSON
//   cri_client --endpoint SOCK stop ID | remove ID
//   cri_client --endpoint SOCK list                       every sandbox id, one a line
//
// Exit codes: 0 success, 1 the runtime returned an error (printed with its
// gRPC code), 2 usage.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/v1/api.grpc.pb.h"

namespace {

namespace cri = runtime::v1;

// RunPodSandbox pulls nothing here (the image is imported beforehand) but does
// run runc and the CNI plugin; a minute bounds a hung runtime.
constexpr auto kDeadline = std::chrono::seconds(60);

std::unique_ptr<grpc::ClientContext> context() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + kDeadline);
  return c;
}

int report(const grpc::Status& s, const char* call) {
  if (s.ok()) return 0;
  std::fprintf(stderr, "cri_client: %s: code %d: %s\n", call, static_cast<int>(s.error_code()),
               s.error_message().c_str());
  return 1;
}

void printJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;  // SANDBOX_READY is the enum's zero
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  std::puts(out.c_str());
}

int usage() {
  std::fputs(
      "usage: cri_client --endpoint SOCK (version | list | run NAME UID NAMESPACE | status ID | stop ID | remove ID)\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || std::string(argv[1]) != "--endpoint") return usage();
  auto stub = cri::RuntimeService::NewStub(
      grpc::CreateChannel(std::string("unix:") + argv[2], grpc::InsecureChannelCredentials()));
  const std::string cmd = argv[3];

  if (cmd == "version" && argc == 4) {
    cri::VersionResponse r;
    int rc = report(stub->Version(context().get(), {}, &r), "Version");
    if (rc == 0) printJson(r);
    return rc;
  }
  if (cmd == "run" && argc == 7) {
    cri::RunPodSandboxRequest req;
    cri::PodSandboxConfig* c = req.mutable_config();
    c->mutable_metadata()->set_name(argv[4]);
    c->mutable_metadata()->set_uid(argv[5]);
    c->mutable_metadata()->set_namespace_(argv[6]);
    c->mutable_metadata()->set_attempt(0);
    c->set_hostname(argv[4]);
    // A pod network namespace (not the host's): that is what CNI attaches to.
    c->mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
        cri::NamespaceMode::POD);
    cri::RunPodSandboxResponse r;
    int rc = report(stub->RunPodSandbox(context().get(), req, &r), "RunPodSandbox");
    if (rc == 0) std::puts(r.pod_sandbox_id().c_str());
    return rc;
  }
  if (cmd == "list" && argc == 4) {
    cri::ListPodSandboxResponse r;
    int rc = report(stub->ListPodSandbox(context().get(), {}, &r), "ListPodSandbox");
    for (const cri::PodSandbox& p : r.items()) std::puts(p.id().c_str());
    return rc;
  }
  if (argc != 5) return usage();
  const std::string id = argv[4];
  if (cmd == "status") {
    cri::PodSandboxStatusRequest req;
    req.set_pod_sandbox_id(id);
    req.set_verbose(true);  // adds containerd's info, with the CNI result
    cri::PodSandboxStatusResponse r;
    int rc = report(stub->PodSandboxStatus(context().get(), req, &r), "PodSandboxStatus");
    if (rc == 0) printJson(r);
    return rc;
  }
  if (cmd == "stop") {
    cri::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(id);
    cri::StopPodSandboxResponse r;
    return report(stub->StopPodSandbox(context().get(), req, &r), "StopPodSandbox");
  }
  if (cmd == "remove") {
    cri::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(id);
    cri::RemovePodSandboxResponse r;
    return report(stub->RemovePodSandbox(context().get(), req, &r), "RemovePodSandbox");
  }
  return usage();
}
