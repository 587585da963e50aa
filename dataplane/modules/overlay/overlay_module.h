// The VXLAN overlay as a control module: the uplink is a port of the core's
// table (polled by PMD 0, sent to by all), the overlay's tables go into
// every snapshot and every translation, the neighbor table is kept up on the
// flow thread's tick, and the remote-node calls of the API are changes of
// the core like any other (a changed node table revalidates megaflows).
//
// Remote nodes in the checkpoint: the section "nodes" holds the nodes the API
// added, one record each in the config file's remote-node schema
// ({"name", "vtep", "pod-cidrs": [IPv4 and IPv6 ones], "mac" when one was given}, plus
// "source": "api" | "kubernetes", which the config file does not take and
// restore reads apart; a record without one is the API's), written
// within the AddNode/DeleteNode change before it replies. The config file's
// nodes are never checkpointed: every start takes them from the file. On
// restore the config file wins: a checkpointed node whose name the file now
// lists is dropped for the file's, and one that no longer fits (unreadable,
// or refused by validateRemoteNode now: e.g. its VTEP or a CIDR another
// node's) is dropped; both are logged with the record. Without an uplink no
// module is registered and the core keeps the section as it was.
#pragma once

#include <absl/status/statusor.h>

#include <optional>
#include <string>
#include <vector>

#include "dataplane/core/control_module.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/overlay/overlay_control.h"

namespace sluice {

class OverlayModule final : public ControlModule {
 public:
  // Registers with `core` and puts the uplink into its port table.
  static absl::StatusOr<std::unique_ptr<OverlayModule>> attach(DataplaneControl& core, OverlayControl& overlay);
  // Takes the uplink out of the port table (PMDs stopped or not).
  ~OverlayModule() override;
  OverlayModule(const OverlayModule&) = delete;
  OverlayModule& operator=(const OverlayModule&) = delete;

  // What a node call answers on a node without an uplink.
  static absl::Status absent();

  absl::StatusOr<bool> addNode(const RemoteNodeConfig& node) {
    absl::StatusOr<NodeChange> c = putNode(node, NodeSource::kApi, false);
    if (!c.ok()) return c.status();
    return *c == NodeChange::kCreated;
  }
  // OverlayControl::putNode as a change: checkpointed before the reply (a
  // failed write undoes it), republished (megaflows revalidated) when created
  // or updated.
  absl::StatusOr<NodeChange> putNode(const RemoteNodeConfig& node, NodeSource source, bool replace);
  absl::StatusOr<bool> deleteNode(const std::string& name);
  // OverlayControl::applyNodes as one change: one checkpoint write before
  // the reply, one republish (one megaflow revalidation, one snapshot) for
  // the whole batch. A failed write undoes the batch (every result becomes
  // that error; a changed node comes back with its old settings, possibly
  // under another tunnel index). putNode and deleteNode are batches of one.
  std::vector<absl::StatusOr<NodeChange>> applyNodes(std::vector<NodeOp> ops);
  std::vector<RemoteNodeView> listNodes();
  std::optional<RemoteNodeView> nodeView(const std::string& name);
  OverlayView view();
  uint32_t overlayMtu();

  void fillSnapshot(PmdSnapshot& snap, size_t pmd) const override;
  void fillRouteTables(RouteTables& tables) const override;
  bool tick(std::chrono::steady_clock::time_point now) override;
  std::string_view checkpointSection() const override { return "nodes"; }
  nlohmann::json checkpointRecords() const override;
  void restore(const nlohmann::json& records) override;
  absl::Status checkRoutedPrefixes(const std::vector<Ipv4Cidr>& v4, const std::vector<Ipv6Cidr>& v6) const override {
    return overlay_.checkLocalPrefixes(v4, v6);
  }

 private:
  OverlayModule(DataplaneControl& core, OverlayControl& overlay) : core_(core), overlay_(overlay) {}

  DataplaneControl& core_;
  OverlayControl& overlay_;  // under the core's locks (see overlay_control.h)
};

}  // namespace sluice
