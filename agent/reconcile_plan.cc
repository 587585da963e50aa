#include "agent/reconcile_plan.h"

#include <absl/strings/str_cat.h>

#include <algorithm>

namespace sluice::agent {

const char* leftOutName(LeftOut r) {
  switch (r) {
    case LeftOut::kOwnNode: return "own_node";
    case LeftOut::kNoAnnotation: return "no_annotation";
    case LeftOut::kBadAnnotation: return "bad_annotation";
    case LeftOut::kNoPodCidr: return "no_pod_cidr";
    case LeftOut::kVniMismatch: return "vni_mismatch";
    case LeftOut::kNotReady: return "not_ready";
    case LeftOut::kOverlap: return "overlap";
    case LeftOut::kVtepConflict: return "vtep_conflict";
    case LeftOut::kForeignName: return "foreign_name";
  }
  return "unknown";
}

bool cidrsOverlap(const Ipv4Cidr& a, const Ipv4Cidr& b) { return a.contains(b.network) || b.contains(a.network); }

Plan planReconcile(const PlanInput& in) {
  Plan plan;
  std::map<std::string, const TableNode*> current;
  for (const TableNode& t : in.current) current[t.name] = &t;

  // What is taken before any Node of the API claims it: our own CIDRs, and
  // the static and API nodes' CIDRs and VTEPs. A handful, and they may
  // overlap each other (a misconfigured node): searched one by one.
  struct Claim {
    std::string owner;
    Ipv4Cidr cidr;
  };
  std::vector<Claim> claimed;
  std::map<uint32_t, std::string> vteps;
  if (auto own = in.nodes.find(in.own_name); own != in.nodes.end())
    for (const Ipv4Cidr& c : own->second.pod_cidrs) claimed.push_back({in.own_name, c});
  for (const TableNode& t : in.current) {
    if (t.kubernetes) continue;
    for (const Ipv4Cidr& c : t.pod_cidrs) claimed.push_back({t.name, c});
    vteps[t.vtep.value] = t.name;
  }
  // The API's Nodes' claims, thousands on a large cluster: a CIDR is taken
  // only when it overlaps nothing taken before, so these never overlap each
  // other, and ordered by first address their last addresses are ordered
  // too. The one claim that can overlap [first, last] is then the last one
  // that starts at or before `last`: one search instead of a scan.
  std::map<uint32_t, Claim> taken;  // by first address
  auto overlapping = [&](const Ipv4Cidr& c) -> const Claim* {
    for (const Claim& k : claimed)
      if (cidrsOverlap(c, k.cidr)) return &k;
    const uint32_t first = c.network.value, last = first | ~c.mask();
    auto after = taken.upper_bound(last);
    if (after == taken.begin()) return nullptr;
    const Claim& k = std::prev(after)->second;
    return (k.cidr.network.value | ~k.cidr.mask()) >= first ? &k : nullptr;
  };

  // Candidates: nodes already in the table keep what they have before new
  // ones claim anything; then by name (the map's order).
  std::vector<const KubeNode*> order;
  for (const auto& [name, n] : in.nodes) order.push_back(&n);
  std::stable_partition(order.begin(), order.end(), [&](const KubeNode* n) {
    auto it = current.find(n->name);
    return it != current.end() && it->second->kubernetes;
  });

  std::map<std::string, TableNode> desired;
  for (const KubeNode* n : order) {
    auto skip = [&](LeftOut r, std::string detail) { plan.skipped.push_back({n->name, r, std::move(detail)}); };
    if (n->name == in.own_name) {
      skip(LeftOut::kOwnNode, "this node");
      continue;
    }
    if (auto it = current.find(n->name); it != current.end() && !it->second->kubernetes) {
      skip(LeftOut::kForeignName, "a static or API node has this name");
      continue;
    }
    if (!n->vtep) {
      bool annotated = std::none_of(n->problems.begin(), n->problems.end(),
                                    [](const auto& p) { return p.first == NodeProblem::kNoAnnotation; });
      skip(annotated ? LeftOut::kBadAnnotation : LeftOut::kNoAnnotation, "");
      continue;
    }
    if (n->vtep->vni != in.vni) {
      skip(LeftOut::kVniMismatch, absl::StrCat("VNI ", n->vtep->vni, ", ours ", in.vni));
      continue;
    }
    if (n->pod_cidrs.empty()) {
      skip(LeftOut::kNoPodCidr, "");
      continue;
    }
    if (!n->ready) {
      // Without a transition time the grace period counts from now: the
      // node stays until a later plan sees it expire.
      if (n->ready_since && in.now - *n->ready_since >= in.not_ready_grace) {
        skip(LeftOut::kNotReady, "NotReady longer than the grace period");
        continue;
      }
      if (n->ready_since) {
        auto expiry = *n->ready_since + in.not_ready_grace;
        if (!plan.next_expiry || expiry < *plan.next_expiry) plan.next_expiry = expiry;
      }
    }
    std::string conflict;
    for (size_t i = 0; i < n->pod_cidrs.size() && conflict.empty(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (cidrsOverlap(n->pod_cidrs[i], n->pod_cidrs[j]))
          conflict = absl::StrCat(n->pod_cidrs[i].toString(), " overlaps its own ", n->pod_cidrs[j].toString());
    for (const Ipv4Cidr& c : n->pod_cidrs) {
      if (!conflict.empty()) break;
      if (const Claim* k = overlapping(c)) {
        conflict = absl::StrCat(c.toString(), " overlaps ", k->cidr.toString(), " of node ", k->owner);
        break;
      }
    }
    if (!conflict.empty()) {
      skip(LeftOut::kOverlap, conflict);
      continue;
    }
    if (auto v = vteps.find(n->vtep->vtep.value); v != vteps.end()) {
      skip(LeftOut::kVtepConflict, absl::StrCat("VTEP ", n->vtep->vtep.toString(), " is node ", v->second, "'s"));
      continue;
    }
    for (const Ipv4Cidr& c : n->pod_cidrs) taken[c.network.value] = {n->name, c};
    vteps[n->vtep->vtep.value] = n->name;
    desired[n->name] = TableNode{n->name, n->vtep->vtep, n->vtep->mac, n->pod_cidrs, true};
  }

  plan.desired = desired.size();
  for (const auto& [name, want] : desired) {
    auto it = current.find(name);
    if (it == current.end()) plan.add.push_back(want);
    else if (!(*it->second == want)) plan.update.push_back(want);
  }
  for (const TableNode& t : in.current)
    if (t.kubernetes && !desired.contains(t.name) && t.name != in.own_name) plan.remove.push_back(t.name);
  return plan;
}

}  // namespace sluice::agent
