// SR-IOV VFs as a feature of sluiced: the configured pools are discovered
// before anything starts (a configured pool that is not there stops sluiced
// with the reason), the SR-IOV module keeps the VF attachments, and the
// feature serves sluice.v1.Sriov and AddPort of a VF. A node without pools
// still runs the module: VF requests are refused with the reason, and the
// checkpoint's VF records are kept for a sluiced that has the pools again.
#include <absl/status/statusor.h>

#include <memory>
#include <optional>

#include "common/log.h"
#include "dataplane/api/feature.h"
#include "dataplane/config/config.h"
#include "dataplane/modules/sriov/api/sriov_service.h"
#include "dataplane/modules/sriov/netlink_pf_control.h"
#include "dataplane/modules/sriov/sriov_control.h"
#include "dataplane/modules/sriov/sriov_module.h"
#include "dataplane/stand_ins/fake_pf/fake_pf_control.h"

namespace sluice {
namespace {

class SriovFeature final : public Feature, public ServiceExtension {
 public:
  SriovFeature(std::unique_ptr<sriov::PfControl> pf_control, std::unique_ptr<sriov::SriovControl> sriov)
      : pf_control_(std::move(pf_control)), sriov_(std::move(sriov)) {}

  absl::Status registerModules(DataplaneControl& core) override {
    module_.emplace(core, sriov_.get());
    service_.emplace(*module_);
    return absl::OkStatus();
  }

  grpc::Service* service() override { return service_ ? &*service_ : nullptr; }
  ServiceExtension* extension() override { return this; }
  void forwardDeprecated(DeprecatedForwards& forwards) override {
    forwards.list_vfs = [this](auto* c, auto* req, auto* resp) { return service_->ListVfs(c, req, resp); };
  }

  std::optional<grpc::Status> addPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp) override {
    if (req.type() != v1::PORT_TYPE_SRIOV_VF) return std::nullopt;
    return service_->addVfPort(req, resp);
  }
  void listPorts(v1::ListPortsResponse* resp) override { service_->listAttachments(resp); }

 private:
  std::unique_ptr<sriov::PfControl> pf_control_;   // null: no pools
  std::unique_ptr<sriov::SriovControl> sriov_;     // null: no pools
  std::optional<SriovModule> module_;
  std::optional<SriovService> service_;
};

absl::StatusOr<std::unique_ptr<Feature>> makeSriovFeature(const SluicedConfig& config) {
  if (config.sriov_pools.empty()) return std::make_unique<SriovFeature>(nullptr, nullptr);
  std::unique_ptr<sriov::PfControl> pf_control;
  if (config.sriov_pf_control == "fake") {
    logWarning("*** sriov-pf-control is \"fake\": VF MAC, VLAN, trust and spoof-check are NOT programmed ",
               "on any PF. This is for tests only; never use it on a real node. ***");
    pf_control = std::make_unique<sriov::FakePfControl>();
  } else {
    pf_control = std::make_unique<sriov::NetlinkPfControl>();
  }
  auto created = sriov::SriovControl::create(config.sriov_pools, config.sysfs_root, *pf_control);
  if (!created.ok()) return created.status();
  for (const sriov::VfPool::Slot& s : (*created)->pool().slots())
    logInfo("SR-IOV pool: ", s.vf.pf, " vf ", s.vf.index, " ", s.vf.pci_address, " netdev ",
            s.vf.netdev.empty() ? "-" : s.vf.netdev);
  return std::make_unique<SriovFeature>(std::move(pf_control), std::move(*created));
}

}  // namespace
}  // namespace sluice

SLUICE_REGISTER_FEATURE(sriov, sluice::makeSriovFeature);
