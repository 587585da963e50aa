// Network namespaces, veth pairs and the Linux kernel's VXLAN device for the
// overlay's integration tests, built with iproute2 and torn down (also when a
// test fails) by the destructor. Names carry the test process id so parallel
// runs do not collide. Test thread only.
#pragma once

#include <string>
#include <vector>

namespace sluice::test {

// Runs a shell command; returns its exit status (output discarded unless
// `out` is given).
int shell(const std::string& cmd, std::string* out = nullptr);

class Topology {
 public:
  Topology() = default;
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // Creates the netns (recorded for teardown) with lo up and IPv6 off (no
  // neighbor discovery or MLD traffic to disturb exact counters).
  bool addNetns(const std::string& name);
  // A veth pair; each end optionally moved into a netns ("" = root), both up.
  bool addVeth(const std::string& a, const std::string& ns_a, const std::string& b, const std::string& ns_b);
  // Runs `cmd` inside netns `ns` (or in the root namespace for "").
  int in(const std::string& ns, const std::string& cmd, std::string* out = nullptr);
  const std::string& error() const { return error_; }

 private:
  bool run(const std::string& cmd);
  std::vector<std::string> netns_;
  std::vector<std::string> root_links_;
  std::string error_;
};

// A short tag unique to this process, for interface and netns names (an
// interface name holds at most 15 characters).
std::string processTag();

}  // namespace sluice::test
