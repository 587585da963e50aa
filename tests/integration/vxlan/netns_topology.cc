#include "tests/integration/vxlan/netns_topology.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace sluice::test {

int shell(const std::string& cmd, std::string* out) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  int status = ::pclose(p);
  if (out != nullptr) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string processTag() { return std::to_string(::getpid() % 100000); }

Topology::~Topology() {
  for (const std::string& ns : netns_) shell("ip netns del " + ns);
  for (const std::string& l : root_links_) shell("ip link del " + l);
}

bool Topology::run(const std::string& cmd) {
  std::string out;
  if (shell(cmd, &out) == 0) return true;
  error_ = cmd + ": " + out;
  return false;
}

bool Topology::addNetns(const std::string& name) {
  shell("ip netns del " + name);
  if (!run("ip netns add " + name)) return false;
  netns_.push_back(name);
  return run("ip -n " + name + " link set lo up") &&
         run("ip netns exec " + name + " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1");
}

bool Topology::addVeth(const std::string& a, const std::string& ns_a, const std::string& b, const std::string& ns_b) {
  shell("ip link del " + a);
  if (!run("ip link add " + a + " type veth peer name " + b)) return false;
  if (ns_a.empty()) root_links_.push_back(a);
  else if (!run("ip link set " + a + " netns " + ns_a)) return false;
  if (!ns_b.empty() && !run("ip link set " + b + " netns " + ns_b)) return false;
  for (const auto& [dev, ns] : {std::pair{a, ns_a}, std::pair{b, ns_b}}) {
    const std::string pre = ns.empty() ? "" : "ip netns exec " + ns + " ";
    if (!run(pre + "sysctl -qw net.ipv6.conf." + dev + ".disable_ipv6=1")) return false;
    if (!run(pre + "ip link set " + dev + " up")) return false;
  }
  return true;
}

int Topology::in(const std::string& ns, const std::string& cmd, std::string* out) {
  return shell(ns.empty() ? cmd : "ip netns exec " + ns + " " + cmd, out);
}

}  // namespace sluice::test
