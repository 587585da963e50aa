#include "dataplane/modules/overlay/overlay_module.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <map>

#include "common/cidr_overlap.h"
#include "common/log.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<OverlayModule>> OverlayModule::attach(DataplaneControl& core,
                                                                     OverlayControl& overlay) {
  std::unique_ptr<OverlayModule> module(new OverlayModule(core, overlay));
  core.registerModule(module.get());
  // A remote node's CIDRs and prefixes must not overlap our pods' routed
  // prefixes (checked within the node change, under the core's locks).
  overlay.setLocalClaims([&core](const RemoteNodeConfig& node) {
    core.assertInChange();
    for (const Ipv4Cidr& c : node.claimed())
      for (const Ipv4Cidr& mine : core.routedPrefixesLocked())
        if (cidrsOverlap(c, mine))
          return absl::FailedPreconditionError(
              absl::StrCat("pod_cidrs: ", c.toString(), " overlaps ", mine.toString(), ", routed to a pod of this node"));
    for (const Ipv6Cidr& c : node.claimed6())
      for (const Ipv6Cidr& mine : core.routedPrefixes6Locked())
        if (cidrsOverlap(c, mine))
          return absl::FailedPreconditionError(
              absl::StrCat("pod_cidrs: ", c.toString(), " overlaps ", mine.toString(), ", routed to a pod of this node"));
    return absl::OkStatus();
  });
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
  std::vector<NodeOp> ops(1);
  ops[0] = NodeOp{NodeOp::Kind::kPut, node, source, replace};
  return std::move(applyNodes(std::move(ops))[0]);
}

absl::StatusOr<bool> OverlayModule::deleteNode(const std::string& name) {
  std::vector<NodeOp> ops(1);
  ops[0].kind = NodeOp::Kind::kRemove;
  ops[0].node.name = name;
  const std::vector<absl::StatusOr<NodeChange>> results = applyNodes(std::move(ops));
  if (!results.front().ok()) return results.front().status();
  return results.front().value() == NodeChange::kRemoved;
}

std::vector<absl::StatusOr<NodeChange>> OverlayModule::applyNodes(std::vector<NodeOp> ops) {
  DataplaneControl::Change change(core_);
  // Each name's settings before the batch, to undo it by.
  std::map<std::string, std::optional<std::pair<RemoteNodeConfig, NodeSource>>> before;
  for (const NodeOp& op : ops)
    if (!before.contains(op.node.name)) before.emplace(op.node.name, overlay_.node(op.node.name));
  std::vector<absl::StatusOr<NodeChange>> results = overlay_.applyNodes(std::move(ops));
  const bool changed = std::any_of(results.begin(), results.end(), [](const absl::StatusOr<NodeChange>& r) {
    return r.ok() && *r != NodeChange::kUnchanged;
  });
  if (changed || core_.checkpointDirtyLocked()) {
    // On disk before anyone is told (a restart brings the nodes back), and
    // before the PMDs route to them: a failed write undoes the batch unseen.
    const bool was_dirty = core_.checkpointDirtyLocked();
    if (absl::Status s = core_.writeCheckpointLocked(); !s.ok()) {
      if (changed) {
        // Every touched name taken out first, then the old ones put back:
        // a VTEP or CIDR that moved between two nodes of the batch is free
        // again before either is restored.
        std::vector<NodeOp> undo;
        for (const auto& entry : before) {
          NodeOp out;
          out.kind = NodeOp::Kind::kRemove;
          out.node.name = entry.first;
          undo.push_back(std::move(out));
        }
        for (const auto& [name, was] : before)
          if (was) undo.push_back(NodeOp{NodeOp::Kind::kPut, was->first, was->second, false});
        (void)overlay_.applyNodes(std::move(undo));
        core_.setCheckpointDirtyLocked(was_dirty);  // the file is as it was
      }
      for (absl::StatusOr<NodeChange>& r : results) r = s;
      return results;
    }
  }
  // The republish revalidates megaflows against the new routes and VTEPs
  // (e.g. flows to a new CIDR that were cached as no_route die, decap flows
  // from a VTEP a node no longer has, encap flows toward a removed node).
  if (changed) core_.republishLocked();
  return results;
}

nlohmann::json OverlayModule::checkpointRecords() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [n, source] : overlay_.addedNodes()) {
    nlohmann::json cidrs = nlohmann::json::array();
    // Both families in the one list (a file written before IPv6 has IPv4
    // ones only, and reads the same way).
    for (const Ipv4Cidr& c : n.pod_cidrs) cidrs.push_back(c.toString());
    for (const Ipv6Cidr& c : n.pod_cidrs_v6) cidrs.push_back(c.toString());
    nlohmann::json record = {{"name", n.name},
                             {"vtep", vtepText(n)},
                             {"pod-cidrs", cidrs},
                             {"source", std::string(nodeSourceName(source))}};
    // Only a MAC the caller gave: the derived one follows the VTEP.
    if (n.mac) record["mac"] = n.mac->toString();
    // Only when it publishes some (a file without the key reads as none).
    if (!n.routed_prefixes.empty() || !n.routed_prefixes_v6.empty()) {
      nlohmann::json prefixes = nlohmann::json::array();
      for (const Ipv4Cidr& c : n.routed_prefixes) prefixes.push_back(c.toString());
      for (const Ipv6Cidr& c : n.routed_prefixes_v6) prefixes.push_back(c.toString());
      record["routed-prefixes"] = prefixes;
    }
    out.push_back(std::move(record));
  }
  return out;
}

void OverlayModule::restore(const nlohmann::json& records) {
  unsigned restored = 0, dropped = 0;
  std::vector<NodeOp> ops;
  std::vector<std::string> wheres;  // ops[i]'s record, for the log
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
    wheres.push_back(where);
    ops.push_back(NodeOp{NodeOp::Kind::kPut, std::move(node), source, false});
  }
  // One batch: the tables built once, not once per node.
  std::vector<absl::StatusOr<NodeChange>> added = overlay_.applyNodes(std::move(ops));
  for (size_t i = 0; i < added.size(); ++i) {
    if (!added[i].ok() || *added[i] != NodeChange::kCreated) {
      logError(wheres[i], " not restored: ", added[i].ok() ? "listed twice" : added[i].status().message());
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
  if (overlay_.externalGateway()) {
    tables.external = true;
    tables.external_max_frame = maxFrameForMtu(static_cast<uint16_t>(overlay_.uplinkMtu()));
  }
}

bool OverlayModule::tick(std::chrono::steady_clock::time_point now) { return overlay_.poll(now); }

}  // namespace sluice
