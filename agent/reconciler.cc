#include "agent/reconciler.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "common/log.h"

namespace sluice::agent {
namespace {

TableNode fromProto(const v1::RemoteNode& n) {
  TableNode t;
  t.name = n.name();
  t.vtep = Ipv4Address::parse(n.vtep()).value_or(Ipv4Address{});
  t.mac = MacAddress::parse(n.mac());
  for (const std::string& c : n.pod_cidrs())
    if (auto cidr = Ipv4Cidr::parse(c)) t.pod_cidrs.push_back(*cidr);
  t.kubernetes = n.source() == v1::NODE_SOURCE_KUBERNETES;
  return t;
}

v1::RemoteNode toProto(const TableNode& t) {
  v1::RemoteNode n;
  n.set_name(t.name);
  n.set_vtep(t.vtep.toString());
  for (const Ipv4Cidr& c : t.pod_cidrs) n.add_pod_cidrs(c.toString());
  if (t.mac) n.set_mac(t.mac->toString());
  return n;
}

}  // namespace

Reconciler::Reconciler(const ReconcileSettings& settings, NodeCache& cache, SluicedClient& sluiced, KubeClient& kube,
                       std::atomic<bool>& stop)
    : settings_(settings),
      cache_(cache),
      sluiced_(sluiced),
      kube_(kube),
      stop_(stop),
      backoff_(settings.backoff_initial, settings.backoff_cap) {}

void Reconciler::logOnce(const std::string& key, const std::string& message) {
  if (cache_.firstTime(key)) logWarning(message);
}

void Reconciler::run() {
  uint64_t seen = 0;
  auto next_pass = std::chrono::steady_clock::now();
  while (!stop_) {
    // Woken by a change, or at the next pass's time; never sleeps so long
    // that a stop waits (a signal cannot wake a condition variable).
    const auto wake = std::min(next_pass, std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
    cache_.waitChange(seen, wake);
    if (stop_) break;
    NodeCache::Snapshot snap = cache_.snapshot();
    const auto now = std::chrono::steady_clock::now();
    if (snap.generation == seen && now < next_pass) continue;
    seen = snap.generation;
    if (!pass(snap)) {
      next_pass = now + backoff_.next();
      continue;
    }
    backoff_.reset();
    next_pass = now + settings_.resync_interval;
    if (next_expiry_) {
      // The steady clock's moment of the wall-clock expiry.
      const auto left = *next_expiry_ - std::chrono::system_clock::now();
      const auto at = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(left) +
                      std::chrono::milliseconds(10);
      if (at < next_pass) next_pass = std::max(at, now);
    }
  }
}

bool Reconciler::pass(const NodeCache::Snapshot& snap) {
  v1::ListNodesResponse table;
  if (grpc::Status s = sluiced_.listNodes(&table); !s.ok()) {
    cache_.count(AgentCounter::k_sluiced_errors);
    const std::string error = absl::StrCat("sluiced: ListNodes: ", s.error_message());
    if (last_error_ != error) logWarning(error, " (retrying)");
    last_error_ = error;
    return false;
  }
  if (!last_error_.empty() || !table.has_controller()) {
    // First contact, sluiced back after being unreachable, or a sluiced
    // that restarted (it has no report from us): the whole table is
    // compared below in any case; this is what to count and log.
    cache_.count(AgentCounter::k_sluiced_resyncs);
    logInfo("sluiced reachable: reconciling the whole remote-node table (", table.nodes_size(), " node(s) in it)");
  }
  last_error_.clear();
  publishOwnVtep(snap, table.overlay());
  if (snap.synced) {
    PlanInput in;
    in.own_name = settings_.own_name;
    in.vni = table.overlay().vni();
    in.nodes = snap.nodes;
    for (const v1::RemoteNode& n : table.nodes()) in.current.push_back(fromProto(n));
    in.now = std::chrono::system_clock::now();
    in.not_ready_grace = settings_.not_ready_grace;
    Plan plan = planReconcile(in);
    next_expiry_ = plan.next_expiry;
    gauges_.clear();
    gauges_["nodes_known"] = snap.nodes.size();
    gauges_["nodes_desired"] = plan.desired;
    for (const Plan::Skip& s : plan.skipped) {
      ++gauges_[absl::StrCat("skipped_", leftOutName(s.reason))];
      if (s.reason == LeftOut::kOwnNode || s.reason == LeftOut::kNoAnnotation || s.reason == LeftOut::kBadAnnotation)
        continue;  // logged with the Node's problems, or nothing to say
      logOnce(absl::StrCat("skip\x1f", s.name, "\x1f", leftOutName(s.reason), "\x1f", s.detail),
              absl::StrCat("node ", s.name, " left out (", leftOutName(s.reason), ")",
                           s.detail.empty() ? "" : ": ", s.detail));
    }
    apply(plan);
  }
  report(cache_.snapshot());
  return last_error_.empty();
}

void Reconciler::publishOwnVtep(const NodeCache::Snapshot& snap, const v1::Overlay& overlay) {
  auto own = snap.nodes.find(settings_.own_name);
  if (own == snap.nodes.end()) {
    if (snap.synced)
      logOnce("own-missing", absl::StrCat("this node ", settings_.own_name, " is not among the API's Nodes"));
    return;
  }
  VtepInfo want;
  auto vtep = Ipv4Address::parse(overlay.vtep());
  auto mac = MacAddress::parse(overlay.vtep_mac());
  if (!vtep || !mac || overlay.vni() == 0) return;
  want.vtep = *vtep;
  want.mac = *mac;
  want.vni = overlay.vni();
  if (own->second.internal_ip && *own->second.internal_ip != want.vtep)
    logOnce(absl::StrCat("own-ip\x1f", want.vtep.toString()),
            absl::StrCat("this node's InternalIP ", own->second.internal_ip->toString(), " is not its VTEP ",
                         want.vtep.toString(), " (the VTEP is published)"));
  if (own->second.vtep && *own->second.vtep == want) {
    // Seen on the Node: should it be changed or removed later, write it again.
    patched_value_.clear();
    return;
  }
  const std::string value = formatVtepAnnotation(want);
  if (value == patched_value_) return;  // written; the watch has not shown it yet
  // A merge patch of this one annotation: the Node's other annotations,
  // labels and status are not sent, so nothing else is touched.
  const nlohmann::json patch = {{"metadata", {{"annotations", {{kVtepAnnotation, value}}}}}};
  HttpResult r = kube_.patch("/api/v1/nodes/" + settings_.own_name, patch.dump(), "application/merge-patch+json");
  if (!r.ok()) {
    logOnce(absl::StrCat("patch\x1f", r.status, r.error),
            absl::StrCat("publishing this node's VTEP on Node ", settings_.own_name, ": ",
                         r.error.empty() ? absl::StrCat("HTTP ", r.status) : r.error));
    return;
  }
  patched_value_ = value;
  cache_.count(AgentCounter::k_own_node_patches);
  logInfo("published ", kVtepAnnotation, "=", value, " on Node ", settings_.own_name);
}

void Reconciler::apply(const Plan& plan) {
  auto put = [&](const TableNode& t) {
    v1::AddNodeResponse resp;
    grpc::Status s = sluiced_.putNode(toProto(t), &resp);
    if (!s.ok()) {
      if (s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        cache_.count(AgentCounter::k_sluiced_errors);
        last_error_ = absl::StrCat("sluiced: AddNode: ", s.error_message());
        return;
      }
      cache_.count(AgentCounter::k_apply_errors);
      logOnce(absl::StrCat("apply\x1f", t.name, "\x1f", s.error_message()),
              absl::StrCat("sluiced refused node ", t.name, ": ", s.error_message()));
      return;
    }
    if (resp.created()) {
      cache_.count(AgentCounter::k_nodes_added);
      logInfo("node ", t.name, " added: VTEP ", t.vtep.toString());
    } else if (resp.updated()) {
      cache_.count(AgentCounter::k_nodes_updated);
      logInfo("node ", t.name, " updated: VTEP ", t.vtep.toString());
    }
  };
  for (const std::string& name : plan.remove) {
    v1::DeleteNodeResponse resp;
    grpc::Status s = sluiced_.deleteNode(name, &resp);
    if (!s.ok()) {
      cache_.count(AgentCounter::k_sluiced_errors);
      last_error_ = absl::StrCat("sluiced: DeleteNode: ", s.error_message());
      continue;
    }
    if (resp.deleted()) {
      cache_.count(AgentCounter::k_nodes_removed);
      logInfo("node ", name, " removed");
    }
  }
  // Removals first (above): a CIDR or VTEP moving from a removed node to a
  // changed or new one is free by the time that one is put.
  for (const TableNode& t : plan.update) put(t);
  for (const TableNode& t : plan.add) put(t);
}

void Reconciler::report(const NodeCache::Snapshot& snap) {
  v1::ControllerState st;
  st.set_node_name(settings_.own_name);
  st.set_synced(snap.synced);
  st.set_resource_version(snap.resource_version);
  st.set_last_error(!snap.last_error.empty() ? snap.last_error : last_error_);
  for (const auto& [name, v] : snap.counters) (*st.mutable_counters())[name] = v;
  for (const auto& [name, v] : gauges_) (*st.mutable_counters())[name] = v;
  if (grpc::Status s = sluiced_.report(st); !s.ok()) {
    cache_.count(AgentCounter::k_sluiced_errors);
    last_error_ = absl::StrCat("sluiced: ReportController: ", s.error_message());
  }
}

}  // namespace sluice::agent
