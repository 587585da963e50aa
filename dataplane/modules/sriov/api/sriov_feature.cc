// SR-IOV VFs as a feature of sluiced: the configured pools are discovered
// before anything starts (a configured pool that is not there stops sluiced
// with the reason), the SR-IOV module keeps the VF attachments, and the
// feature serves sluice.v1.Sriov and AddPort of a VF. A node without pools
// still runs the module: VF requests are refused with the reason, and the
// checkpoint's VF records are kept for a sluiced that has the pools again.
// Pools with `vfs` or `mode` get their VFs created and bound first
// (vf_provisioner.h); at shutdown sluiced undoes that for each pool none of
// whose VFs is held by a pod (a pod's VF outlives a restart of sluiced).
#include <absl/status/statusor.h>

#include <memory>
#include <optional>

#include "common/log.h"
#include "dataplane/api/feature.h"
#include "dataplane/config/config.h"
#include "dataplane/modules/sriov/api/sriov_service.h"
#include "dataplane/modules/sriov/pf_control_registry.h"
#include "dataplane/modules/sriov/sriov_control.h"
#include "dataplane/modules/sriov/sriov_module.h"
#include "dataplane/modules/sriov/sysfs_access.h"
#include "dataplane/modules/sriov/vf_provisioner.h"

namespace sluice {
namespace {

class SriovFeature final : public Feature, public ServiceExtension {
 public:
  SriovFeature(std::unique_ptr<sriov::PfControl> pf_control, std::unique_ptr<sriov::SriovControl> sriov,
               std::vector<sriov::ProvisionRecord> provisioned = {})
      : pf_control_(std::move(pf_control)), sriov_(std::move(sriov)), provisioned_(std::move(provisioned)) {}
  ~SriovFeature() override {
    sriov::FileSysfs sysfs;
    for (const sriov::ProvisionRecord& rec : provisioned_) {
      bool held = false;
      for (const sriov::VfPool::Slot& s : sriov_->pool().slots()) held = held || (s.vf.pf == rec.pf && s.holder);
      if (held) {
        logInfo("SR-IOV: pf ", rec.pf, ": VFs left as they are (pods hold some)");
        continue;
      }
      if (absl::Status s = sriov::undoProvision(sysfs, rec); !s.ok())
        logError("SR-IOV: pf ", rec.pf, ": undoing the VF set-up: ", s.message());
      else
        logInfo("SR-IOV: pf ", rec.pf, ": VF set-up undone (", rec.created ? "VFs removed" : "drivers restored", ")");
    }
  }
  SriovFeature(const SriovFeature&) = delete;
  SriovFeature& operator=(const SriovFeature&) = delete;

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
  std::vector<sriov::ProvisionRecord> provisioned_;  // what start changed in sysfs, to undo
  std::optional<SriovModule> module_;
  std::optional<SriovService> service_;
};

absl::StatusOr<std::unique_ptr<Feature>> makeSriovFeature(const SluicedConfig& config) {
  if (config.sriov_pools.empty()) return std::make_unique<SriovFeature>(nullptr, nullptr);
  const sriov::PfControlProvider* provider = sriov::findPfControl(config.sriov_pf_control);
  if (provider == nullptr)
    return absl::InvalidArgumentError("sriov-pf-control: unknown PF control \"" + config.sriov_pf_control + "\"");
  if (provider->warning != nullptr) logWarning(provider->warning);
  std::unique_ptr<sriov::PfControl> pf_control = provider->make();
  sriov::FileSysfs sysfs;
  std::vector<sriov::ProvisionRecord> provisioned;
  auto undoAll = [&] {
    for (auto it = provisioned.rbegin(); it != provisioned.rend(); ++it)
      if (absl::Status s = sriov::undoProvision(sysfs, *it); !s.ok())
        logError("SR-IOV: pf ", it->pf, ": undoing the VF set-up: ", s.message());
  };
  for (const sriov::PoolConfig& pool : config.sriov_pools) {
    auto rec = sriov::provisionPool(sysfs, config.sysfs_root, pool);
    if (!rec.ok()) {
      undoAll();
      return rec.status();
    }
    if (rec->changedAnything()) provisioned.push_back(std::move(*rec));
  }
  auto created = sriov::SriovControl::create(config.sriov_pools, config.sysfs_root, *pf_control);
  if (!created.ok()) {
    undoAll();
    return created.status();
  }
  for (const sriov::VfPool::Slot& s : (*created)->pool().slots())
    logInfo("SR-IOV pool: ", s.vf.pf, " vf ", s.vf.index, " ", s.vf.pci_address, " netdev ",
            s.vf.netdev.empty() ? "-" : s.vf.netdev);
  return std::make_unique<SriovFeature>(std::move(pf_control), std::move(*created), std::move(provisioned));
}

}  // namespace
}  // namespace sluice

SLUICE_REGISTER_FEATURE(sriov, sluice::makeSriovFeature);
