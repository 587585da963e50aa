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

absl::StatusOr<NodeChange> OverlayModule::putNode(const RemoteNodeConfig& node, NodeSource source, bool replace) {
  DataplaneControl::Change change(core_);
  const auto before = overlay_.node(node.name);
  absl::StatusOr<NodeChange> result = overlay_.putNode(node, source, replace);
  if (!result.ok()) return result;
  const bool changed = *result != NodeChange::kUnchanged;
  if (changed || core_.checkpointDirtyLocked()) {
    // On disk before anyone is told (a restart brings the node back), and
    // before the PMDs route to it: a failed write undoes it unseen.
    const bool was_dirty = core_.checkpointDirtyLocked();
    if (absl::Status s = core_.writeCheckpointLocked(); !s.ok()) {
      if (*result == NodeChange::kCreated) overlay_.deleteNode(node.name);
      if (*result == NodeChange::kUpdated) (void)overlay_.putNode(before->first, before->second, true);
      if (changed) core_.setCheckpointDirtyLocked(was_dirty);  // the file is as it was
      return s;
    }
  }
  // The republish revalidates megaflows against the new routes and VTEPs
  // (e.g. flows to the new CIDR that were cached as no_route die, decap
  // flows from a VTEP the node no longer has).
  if (changed) core_.republishLocked();
  return result;
}

absl::StatusOr<bool> OverlayModule::deleteNode(const std::string& name) {
  DataplaneControl::Change change(core_);
  const bool deleted = overlay_.deleteNode(name);
  if (deleted) core_.republishLocked();
  // As a deleted port: gone either way; while the write fails the file still
  // names it (a restart meanwhile brings it back), and the next change retries.
  if (deleted || core_.checkpointDirtyLocked())
    if (absl::Status s = core_.writeCheckpointLocked(); !s.ok()) return s;
  return deleted;
}

nlohmann::json OverlayModule::checkpointRecords() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [n, source] : overlay_.addedNodes()) {
    nlohmann::json cidrs = nlohmann::json::array();
    for (const Ipv4Cidr& c : n.pod_cidrs) cidrs.push_back(c.toString());
    nlohmann::json record = {{"name", n.name},
                             {"vtep", n.vtep.toString()},
                             {"pod-cidrs", cidrs},
                             {"source", std::string(nodeSourceName(source))}};
    // Only a MAC the caller gave: the derived one follows the VTEP.
    if (n.mac) record["mac"] = n.mac->toString();
    out.push_back(std::move(record));
  }
  return out;
}

void OverlayModule::restore(const nlohmann::json& records) {
  unsigned restored = 0, dropped = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& record = records[i];
    const std::string where = absl::StrCat(
        "checkpointed remote node ", record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    // "source" is the checkpoint's own key, not the config file's schema.
    NodeSource source = NodeSource::kApi;
    nlohmann::json settings = record;
    if (settings.is_object() && settings.contains("source")) {
      const nlohmann::json& s = settings["source"];
      std::optional<NodeSource> parsed = s.is_string() ? parseNodeSource(s.get<std::string>()) : std::nullopt;
      if (!parsed || *parsed == NodeSource::kStatic) {
        logError(where, " not restored: source must be \"api\" or \"kubernetes\"");
        ++dropped;
        continue;
      }
      source = *parsed;
      settings.erase("source");
    }
    RemoteNodeConfig node;
    if (absl::Status s = parseRemoteNode(settings, absl::StrCat("nodes[", i, "]"), node); !s.ok()) {
      logError(where, " not restored: ", s.message());
      ++dropped;
      continue;
    }
    if (overlay_.configured(node.name)) {
      logWarning(where, " not restored: the config file's remote-nodes lists ", node.name, " now, and wins");
      ++dropped;
      continue;
    }
    absl::StatusOr<NodeChange> added = overlay_.putNode(node, source, false);
    if (!added.ok() || *added != NodeChange::kCreated) {
      logError(where, " not restored: ", added.ok() ? "listed twice" : added.status().message());
      ++dropped;
      continue;
    }
    ++restored;
  }
  // The core republishes after the restore, and rewrites the checkpoint
  // without the dropped ones.
  if (!records.empty())
    logInfo("checkpoint: ", restored, " remote node(s) restored, ", dropped, " dropped");
}

std::vector<RemoteNodeView> OverlayModule::listNodes() {
  auto lock = core_.read();
  return overlay_.listNodes(std::chrono::steady_clock::now());
}

std::optional<RemoteNodeView> OverlayModule::nodeView(const std::string& name) {
  auto lock = core_.read();
  return overlay_.nodeView(name, std::chrono::steady_clock::now());
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
