// Partial offload as a feature of sluiced: the offload manager and its
// provider (found by its configured name among the registered ones: the
// NIC's rte_flow engine, or the software stand-in for tests and demos) are
// made before the PMDs, which read its mark table; the
// offload module offers megaflows to it and attaches the offload port (a
// configured pod attachment, else the uplink) when that port appears; its
// thread runs while the PMDs do; its figures are part of GetStats.
#include <absl/status/statusor.h>

#include <memory>
#include <optional>

#include "common/log.h"
#include "dataplane/api/feature.h"
#include "dataplane/config/config.h"
#include "dataplane/datapath/pmd_context.h"
#include "dataplane/modules/offload/offload_manager.h"
#include "dataplane/modules/offload/offload_module.h"
#include "dataplane/modules/offload/offload_provider_registry.h"

namespace sluice {
namespace {

void fillOffloadStats(const offload::OffloadStatsView& f, v1::OffloadStats* o) {
  o->set_provider(f.provider);
  o->set_port_attached(f.port_attached);
  o->set_port_no(f.port_no);
  o->set_capable(f.capable);
  o->set_capability_reason(f.capability_reason);
  o->set_max_flows(f.max_flows);
  o->set_offloaded(f.offloaded);
  o->set_installed(f.installed);
  o->set_removed(f.removed);
  o->set_retries(f.retries);
  o->set_cap_retries(f.cap_retries);
  o->set_engine_cycles(f.engine_cycles);
  o->set_engine_packets(f.engine_packets);
  for (const auto& [reason, n] : f.refused) {
    v1::DropCounter* d = o->add_refused();
    d->set_reason(reason);
    d->set_packets(n);
  }
  for (const auto& [reason, n] : f.failures) {
    v1::DropCounter* d = o->add_failures();
    d->set_reason(reason);
    d->set_packets(n);
  }
}

class OffloadFeature final : public Feature, public ServiceExtension {
 public:
  OffloadFeature(std::unique_ptr<offload::OffloadManager> manager, OffloadModule::Target target)
      : manager_(std::move(manager)), target_(std::move(target)) {}

  absl::Status preparePmds(std::span<PmdContext* const> pmds) override {
    for (PmdContext* pmd : pmds) pmd->marks = &manager_->marks();
    return absl::OkStatus();
  }
  absl::Status registerModules(DataplaneControl& core) override {
    module_.emplace(core, *manager_, target_);
    return absl::OkStatus();
  }
  void start() override { manager_->start(); }
  void stopBeforePmds() override { manager_->stop(); }

  ServiceExtension* extension() override { return this; }
  void fillStats(v1::GetStatsResponse* resp) override { fillOffloadStats(module_->stats(), resp->mutable_offload()); }

 private:
  std::unique_ptr<offload::OffloadManager> manager_;
  const OffloadModule::Target target_;
  std::optional<OffloadModule> module_;
};

absl::StatusOr<std::unique_ptr<Feature>> makeOffloadFeature(const SluicedConfig& config) {
  if (config.offload_provider == "off") return nullptr;
  const offload::OffloadProviderRegistration* registered = offload::findOffloadProvider(config.offload_provider);
  if (registered == nullptr)
    return absl::InvalidArgumentError("offload-provider: unknown provider \"" + config.offload_provider + "\"");
  if (registered->warning != nullptr) logWarning(registered->warning);
  std::unique_ptr<offload::OffloadProvider> provider = registered->make(config.offload_max_flows);
  if (config.offload_port.empty() && !config.overlay.uplink)
    logWarning("offload: neither an offload-port nor an uplink configured; nothing will be offloaded");
  // Partial offload marks the uplink's packets unless a port is configured
  // (the uplink is where a NIC with a flow engine sits).
  OffloadModule::Target target{config.offload_port, std::nullopt};
  if (config.offload_port.empty() && config.overlay.uplink) target.port_no = kUplinkPortNo;
  return std::make_unique<OffloadFeature>(
      std::make_unique<offload::OffloadManager>(std::move(provider), config.offload_max_flows), target);
}

}  // namespace
}  // namespace sluice

SLUICE_REGISTER_FEATURE(offload, sluice::makeOffloadFeature);
