// The exception path to the node's kernel as a feature of sluiced: with
// host-interface set it opens the host TAP (routing the pod CIDRs to it in
// the node's kernel) and runs the host path module on it; closed after the
// PMDs stop, its routes deleted.
#include <absl/status/statusor.h>

#include <memory>
#include <vector>

#include "dataplane/api/feature.h"
#include "dataplane/config/config.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/hostpath/host_path_module.h"
#include "dataplane/modules/hostpath/host_tap.h"

namespace sluice::hostpath {
namespace {

class HostPathFeature final : public Feature {
 public:
  explicit HostPathFeature(const SluicedConfig& config)
      : iface_(config.host_interface), addresses_(config.host_addresses), ports_(config.host_path_allowed_ports) {
    // The kernel reaches every pod CIDR of this node through the TAP, from
    // the host address of its family.
    KernelRoute r4;
    r4.v4 = config.pod_cidr;
    r4.source4 = config.host_addresses.v4;
    routes_.push_back(r4);
    if (config.pod_cidr_v6) {
      KernelRoute r6;
      r6.v6 = *config.pod_cidr_v6;
      r6.source6 = config.host_addresses.v6;
      routes_.push_back(r6);
    }
  }

  absl::Status openPorts(DataplaneControl& core, rte_mempool* mbufs) override {
    auto opened = HostTap::open(iface_, routes_, mbufs);
    if (!opened.ok()) return opened.status();
    tap_ = std::move(*opened);
    auto attached = HostPathModule::attach(core, *tap_, addresses_, ports_);
    if (!attached.ok()) return attached.status();
    module_ = std::move(*attached);
    return absl::OkStatus();
  }

  void closeAfterPmds() override {
    module_.reset();
    tap_.reset();
  }

  ~HostPathFeature() override { closeAfterPmds(); }

 private:
  const std::string iface_;
  const HostAddresses addresses_;
  const HostPathPorts ports_;  // what of the host addresses pods may reach
  std::vector<KernelRoute> routes_;
  std::unique_ptr<HostTap> tap_;
  std::unique_ptr<HostPathModule> module_;
};

absl::StatusOr<std::unique_ptr<Feature>> makeHostPathFeature(const SluicedConfig& config) {
  if (config.host_interface.empty()) return nullptr;
  return std::make_unique<HostPathFeature>(config);
}

}  // namespace
}  // namespace sluice::hostpath

SLUICE_REGISTER_FEATURE(hostpath, sluice::hostpath::makeHostPathFeature);
