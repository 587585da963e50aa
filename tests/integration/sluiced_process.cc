#include "tests/integration/sluiced_process.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

namespace sluice::test {
namespace {

std::atomic<int> g_instance{0};

std::unique_ptr<grpc::ClientContext> ctx() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return c;
}

// The first line of a sanitizer's report in sluiced's log (a sluiced built
// with ThreadSanitizer, AddressSanitizer or UBSan reports and goes on, or
// aborts), or npos.
size_t sanitizerReport(const std::string& log) {
  size_t first = std::string::npos;
  for (const char* marker : {"WARNING: ThreadSanitizer:", "ERROR: AddressSanitizer:", "runtime error:"})
    first = std::min(first, log.find(marker));
  return first;
}

}  // namespace

bool waitFor(const std::function<bool()>& done, std::chrono::steady_clock::duration limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

CommandResult runShell(const std::string& command) {
  FILE* p = ::popen(("(" + command + ") 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

CommandResult sluicectl(const std::string& socket, const std::string& args) {
  return runShell(std::string(SLUICECTL_PATH) + " --socket " + socket + " " + args);
}

std::unique_ptr<SluicedProcess> SluicedProcess::start(const SluicedOptions& o, std::string* error) {
  std::unique_ptr<SluicedProcess> p(new SluicedProcess());
  // Short: vhost socket paths must fit 107 bytes.
  p->dir_ = "/tmp/sit-" + std::to_string(::getpid()) + "-" + std::to_string(g_instance++);
  std::filesystem::remove_all(p->dir_);
  std::filesystem::create_directories(p->dir_);
  std::vector<std::string> args = {
      SLUICED_PATH,
      "--api-socket", p->apiSocket(),
      "--socket-dir", p->socketDir(),
      "--eal", "--no-huge --no-pci -m 512 --no-shconf --file-prefix=" + p->dir_.substr(5),
      "--pod-cidr", o.pod_cidr,
      "--main-core", "0", "--pmd-cores", "1",
      "--max-ports", std::to_string(o.max_ports),
      "--mbufs", "16384",
      "--tx-flush-interval", std::to_string(o.tx_flush_interval_us),
      "--state-dir", p->stateDir()};
  args.insert(args.end(), o.extra_flags.begin(), o.extra_flags.end());
  if (!o.netns.empty()) args.insert(args.begin(), {"/usr/bin/ip", "netns", "exec", o.netns});
  p->args_ = args;
  p->environment_ = o.environment;
  CPU_ZERO(&p->cpus_);
  if (o.cpus.empty()) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &p->cpus_);  // the kernel keeps those that exist
  } else {
    for (unsigned cpu : o.cpus) CPU_SET(cpu, &p->cpus_);
  }
  if (!p->launch(error)) return nullptr;
  return p;
}

bool SluicedProcess::restart(std::string* error) {
  stop();
  // A channel to the dead daemon's socket file would back off for seconds;
  // new ones are made once the new daemon's socket appears.
  stub_.reset();
  remote_nodes_.reset();
  sriov_.reset();
  ::unlink(apiSocket().c_str());
  return launch(error);
}

void SluicedProcess::setEnvironment(const std::string& name, const std::string& value) {
  environment_[name] = value;
}

std::optional<int> SluicedProcess::waitExited(std::chrono::steady_clock::duration limit) {
  if (pid_ < 0) return std::nullopt;
  int status = 0;
  if (!waitFor([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, limit)) return std::nullopt;
  pid_ = -1;
  return status;
}

void SluicedProcess::kill9() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

// Only a guard against a daemon that hangs, never a measure of start-up:
// on a loaded 2-core machine (sanitizer builds, other tests' busy PMDs on the
// same lcores) a healthy start took over 60 s.
constexpr auto kReadyGuard = std::chrono::minutes(5);

bool SluicedProcess::launch(std::string* error) {
  SluicedProcess* p = this;
  std::string log_path = p->dir_ + "/sluiced.log";
  // Built before fork: the child of a threaded process must not allocate.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (!environment_.contains(std::string(entry.substr(0, entry.find('='))))) env.emplace_back(entry);
  }
  for (const auto& [name, value] : environment_)
    if (!value.empty()) env.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (auto& a : args_) argv.push_back(a.data());
  argv.push_back(nullptr);
  p->pid_ = ::fork();
  if (p->pid_ == 0) {
    // Appended: a restarted daemon's log follows the first one's.
    FILE* log = std::freopen(log_path.c_str(), "a", stderr);
    if (log != nullptr) ::dup2(::fileno(stderr), STDOUT_FILENO);
    if (::sched_setaffinity(0, sizeof cpus_, &cpus_) != 0) std::_Exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    std::_Exit(127);
  }
  bool exited = false;
  exit_code_.reset();
  bool ready = waitFor(
      [&] {
        int status = 0;
        if (::waitpid(p->pid_, &status, WNOHANG) == p->pid_) {
          exited = true;
          exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
          return true;
        }
        // A channel created before the socket exists backs off for seconds;
        // create it once the socket is there.
        if (!std::filesystem::exists(p->apiSocket())) return false;
        if (!p->stub_) {
          auto channel = grpc::CreateChannel("unix:" + p->apiSocket(), grpc::InsecureChannelCredentials());
          p->stub_ = v1::Dataplane::NewStub(channel);
          p->remote_nodes_ = v1::RemoteNodes::NewStub(channel);
          p->sriov_ = v1::Sriov::NewStub(channel);
        }
        v1::HealthResponse h;
        grpc::ClientContext c;
        c.set_wait_for_ready(true);
        c.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
        return p->stub_->Health(&c, {}, &h).ok() && h.ready();
      },
      kReadyGuard);
  if (!ready || exited) {
    *error = std::string(exited ? "sluiced exited" : "sluiced not ready within the guard") + "; log:\n" + p->log();
    if (exited) p->pid_ = -1;
    return false;
  }
  return true;
}

int SluicedProcess::stop() {
  if (pid_ < 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  bool done = waitFor([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, std::chrono::seconds(20));
  if (!done) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

SluicedProcess::~SluicedProcess() {
  stop();
  // A sanitized sluiced's findings fail the test that drove it.
  const std::string text = log();
  if (const size_t at = sanitizerReport(text); at != std::string::npos)
    ADD_FAILURE() << "sluiced's log holds a sanitizer report:\n" << text.substr(at > 2000 ? at - 2000 : 0, 12000);
  // SLUICE_TEST_KEEP=1 keeps the directory (and sluiced's log) for debugging.
  if (std::getenv("SLUICE_TEST_KEEP") == nullptr) std::filesystem::remove_all(dir_);
}

std::string SluicedProcess::log() const {
  std::ifstream in(dir_ + "/sluiced.log");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

grpc::Status SluicedProcess::addPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp) {
  return stub_->AddPort(ctx().get(), req, resp);
}

grpc::Status SluicedProcess::deletePort(const std::string& container_id, const std::string& ifname,
                                        v1::DeletePortResponse* resp) {
  v1::DeletePortRequest req;
  req.mutable_attachment()->set_container_id(container_id);
  req.mutable_attachment()->set_ifname(ifname);
  v1::DeletePortResponse ignored;
  return stub_->DeletePort(ctx().get(), req, resp != nullptr ? resp : &ignored);
}

v1::GetStatsResponse SluicedProcess::stats() {
  v1::GetStatsResponse s;
  stub_->GetStats(ctx().get(), {}, &s);
  return s;
}

v1::HealthResponse SluicedProcess::health() {
  v1::HealthResponse h;
  stub_->Health(ctx().get(), {}, &h);
  return h;
}

v1::ListPortsResponse SluicedProcess::ports() {
  v1::ListPortsResponse s;
  stub_->ListPorts(ctx().get(), {}, &s);
  return s;
}

bool SluicedProcess::waitLinkUp(uint32_t port_no) {
  return waitFor(
      [&] {
        v1::ListPortsResponse list = ports();
        for (const v1::Port& p : list.ports())
          if (p.port_no() == port_no) return p.link_up();
        return false;
      },
      std::chrono::seconds(20));
}

v1::AddPortRequest portRequest(const std::string& container_id, const std::string& ip, v1::VhostMode mode) {
  v1::AddPortRequest r;
  r.mutable_attachment()->set_container_id(container_id);
  r.mutable_attachment()->set_ifname("net1");
  r.set_pod_namespace("default");
  r.set_pod_name("pod-" + container_id);
  r.set_ip(ip);
  r.set_type(v1::PORT_TYPE_VHOST_USER);
  r.set_vhost_mode(mode);
  return r;
}

uint64_t dropCount(const v1::GetStatsResponse& stats, const std::string& reason) {
  for (const v1::DropCounter& d : stats.drops())
    if (d.reason() == reason) return d.packets();
  return ~uint64_t{0};
}

const v1::PortStats* portStats(const v1::GetStatsResponse& stats, uint32_t port_no) {
  for (const v1::PortStats& p : stats.ports())
    if (p.port_no() == port_no) return &p;
  return nullptr;
}

}  // namespace sluice::test
