// The VXLAN overlay as a feature of sluiced: with an uplink configured it
// opens the uplink (a port of the core's table), runs the overlay module on
// it, serves sluice.v1.RemoteNodes, and adds the overlay to the core's
// answers (the overlay MTU of every port, the tunnels' counters, the
// overlay's side in Health). Without one it serves RemoteNodes only to say
// there is no overlay.
#include <absl/status/statusor.h>

#include <memory>
#include <optional>

#include "dataplane/api/feature.h"
#include "dataplane/config/config.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/overlay/api/remote_nodes_service.h"
#include "dataplane/modules/overlay/dpdk_uplink.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "dataplane/modules/overlay/overlay_module.h"

namespace sluice {
namespace {

class OverlayFeature final : public Feature, public ServiceExtension {
 public:
  OverlayFeature(const OverlayConfig& config, const LocalPodCidrs& pod_cidr, size_t pmds)
      : config_(config), pod_cidr_(pod_cidr), pmds_(pmds) {}

  absl::Status openPorts(DataplaneControl& core, rte_mempool* mbufs) override {
    if (config_.uplink) {
      auto opened = DpdkUplink::open(*config_.uplink, mbufs);
      if (!opened.ok()) return opened.status();
      uplink_ = std::move(*opened);
      overlay_ = std::make_unique<OverlayControl>(config_, pod_cidr_, *uplink_, kUplinkPortNo, pmds_);
      auto attached = OverlayModule::attach(core, *overlay_);
      if (!attached.ok()) return attached.status();
      module_ = std::move(*attached);
    }
    service_.emplace(module_.get());
    return absl::OkStatus();
  }

  grpc::Service* service() override { return service_ ? &*service_ : nullptr; }
  ServiceExtension* extension() override { return this; }
  void forwardDeprecated(DeprecatedForwards& forwards) override {
    forwards.add_node = [this](auto* c, auto* req, auto* resp) { return service_->AddNode(c, req, resp); };
    forwards.delete_node = [this](auto* c, auto* req, auto* resp) { return service_->DeleteNode(c, req, resp); };
    forwards.list_nodes = [this](auto* c, auto* req, auto* resp) { return service_->ListNodes(c, req, resp); };
  }

  // The uplink leaves the port table (and the offload's hands) only when no
  // PMD polls or sends to it any more; then it is closed.
  void closeAfterPmds() override {
    module_.reset();
    overlay_.reset();
    uplink_.reset();
  }

  void fillPorts(std::span<v1::Port* const> ports) override {
    if (module_ == nullptr) return;
    const uint32_t mtu = module_->overlayMtu();
    for (v1::Port* p : ports) p->set_overlay_mtu(mtu);
  }
  void fillStats(v1::GetStatsResponse* resp) override {
    if (module_ == nullptr) return;
    for (const RemoteNodeView& n : module_->listNodes()) fillRemoteNode(n, resp->add_tunnels());
  }
  void fillHealth(v1::HealthResponse* resp) override {
    if (module_ != nullptr) fillOverlay(module_->view(), resp->mutable_overlay());
  }

 private:
  const OverlayConfig config_;
  const LocalPodCidrs pod_cidr_;
  const size_t pmds_;
  std::unique_ptr<DpdkUplink> uplink_;
  std::unique_ptr<OverlayControl> overlay_;
  std::unique_ptr<OverlayModule> module_;  // null: no uplink
  std::optional<RemoteNodesService> service_;
};

absl::StatusOr<std::unique_ptr<Feature>> makeOverlayFeature(const SluicedConfig& config) {
  OverlayConfig overlay = config.overlay;
  if (config.external_gateway) overlay.external = ExternalNetworkConfig{*config.external_gateway, config.external_vlan};
  LocalPodCidrs ours(config.pod_cidr, config.pod_cidr_v6);
  ours.gateway = config.gateway;
  ours.gateway_v6 = config.gateway_v6;
  return std::make_unique<OverlayFeature>(overlay, ours, config.pmd_cores.size());
}

}  // namespace
}  // namespace sluice

SLUICE_REGISTER_FEATURE(overlay, sluice::makeOverlayFeature);
