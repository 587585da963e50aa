// A machine of several NUMA sockets made up for tests: each lcore's socket
// and each port's (by its dpdk_port) as the test sets them (unset lcores are on socket 0,
// unset ports unknown).
#pragma once

#include <map>

#include "dataplane/core/numa_topology.h"

namespace sluice::test {

class FakeNumaTopology final : public NumaTopology {
 public:
  FakeNumaTopology() = default;
  explicit FakeNumaTopology(std::map<unsigned, unsigned> lcore_sockets) : lcores_(std::move(lcore_sockets)) {}

  unsigned lcoreSocket(unsigned lcore) const override {
    auto it = lcores_.find(lcore);
    return it == lcores_.end() ? 0 : it->second;
  }
  std::optional<unsigned> portSocket(const CreatedPort& port) const override {
    auto it = ports_.find(port.dpdk_port);
    if (it == ports_.end()) return std::nullopt;
    return it->second;
  }

  void setLcore(unsigned lcore, unsigned socket) { lcores_[lcore] = socket; }
  void setPort(uint16_t dpdk_port, unsigned socket) { ports_[dpdk_port] = socket; }
  void forgetPort(uint16_t dpdk_port) { ports_.erase(dpdk_port); }

 private:
  std::map<unsigned, unsigned> lcores_;
  std::map<uint16_t, unsigned> ports_;
};

}  // namespace sluice::test
