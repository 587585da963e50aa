#include "agent/reconciler.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "agent/prefix_publish.h"
#include "common/log.h"

namespace sluice::agent {
namespace {

TableNode fromProto(const v1::RemoteNode& n) {
  TableNode t;
  t.name = n.name();
  t.vtep = Ipv4Address::parse(n.vtep()).value_or(Ipv4Address{});
  t.vtep6 = Ipv6Address::parse(n.vtep());
  t.mac = MacAddress::parse(n.mac());
  for (const std::string& c : n.pod_cidrs()) {
    if (auto v4 = Ipv4Cidr::parse(c)) t.pod_cidrs.push_back(*v4);
    else if (auto v6 = Ipv6Cidr::parse(c)) t.pod_cidrs_v6.push_back(*v6);
  }
  for (const std::string& c : n.routed_prefixes()) {
    if (auto v4 = Ipv4Cidr::parse(c)) t.routed_prefixes.push_back(*v4);
    else if (auto v6 = Ipv6Cidr::parse(c)) t.routed_prefixes_v6.push_back(*v6);
  }
  t.kubernetes = n.source() == v1::NODE_SOURCE_KUBERNETES;
  return t;
}

v1::RemoteNode toProto(const TableNode& t) {
  v1::RemoteNode n;
  n.set_name(t.name);
  n.set_vtep(t.vtepText());
  for (const Ipv4Cidr& c : t.pod_cidrs) n.add_pod_cidrs(c.toString());
  for (const Ipv6Cidr& c : t.pod_cidrs_v6) n.add_pod_cidrs(c.toString());
  for (const Ipv4Cidr& c : t.routed_prefixes) n.add_routed_prefixes(c.toString());
  for (const Ipv6Cidr& c : t.routed_prefixes_v6) n.add_routed_prefixes(c.toString());
  if (t.mac) n.set_mac(t.mac->toString());
  return n;
}

}  // namespace

// The status subresource of this node's own Node: the API server takes
// metadata (the annotations) from a patch there and keeps the spec, so the
// agent's role needs `patch` on nodes/status only, never on nodes (which
// would let its token change taints and cordon any Node).
std::string Reconciler::ownNodeStatusPath() const { return "/api/v1/nodes/" + settings_.own_name + "/status"; }

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
    // Ports come and go without a Node event: their prefixes are looked up
    // on their own schedule.
    if (now >= next_prefixes_) {
      publishOwnPrefixes(snap);
      next_prefixes_ = now + settings_.prefixes_interval;
    }
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

bool Reconciler::list() {
  v1::ListNodesResponse table;
  cache_.count(AgentCounter::k_sluiced_lists);
  if (grpc::Status s = sluiced_.listNodes(&table); !s.ok()) {
    cache_.count(AgentCounter::k_sluiced_errors);
    const std::string error = absl::StrCat("sluiced: ListNodes: ", s.error_message());
    if (last_error_ != error) logWarning(error, " (retrying)");
    last_error_ = error;
    return false;
  }
  if (!last_error_.empty() || !table.has_controller() || (!instance_.empty() && instance_ != table.instance())) {
    // First contact, sluiced back after being unreachable, or a sluiced
    // that restarted (it has no report from us): the whole table is
    // compared below in any case; this is what to count and log.
    cache_.count(AgentCounter::k_sluiced_resyncs);
    logInfo("sluiced reachable: reconciling the whole remote-node table (", table.nodes_size(), " node(s) in it)");
  }
  last_error_.clear();
  held_.emplace();
  for (const v1::RemoteNode& n : table.nodes()) held_->emplace(n.name(), fromProto(n));
  overlay_ = table.overlay();
  instance_ = table.instance();
  next_list_ = std::chrono::steady_clock::now() + settings_.resync_interval;
  return true;
}

void Reconciler::checkInstance(const std::string& instance) {
  if (instance == instance_) return;
  logInfo("sluiced restarted (instance ", instance_, " -> ", instance, "): reading its table again");
  held_.reset();
}

bool Reconciler::pass(const NodeCache::Snapshot& snap) {
  // Twice at most: a reply that shows a restarted sluiced drops the copy,
  // and the pass runs again on the table that sluiced holds now.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!held_ || std::chrono::steady_clock::now() >= next_list_) {
      if (!list()) return false;
    }
    publishOwnVtep(snap, overlay_);
    if (snap.synced) {
      PlanInput in;
      in.own_name = settings_.own_name;
      in.vni = overlay_.vni();
      in.allow_vtep_outside_internal_ips = settings_.allow_vtep_outside_internal_ips;
      in.nodes = snap.nodes;
      in.current.reserve(held_->size());
      for (const auto& [name, t] : *held_) in.current.push_back(t);
      in.now = std::chrono::system_clock::now();
      in.not_ready_grace = settings_.not_ready_grace;
      in.routed_prefix_ranges = settings_.routed_prefix_ranges;
      in.cluster_pod_cidrs = settings_.cluster_pod_cidrs;
      Plan plan = planReconcile(in);
      next_expiry_ = plan.next_expiry;
      gauges_.clear();
      gauges_["nodes_known"] = snap.nodes.size();
      gauges_["nodes_desired"] = plan.desired;
      for (const Plan::Skip& sk : plan.skipped) {
        ++gauges_[absl::StrCat("skipped_", leftOutName(sk.reason))];
        if (sk.reason == LeftOut::kOwnNode || sk.reason == LeftOut::kNoAnnotation ||
            sk.reason == LeftOut::kBadAnnotation)
          continue;  // logged with the Node's problems, or nothing to say
        logOnce(absl::StrCat("skip\x1f", sk.name, "\x1f", leftOutName(sk.reason), "\x1f", sk.detail),
                absl::StrCat("node ", sk.name, " left out (", leftOutName(sk.reason), ")",
                             sk.detail.empty() ? "" : ": ", sk.detail));
      }
      gauges_["refused_prefixes"] = plan.refused_prefixes.size();
      for (const Plan::RefusedPrefix& r : plan.refused_prefixes)
        logOnce(absl::StrCat("prefix\x1f", r.name, "\x1f", r.prefix, "\x1f", r.why),
                absl::StrCat("node ", r.name, ": routed prefix ", r.prefix, " refused: ", r.why));
      apply(plan);
    }
    report(cache_.snapshot());
    if (!last_error_.empty()) {
      held_.reset();  // what a failed call changed is unknown: read it again
      return false;
    }
    if (held_) return true;
  }
  return true;
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
  auto vtep6 = vtep ? std::nullopt : Ipv6Address::parse(overlay.vtep());
  auto mac = MacAddress::parse(overlay.vtep_mac());
  if ((!vtep && !vtep6) || !mac || overlay.vni() == 0) return;
  if (vtep) want.vtep = *vtep;
  want.vtep6 = vtep6;
  want.mac = *mac;
  want.vni = overlay.vni();
  // The other nodes' controllers leave out a node whose VTEP is none of its
  // InternalIPs, unless they are told the underlay is another network.
  if (!vtepIsInternalIp(own->second, want))
    logOnce(absl::StrCat("own-ip\x1f", want.vtepText()),
            absl::StrCat("this node's VTEP ", want.vtepText(), " is none of its Node's InternalIP addresses: "
                         "published, but other nodes leave this node out unless their agents run with "
                         "--allow-vtep-outside-internal-ips"));
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
  HttpResult r = kube_.patch(ownNodeStatusPath(), patch.dump(), "application/merge-patch+json");
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

void Reconciler::publishOwnPrefixes(const NodeCache::Snapshot& snap) {
  auto own = snap.nodes.find(settings_.own_name);
  if (own == snap.nodes.end() || !snap.synced) return;  // publishOwnVtep says why
  v1::ListPortsResponse ports;
  if (grpc::Status s = sluiced_.listPorts(&ports); !s.ok()) {
    // Unreachable sluiced: the table's calls report it; its prefixes stay as published.
    return;
  }
  std::vector<std::string> local;
  for (const v1::Port& p : ports.ports()) local.insert(local.end(), p.routed_prefixes().begin(), p.routed_prefixes().end());
  std::optional<nlohmann::json> patch = routedPrefixesPatch(local, own->second);
  if (!patch) {
    patched_prefixes_.reset();  // seen on the Node: a later change is written again
    return;
  }
  if (patched_prefixes_ == *patch) return;  // written; the watch has not shown it yet
  HttpResult r = kube_.patch(ownNodeStatusPath(), patch->dump(), "application/merge-patch+json");
  if (!r.ok()) {
    logOnce(absl::StrCat("patch-prefixes\x1f", r.status, r.error),
            absl::StrCat("publishing this node's routed prefixes on Node ", settings_.own_name, ": ",
                         r.error.empty() ? absl::StrCat("HTTP ", r.status) : r.error));
    return;
  }
  patched_prefixes_ = *patch;
  cache_.count(AgentCounter::k_own_node_patches);
  logInfo("published ", kRoutedPrefixesAnnotation, "=", (*patch)["metadata"]["annotations"][kRoutedPrefixesAnnotation].dump(),
          " on Node ", settings_.own_name);
}

void Reconciler::apply(const Plan& plan) {
  // Removals first: a CIDR or VTEP moving from a removed node to a changed
  // or new one is free by the time that one is put (sluiced applies a
  // batch's ops in order, and the batches in order).
  std::vector<const std::string*> removes;
  std::vector<const TableNode*> puts;
  for (const std::string& name : plan.remove) removes.push_back(&name);
  for (const TableNode& t : plan.update) puts.push_back(&t);
  for (const TableNode& t : plan.add) puts.push_back(&t);
  const size_t total = removes.size() + puts.size();
  const size_t batch = std::max<size_t>(1, settings_.max_batch);
  for (size_t from = 0; from < total && held_; from += batch) {
    const size_t to = std::min(total, from + batch);
    v1::ApplyNodesRequest req;
    for (size_t i = from; i < to; ++i) {
      v1::NodeOp* op = req.add_ops();
      if (i < removes.size()) {
        op->set_remove(*removes[i]);
      } else {
        *op->mutable_put() = toProto(*puts[i - removes.size()]);
        op->mutable_put()->set_source(v1::NODE_SOURCE_KUBERNETES);
        op->set_replace(true);
      }
    }
    v1::ApplyNodesResponse resp;
    cache_.count(AgentCounter::k_sluiced_batches);
    grpc::Status s = sluiced_.applyNodes(req, &resp);
    if (!s.ok() || resp.results_size() != req.ops_size()) {
      cache_.count(AgentCounter::k_sluiced_errors);
      last_error_ = absl::StrCat("sluiced: ApplyNodes: ",
                                 s.ok() ? absl::StrCat(resp.results_size(), " results for ", req.ops_size(), " ops")
                                        : s.error_message());
      return;
    }
    checkInstance(resp.instance());
    if (!held_) return;  // a restarted sluiced: the rest is planned again on its table
    for (size_t i = from; i < to; ++i) {
      const v1::NodeOpResult& r = resp.results(static_cast<int>(i - from));
      if (i < removes.size()) {
        const std::string& name = *removes[i];
        if (r.code() != grpc::StatusCode::OK) {
          cache_.count(AgentCounter::k_apply_errors);
          logOnce(absl::StrCat("apply\x1f", name, "\x1f", r.message()),
                  absl::StrCat("sluiced refused removing node ", name, ": ", r.message()));
          continue;
        }
        held_->erase(name);
        if (r.removed()) {
          cache_.count(AgentCounter::k_nodes_removed);
          logInfo("node ", name, " removed");
        }
        continue;
      }
      const TableNode& t = *puts[i - removes.size()];
      if (r.code() != grpc::StatusCode::OK) {
        cache_.count(AgentCounter::k_apply_errors);
        logOnce(absl::StrCat("apply\x1f", t.name, "\x1f", r.message()),
                absl::StrCat("sluiced refused node ", t.name, ": ", r.message()));
        continue;
      }
      (*held_)[t.name] = t;
      if (r.created()) {
        cache_.count(AgentCounter::k_nodes_added);
        logInfo("node ", t.name, " added: VTEP ", t.vtepText());
      } else if (r.updated()) {
        cache_.count(AgentCounter::k_nodes_updated);
        logInfo("node ", t.name, " updated: VTEP ", t.vtepText());
      }
    }
  }
}

void Reconciler::report(const NodeCache::Snapshot& snap) {
  v1::ControllerState st;
  st.set_node_name(settings_.own_name);
  st.set_synced(snap.synced);
  st.set_resource_version(snap.resource_version);
  st.set_last_error(!snap.last_error.empty() ? snap.last_error : last_error_);
  for (const auto& [name, v] : snap.counters) (*st.mutable_counters())[name] = v;
  for (const auto& [name, v] : gauges_) (*st.mutable_counters())[name] = v;
  v1::ReportControllerResponse resp;
  if (grpc::Status s = sluiced_.report(st, &resp); !s.ok()) {
    cache_.count(AgentCounter::k_sluiced_errors);
    last_error_ = absl::StrCat("sluiced: ReportController: ", s.error_message());
    return;
  }
  if (held_) checkInstance(resp.instance());
}

}  // namespace sluice::agent
