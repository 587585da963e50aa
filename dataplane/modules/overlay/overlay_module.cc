#include "dataplane/modules/overlay/overlay_module.h"

#include <absl/strings/str_cat.h>

#include "common/log.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<OverlayModule>> OverlayModule::attach(DataplaneControl& core,
                                                                     OverlayControl& overlay) {
  std::unique_ptr<OverlayModule> module(new OverlayModule(core, overlay));
  core.registerModule(module.get());
  DataplaneControl::Change change(core);
  // The uplink has one rx queue; PMD 0 polls it. Every PMD may send to it;
  // the tx lock is shared with control's ARP requests (taken once per
  // output batch).
  if (absl::Status s = core.addModulePortLocked(overlay.uplinkPort(), "uplink", overlay.uplinkDpdkPort(),
                                                overlay.uplinkTxLock(), 0);
      !s.ok()) {
    core.unregisterModuleLocked(module.get());
    return s;
  }
  return module;
}

OverlayModule::~OverlayModule() {
  DataplaneControl::Change change(core_);
  core_.removeModulePortLocked(overlay_.uplinkPort());
  core_.unregisterModuleLocked(this);
}

absl::Status OverlayModule::absent() {
  return absl::FailedPreconditionError("this node has no uplink (config key \"uplink\"): no VXLAN overlay");
}

absl::StatusOr<bool> OverlayModule::addNode(const RemoteNodeConfig& node) {
  DataplaneControl::Change change(core_);
  absl::StatusOr<bool> created = overlay_.addNode(node);
  // The republish revalidates megaflows against the new routes and VTEPs
  // (e.g. flows to the new CIDR that were cached as no_route die).
  if (created.ok() && *created) core_.republishLocked();
  return created;
}

absl::StatusOr<bool> OverlayModule::deleteNode(const std::string& name) {
  DataplaneControl::Change change(core_);
  const bool deleted = overlay_.deleteNode(name);
  if (deleted) core_.republishLocked();
  return deleted;
}

std::vector<RemoteNodeView> OverlayModule::listNodes() {
  auto lock = core_.read();
  return overlay_.listNodes(std::chrono::steady_clock::now());
}

OverlayView OverlayModule::view() {
  auto lock = core_.read();
  return overlay_.view();
}

uint32_t OverlayModule::overlayMtu() {
  auto lock = core_.read();
  return overlay_.overlayMtu();
}

void OverlayModule::fillSnapshot(PmdSnapshot& snap, size_t pmd) const { overlay_.fillSnapshot(snap.overlay, pmd); }

void OverlayModule::fillRouteTables(RouteTables& tables) const {
  tables.overlay = overlay_.tables().get();
  tables.uplink_port = overlay_.uplinkPort();
}

bool OverlayModule::tick(std::chrono::steady_clock::time_point now) { return overlay_.poll(now); }

}  // namespace sluice
