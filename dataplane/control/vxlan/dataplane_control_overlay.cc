// DataplaneControl's overlay entry points (issue 5), apart from
// dataplane_control.cc so the overlay's hooks there stay one line each.
// Control/API threads; every function takes or assumes the control mutex.
#include <absl/strings/str_cat.h>

#include <cstring>

#include "dataplane/control/dataplane_control.h"

namespace sluice {
namespace {

absl::Status noOverlay() {
  return absl::FailedPreconditionError("this node has no uplink (config key \"uplink\"): no VXLAN overlay");
}

}  // namespace

void DataplaneControl::setOverlay(OverlayControl* overlay) {
  ChangeScope change(*this);
  overlay_ = overlay;
}

absl::StatusOr<bool> DataplaneControl::addNode(const RemoteNodeConfig& node) {
  ChangeScope change(*this);
  if (overlay_ == nullptr) return noOverlay();
  absl::StatusOr<bool> created = overlay_->addNode(node);
  // The republish revalidates megaflows against the new routes and VTEPs
  // (e.g. flows to the new CIDR that were cached as no_route die).
  if (created.ok() && *created) republishLocked();
  return created;
}

absl::StatusOr<bool> DataplaneControl::deleteNode(const std::string& name) {
  ChangeScope change(*this);
  if (overlay_ == nullptr) return noOverlay();
  const bool deleted = overlay_->deleteNode(name);
  if (deleted) republishLocked();
  return deleted;
}

absl::StatusOr<std::vector<RemoteNodeView>> DataplaneControl::listNodes() {
  std::lock_guard lock(mu_);
  if (overlay_ == nullptr) return noOverlay();
  return overlay_->listNodes(std::chrono::steady_clock::now());
}

std::optional<OverlayView> DataplaneControl::overlayView() {
  std::lock_guard lock(mu_);
  if (overlay_ == nullptr) return std::nullopt;
  return overlay_->view();
}

uint32_t DataplaneControl::overlayMtu() {
  std::lock_guard lock(mu_);
  return overlay_ != nullptr ? overlay_->overlayMtu() : 0;
}

void DataplaneControl::fillOverlayLocked(PmdSnapshot& snap, size_t p) const {
  overlay_->fillSnapshot(snap.overlay, p);
  const uint16_t up = overlay_->uplinkPort();
  // Every PMD may send to the uplink; the lock is shared with control's ARP
  // requests (taken once per output batch).
  snap.tx_ports[up] = {overlay_->uplinkDpdkPort(), 0, true, overlay_->uplinkTxLock()};
  // The uplink has one rx queue; PMD 0 polls it.
  if (p == 0) snap.rx_queues.push_back({overlay_->uplinkDpdkPort(), 0, up});
}

void DataplaneControl::overlayStatsLocked(StatsView& v, const Totals& now) const {
  v.tunnels = overlay_->listNodes(std::chrono::steady_clock::now());
  const uint16_t up = overlay_->uplinkPort();
  const PortStatsView& c = now.ports[up];
  const PortStatsView& b = baseline_.ports[up];
  v.ports.push_back({up, AttachmentId{"uplink", "uplink"}, c.rx_packets - b.rx_packets, c.tx_packets - b.tx_packets,
                     c.tx_dropped - b.tx_dropped, c.rx_dropped - b.rx_dropped});
}

}  // namespace sluice
