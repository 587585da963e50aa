// Runs the real sluiced binary as a child process for a test, in a private
// directory (API socket, vhost sockets, log), and talks to it over gRPC.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/v1/dataplane.grpc.pb.h"
#include "sluice/v1/overlay.grpc.pb.h"
#include "sluice/v1/sriov.grpc.pb.h"

namespace sluice::test {

struct SluicedOptions {
  std::string pod_cidr = "10.250.0.0/24";
  unsigned max_ports = 32;
  unsigned tx_flush_interval_us = 0;
  std::vector<std::string> extra_flags;
  // Run inside this network namespace (ip netns exec, which execs sluiced in
  // place: the child's pid is sluiced's); empty: this process's.
  std::string netns;
  // Added to (or, with an empty value, removed from) sluiced's environment,
  // e.g. SLUICE_CRASH_AT.
  std::map<std::string, std::string> environment;
  // The CPUs sluiced may run on (its affinity, which its main-core and
  // pmd-cores index); empty: every CPU, as an unpinned container starts (not
  // the test's own thread's, which its EAL pinned to one CPU).
  std::vector<unsigned> cpus;
};

class SluicedProcess {
 public:
  // Starts sluiced and waits until Health reports ready; on failure the
  // returned pointer is null and `error` says why (with the daemon's log).
  static std::unique_ptr<SluicedProcess> start(const SluicedOptions& options, std::string* error);
  ~SluicedProcess();  // SIGTERM, then SIGKILL if it does not exit

  // SIGTERM and wait; returns the exit status (or -1 if it had to be killed).
  int stop();
  // SIGKILL (a crash: no clean-up at all) and reap it.
  void kill9();
  // Starts sluiced again in the same directory (same sockets, same state
  // directory <dir>/state) with the same flags, and waits until ready.
  bool restart(std::string* error);
  // When the last restart() failed because sluiced exited by itself (e.g.
  // it refused its state directory): its exit code, -1 if a signal ended
  // it; nullopt after a launch where it did not exit.
  std::optional<int> exitCode() const { return exit_code_; }
  // Sets (an empty value: removes) a variable of sluiced's environment for
  // the next restart().
  void setEnvironment(const std::string& name, const std::string& value);
  // Waits up to `limit` for sluiced to exit by itself (e.g. at a crash
  // point) and reaps it: its wait status, or nullopt if it still runs.
  std::optional<int> waitExited(std::chrono::steady_clock::duration limit = std::chrono::seconds(10));
  // The core's service, and the modules' services on the same socket.
  v1::Dataplane::Stub& api() { return *stub_; }
  v1::RemoteNodes::Stub& remoteNodes() { return *remote_nodes_; }
  v1::Sriov::Stub& sriov() { return *sriov_; }
  const std::string& dir() const { return dir_; }
  // The running daemon's process id (-1 when none runs).
  pid_t pid() const { return pid_; }
  std::string socketDir() const { return dir_ + "/vhost"; }
  std::string apiSocket() const { return dir_ + "/api.sock"; }
  std::string stateDir() const { return dir_ + "/state"; }
  std::string log() const;

  // Convenience wrappers (deadline 10 s).
  grpc::Status addPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp);
  grpc::Status deletePort(const std::string& container_id, const std::string& ifname,
                          v1::DeletePortResponse* resp = nullptr);
  v1::GetStatsResponse stats();
  v1::ListPortsResponse ports();
  v1::HealthResponse health();
  // Waits until the port's link is up (the pod's virtio device negotiated).
  bool waitLinkUp(uint32_t port_no);

 private:
  SluicedProcess() = default;
  bool launch(std::string* error);
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::vector<std::string> args_;
  std::map<std::string, std::string> environment_;
  cpu_set_t cpus_;
  std::string dir_;
  std::unique_ptr<v1::Dataplane::Stub> stub_;
  std::unique_ptr<v1::RemoteNodes::Stub> remote_nodes_;
  std::unique_ptr<v1::Sriov::Stub> sriov_;
};

// Polls `done` until it holds or `limit` passes: a deadline on a condition,
// never a measurement. Returns whether it held.
bool waitFor(const std::function<bool()>& done,
             std::chrono::steady_clock::duration limit = std::chrono::seconds(10));

// A shell command line's exit code (-1: it did not exit normally) and its
// stdout and stderr together.
struct CommandResult {
  int exit_code;
  std::string output;
};
CommandResult runShell(const std::string& command);
// Runs the built sluicectl against `socket` with `args`.
CommandResult sluicectl(const std::string& socket, const std::string& args);

v1::AddPortRequest portRequest(const std::string& container_id, const std::string& ip,
                               v1::VhostMode mode = v1::VHOST_MODE_SERVER);
uint64_t dropCount(const v1::GetStatsResponse& stats, const std::string& reason);
const v1::PortStats* portStats(const v1::GetStatsResponse& stats, uint32_t port_no);

}  // namespace sluice::test
