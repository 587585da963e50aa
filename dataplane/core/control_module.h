// What a feature of the control side (the VXLAN overlay, SR-IOV VFs, partial
// offload, and the features after them) adds to the control core: its part
// of every PMD snapshot and of the tables upcalls are translated with, its
// checkpoint section, its garbage collection, what it does when a port comes
// or goes, and attachments it holds that are not ports. A module is
// registered with DataplaneControl before start() and lives until the core
// is gone.
//
// Every hook runs inside one of the core's changes (DataplaneControl::Change:
// the writer and the table lock held), so a module's state that only hooks
// and the module's own changes touch needs no lock of its own. A module's
// own API calls open a change (or a read) on the core the same way.
#pragma once

#include <absl/status/statusor.h>

#include <array>
#include <vector>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dataplane/core/port_request.h"
#include "dataplane/datapath/limits.h"

namespace sluice {

struct PmdSnapshot;
struct RouteTables;
struct SourceTable;

class ControlModule {
 public:
  virtual ~ControlModule() = default;

  // PMD `pmd`'s snapshot, after the core filled in ports and routes.
  virtual void fillSnapshot(PmdSnapshot& snap, size_t pmd) const {
    (void)snap;
    (void)pmd;
  }
  // The tables upcalls and revalidation decide with.
  virtual void fillRouteTables(RouteTables& tables) const { (void)tables; }
  // The module's own ports' entries in the port tables the core rebuilds
  // with every change (it fills the pods'; a module's port is unchecked,
  // with no MTU, unless its module says otherwise here).
  virtual void fillPortTables(SourceTable& sources, std::vector<uint16_t>& mtus) const {
    (void)sources;
    (void)mtus;
  }

  // The module's top-level section of the checkpoint (an array of JSON
  // objects whose schema is the module's); empty: it keeps none. Records are
  // read once, by restore(), before the API serves; a section whose module
  // is not registered is kept in the file verbatim.
  virtual std::string_view checkpointSection() const { return {}; }
  virtual nlohmann::json checkpointRecords() const { return nlohmann::json::array(); }
  virtual void restore(const nlohmann::json& records) { (void)records; }

  // Attachments of pods that are gone (the core has checked its ports);
  // returns how many were removed. The core writes the checkpoint after.
  virtual size_t collectGarbage() { return 0; }

  // A port was created (the next snapshot has it), and a port is about to be
  // closed (no PMD uses it any more). `dpdk_port`: its ethdev; none for a
  // vhost-user port on the vhost library.
  virtual void portAdded(uint16_t port_no, const PortRequest& request, std::optional<uint16_t> dpdk_port) {
    (void)port_no;
    (void)request;
    (void)dpdk_port;
  }
  virtual void portClosing(uint16_t port_no) { (void)port_no; }

  // The flow thread's tick (every millisecond). True: the module's tables
  // changed and the PMDs need a new snapshot.
  virtual bool tick(std::chrono::steady_clock::time_point now) {
    (void)now;
    return false;
  }

  // Attachments that are not ports (an SR-IOV VF): one attachment is a port
  // or held by one module, never both.
  virtual bool holds(const AttachmentId& id) const {
    (void)id;
    return false;
  }
  // Releases an attachment holds() said is the module's (DeletePort).
  virtual absl::StatusOr<bool> release(const AttachmentId& id) {
    (void)id;
    return false;
  }

  // Whether a port may own these routed prefixes as far as the module's
  // tables go (the overlay: no remote node's pod CIDR or published prefix
  // overlaps them); FailedPrecondition naming the conflict if not.
  virtual absl::Status checkRoutedPrefixes(const std::vector<Ipv4Cidr>& v4, const std::vector<Ipv6Cidr>& v6) const {
    (void)v4;
    (void)v6;
    return absl::OkStatus();
  }
};

}  // namespace sluice
