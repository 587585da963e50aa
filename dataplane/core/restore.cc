// The checkpoint's two directions (checkpoint.h): every change writes it
// before it returns, and restore brings its ports back at start, each
// record checked against the configuration sluiced runs with now.
#include <absl/strings/str_cat.h>

#include "common/log.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/port_files.h"

namespace sluice {
namespace {

// A port checkpointed at a number a module's own port has now (the
// overlay's uplink, configured since) must not come back there: the PMD
// would take the pod's traffic for the underlay's and the pod's output would
// leave unencapsulated onto it. Such ports come back last, at the lowest
// number left free (a pod knows its socket, never its port number).
bool heldByModule(const PortTable& ports, uint16_t port_no) {
  const PortEntry* e = ports.find(port_no);
  return e != nullptr && !e->isPod();
}

std::vector<const CheckpointPort*> orderForRestore(const std::vector<CheckpointPort>& records,
                                                   const PortTable& ports) {
  std::vector<const CheckpointPort*> in_order;
  for (const CheckpointPort& rec : records)
    if (!heldByModule(ports, rec.port_no)) in_order.push_back(&rec);
  for (const CheckpointPort& rec : records)
    if (heldByModule(ports, rec.port_no)) in_order.push_back(&rec);
  return in_order;
}

}  // namespace

void DataplaneControl::setCheckpointStore(CheckpointStore* store) {
  Change change(*this);
  checkpoint_ = store;
}

absl::Status DataplaneControl::writeCheckpointLocked(const CheckpointPort* pending) {
  if (checkpoint_ == nullptr) return absl::OkStatus();
  CheckpointState state;
  ports_.forEachPod([&](uint16_t n, const PortEntry& e) {
    // A vdev port stands in for a pod in benchmarks and tests (a pcap file,
    // net_null): nothing outside sluiced holds it, so nothing to restore.
    if (e.request.kind != PortKind::kDpdkVdev) state.ports.push_back({n, e.raw, e.socket_path, e.netns});
  });
  if (pending != nullptr) state.ports.push_back(*pending);
  state.sections = unclaimed_sections_;
  for (const ControlModule* m : modules_)
    if (!m->checkpointSection().empty()) state.sections[std::string(m->checkpointSection())] = m->checkpointRecords();
  absl::Status s = checkpoint_->save(state);
  checkpoint_dirty_ = !s.ok();
  // Too large to be read back at the next start: the caller's change is what
  // must not happen (RESOURCE_EXHAUSTED), the directory is fine.
  if (absl::IsResourceExhausted(s)) {
    logError(s.message());
    return s;
  }
  if (!s.ok()) {
    const std::string why = absl::StrCat("state directory ", checkpoint_->dir(), " cannot be written: ", s.message());
    logError(why);
    return absl::InternalError(why);
  }
  return absl::OkStatus();
}

RestoreSummary DataplaneControl::restore(const CheckpointState& state) {
  Change change(*this);
  RestoreSummary summary;
  restoreSections(state);
  for (const CheckpointPort* saved : orderForRestore(state.ports, ports_)) restorePort(*saved, summary);
  restored_ports_ = summary.restored;
  gc_collected_ += summary.garbage_collected;
  republishLocked();
  // Whatever could not be restored is forgotten now, on disk too.
  if (!writeCheckpointLocked().ok())
    logError("the restored ports keep working; AddPort and DeletePort fail until the state directory can be written");
  return summary;
}

void DataplaneControl::restoreSections(const CheckpointState& state) {
  // Each module takes its section back; the others' are kept as they were
  // (a later sluiced with that module configured again takes them back).
  unclaimed_sections_ = state.sections;
  for (ControlModule* m : modules_) {
    const std::string section(m->checkpointSection());
    if (section.empty()) continue;
    auto it = unclaimed_sections_.find(section);
    m->restore(it != unclaimed_sections_.end() ? it->second : nlohmann::json::array());
    if (it != unclaimed_sections_.end()) unclaimed_sections_.erase(it);
  }
}

void DataplaneControl::restorePort(CheckpointPort rec, RestoreSummary& summary) {
  if (heldByModule(ports_, rec.port_no)) {
    const std::optional<uint16_t> free = ports_.freePortNumber();
    logWarning("checkpointed port ", rec.port_no, " (", rec.request.container_id, "/", rec.request.ifname,
               ") has the ", ports_.find(rec.port_no)->module_label, "'s number now; ",
               free ? absl::StrCat("restored as port ", *free) : std::string("no other number is free"));
    if (!free) {
      ++summary.dropped;
      return;
    }
    rec.port_no = *free;
  }
  const std::string who =
      absl::StrCat("checkpointed port ", rec.port_no, " (", rec.request.container_id, "/", rec.request.ifname, ")");
  auto drop = [&](const absl::Status& why) {
    logError(who, " not restored: ", why.message());
    ++summary.dropped;
  };
  const absl::StatusOr<PortRequest> req = checkRestored(rec, who);
  if (!req.ok()) return drop(req.status());
  if (netnsVanished(rec.netns)) {
    // The pod went away while we were down: nothing to restore.
    logInfo(who, " garbage-collected: pod netns ", rec.netns, " no longer exists");
    removeOrphanedPortFiles(config_.socket_dir, *req, rec.socket_path);
    ++summary.garbage_collected;
    return;
  }
  if (absl::Status s = createPort(rec.port_no, *req, rec.request, rec.netns, rec.socket_path); !s.ok())
    return drop(s);
  ++summary.restored;
  logInfo("port ", rec.port_no, " restored: ", rec.request.container_id, "/", rec.request.ifname, " ",
          rec.request.ip, " ", req->vhost_mode == VhostMode::kClient ? "client" : "server", " ", rec.socket_path);
}

absl::StatusOr<PortRequest> DataplaneControl::checkRestored(const CheckpointPort& rec, const std::string& who) const {
  absl::StatusOr<PortRequest> req =
      parsePortRequest(rec.request, config_.pod_cidr, config_.gateway, {}, v6_cidr_, config_.port_mtu);
  if (!req.ok()) return req;
  // Restarted with fewer PMDs: the port comes back, placed by sluiced.
  if (req->pmd && *req->pmd >= pmds_.size()) {
    logWarning(who, ": pinned to PMD ", *req->pmd, ", which this sluiced does not run; placed instead");
    req->pmd.reset();
  }
  // Restarted with a lower max-queues-per-port: the port comes back with as
  // many queues as the node now allows.
  if (req->queues > config_.max_queues_per_port) {
    logWarning(who, ": ", req->queues, " queues, more than max-queues-per-port ", config_.max_queues_per_port,
               "; opened with ", config_.max_queues_per_port);
    req->queues = config_.max_queues_per_port;
  }
  if (req->kind != PortKind::kVhostUser) return absl::InvalidArgumentError("not a vhost-user port");
  if (rec.port_no >= config_.max_ports)
    return absl::InvalidArgumentError(absl::StrCat("port number beyond max-ports ", config_.max_ports));
  if (ports_.find(rec.port_no) != nullptr)
    return absl::AlreadyExistsError("port number taken twice in the checkpoint");
  if (ports_.portOf(req->attachment) || !ports_.findCollision(*req).ok())
    return absl::AlreadyExistsError("its attachment, IP, IPv6 or MAC is already restored for another port");
  if (absl::Status s = checkRoutedPrefixes(*req); !s.ok()) return s;
  if (!vhostSocketPathMatches(config_.socket_dir, *req, rec.socket_path))
    return absl::InvalidArgumentError(absl::StrCat("its socket ", rec.socket_path, " is not where socket-dir ",
                                                   config_.socket_dir, " puts it now"));
  return req;
}

}  // namespace sluice
