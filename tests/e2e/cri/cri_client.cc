// A minimal CRI client (the gRPC API kubelet speaks to its container runtime),
// used by the tests/e2e/cri_*_test.sh scripts to drive containerd's CRI plugin
// the way kubelet does. Single-threaded command-line tool.
//
//   cri_client --endpoint SOCK version
//   cri_client --endpoint SOCK run NAME UID NAMESPACE     prints the sandbox id
//   cri_client --endpoint SOCK status ID                  PodSandboxStatus (verbose) as JSON
//   cri_client --endpoint SOCK stop ID | remove ID
//   cri_client --endpoint SOCK list                       every sandbox id, one a line
//   cri_client --endpoint SOCK create SANDBOX_ID NAME UID NAMESPACE CONTAINER IMAGE HOST_DIR:CONTAINER_DIR [USER:GROUP:SUPPLEMENTARY_GROUP]
//       a container in the sandbox (NAME UID NAMESPACE: the sandbox's, as
//       kubelet repeats them) from IMAGE, running its entrypoint, with the
//       host directory mounted (a pod volume, as kubelet mounts an emptyDir),
//       as root or as the numeric user, group and one supplementary group
//       given; prints the container id
//   cri_client --endpoint SOCK start CONTAINER_ID
//   cri_client --endpoint SOCK exec CONTAINER_ID CMD [ARG...]
//       ExecSync: the command's stdout and stderr, and its exit code as ours
//
// Exit codes: 0 success, 1 the runtime returned an error (printed with its
// gRPC code; exec: 125), 2 usage.
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

// The sandbox's config as RunPodSandbox takes it and CreateContainer repeats it.
cri::PodSandboxConfig sandboxConfig(const char* name, const char* uid, const char* ns) {
  cri::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_uid(uid);
  c.mutable_metadata()->set_namespace_(ns);
  c.mutable_metadata()->set_attempt(0);
  c.set_hostname(name);
  // A pod network namespace (not the host's): that is what CNI attaches to.
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(cri::NamespaceMode::POD);
  return c;
}

int usage() {
  std::fputs(
      "usage: cri_client --endpoint SOCK (version | list | run NAME UID NAMESPACE | status ID | stop ID | remove ID |\n"
      "  create SANDBOX_ID NAME UID NAMESPACE CONTAINER IMAGE HOST_DIR:CONTAINER_DIR [USER:GROUP:SUPPLEMENTARY_GROUP] |\n"
      "  start ID | exec ID CMD...)\n",
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
    *req.mutable_config() = sandboxConfig(argv[4], argv[5], argv[6]);
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
  if (cmd == "create" && (argc == 11 || argc == 12)) {
    const std::string mount = argv[10];
    const size_t colon = mount.find(':');
    if (colon == std::string::npos) return usage();
    unsigned user = 0, group = 0, supplementary = 0;
    char end = 0;
    if (argc == 12 && std::sscanf(argv[11], "%u:%u:%u%c", &user, &group, &supplementary, &end) != 3) return usage();
    cri::CreateContainerRequest req;
    req.set_pod_sandbox_id(argv[4]);
    *req.mutable_sandbox_config() = sandboxConfig(argv[5], argv[6], argv[7]);
    cri::ContainerConfig* c = req.mutable_config();
    c->mutable_metadata()->set_name(argv[8]);
    c->mutable_image()->set_image(argv[9]);
    cri::Mount* m = c->add_mounts();
    m->set_host_path(mount.substr(0, colon));
    m->set_container_path(mount.substr(colon + 1));
    if (argc == 12) {
      cri::LinuxContainerSecurityContext* sc = c->mutable_linux()->mutable_security_context();
      sc->mutable_run_as_user()->set_value(user);
      sc->mutable_run_as_group()->set_value(group);
      sc->add_supplemental_groups(supplementary);
    }
    cri::CreateContainerResponse r;
    int rc = report(stub->CreateContainer(context().get(), req, &r), "CreateContainer");
    if (rc == 0) std::puts(r.container_id().c_str());
    return rc;
  }
  if (cmd == "exec" && argc >= 6) {
    cri::ExecSyncRequest req;
    req.set_container_id(argv[4]);
    for (int i = 5; i < argc; ++i) req.add_cmd(argv[i]);
    req.set_timeout(30);  // seconds; within the call's own deadline
    cri::ExecSyncResponse r;
    if (report(stub->ExecSync(context().get(), req, &r), "ExecSync") != 0) return 125;
    std::fwrite(r.stdout().data(), 1, r.stdout().size(), stdout);
    std::fwrite(r.stderr().data(), 1, r.stderr().size(), stderr);
    return r.exit_code();
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
  if (cmd == "start") {
    cri::StartContainerRequest req;
    req.set_container_id(id);
    cri::StartContainerResponse r;
    return report(stub->StartContainer(context().get(), req, &r), "StartContainer");
  }
  if (cmd == "remove") {
    cri::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(id);
    cri::RemovePodSandboxResponse r;
    return report(stub->RemovePodSandbox(context().get(), req, &r), "RemovePodSandbox");
  }
  return usage();
}
