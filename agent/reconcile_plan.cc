#include "agent/reconcile_plan.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <utility>

#include "common/vtep_address.h"

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
    case LeftOut::kBadVtep: return "bad_vtep";
    case LeftOut::kVtepNotInternalIp: return "vtep_not_internal_ip";
  }
  return "unknown";
}

bool vtepIsInternalIp(const KubeNode& node, const VtepInfo& vtep) {
  if (vtep.vtep6)
    return std::find(node.internal_ips_v6.begin(), node.internal_ips_v6.end(), *vtep.vtep6) !=
           node.internal_ips_v6.end();
  return std::find(node.internal_ips.begin(), node.internal_ips.end(), vtep.vtep) != node.internal_ips.end();
}

namespace {

// Why a Node's VTEP can be no node's (empty: it can): its address class, or
// inside the pod CIDRs and routed prefixes of the Node itself or of this
// node, where the tunnel would lead to a pod.
std::string vtepProblem(const KubeNode& n, const KubeNode* own) {
  const VtepInfo& v = *n.vtep;
  if (std::optional<std::string> p = v.vtep6 ? vtepAddressClassProblem(*v.vtep6) : vtepAddressClassProblem(v.vtep))
    return absl::StrCat("VTEP ", v.vtepText(), " is ", *p);
  for (const KubeNode* holder : {&n, own}) {
    if (holder == nullptr) continue;
    const char* whose = holder == &n ? "its own" : "this node's";
    if (v.vtep6) {
      for (const std::vector<Ipv6Cidr>* list : {&holder->pod_cidrs_v6, &holder->routed_prefixes_v6})
        for (const Ipv6Cidr& c : *list)
          if (c.contains(*v.vtep6)) return absl::StrCat("VTEP ", v.vtepText(), " is inside ", whose, " ", c.toString());
    } else {
      for (const std::vector<Ipv4Cidr>* list : {&holder->pod_cidrs, &holder->routed_prefixes})
        for (const Ipv4Cidr& c : *list)
          if (c.contains(v.vtep)) return absl::StrCat("VTEP ", v.vtepText(), " is inside ", whose, " ", c.toString());
    }
  }
  return {};
}

// A CIDR's first and last address, as keys that order as the addresses do.
uint32_t firstOf(const Ipv4Cidr& c) { return c.network.value; }
uint32_t lastOf(const Ipv4Cidr& c) { return c.broadcast().value; }
Ipv6Address firstOf(const Ipv6Cidr& c) { return c.network; }
Ipv6Address lastOf(const Ipv6Cidr& c) { return lastAddress(c); }

// Who holds which pod CIDRs of one family.
template <typename Cidr>
class Claims {
 public:
  struct Claim {
    std::string owner;
    Cidr cidr;
  };

  // What is taken before any Node of the API claims it: our own CIDRs, and
  // the static and API nodes'. A handful, and they may overlap each other
  // (a misconfigured node): searched one by one.
  void reserve(const std::string& owner, const Cidr& c) { reserved_.push_back({owner, c}); }
  // The API's Nodes' claims, thousands on a large cluster: a CIDR is taken
  // only when it overlaps nothing taken before, so these never overlap each
  // other, and ordered by first address their last addresses are ordered
  // too. The one claim that can overlap [first, last] is then the last one
  // that starts at or before `last`: one search instead of a scan.
  void take(const std::string& owner, const Cidr& c) { taken_[firstOf(c)] = {owner, c}; }

  const Claim* overlapping(const Cidr& c) const {
    for (const Claim& k : reserved_)
      if (cidrsOverlap(c, k.cidr)) return &k;
    auto after = taken_.upper_bound(lastOf(c));
    if (after == taken_.begin()) return nullptr;
    const Claim& k = std::prev(after)->second;
    return !(lastOf(k.cidr) < firstOf(c)) ? &k : nullptr;
  }

  // Why a Node's CIDRs of this family cannot be had (empty: they can).
  std::string conflict(const std::vector<Cidr>& cidrs) const {
    for (size_t i = 0; i < cidrs.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (cidrsOverlap(cidrs[i], cidrs[j]))
          return absl::StrCat(cidrs[i].toString(), " overlaps its own ", cidrs[j].toString());
    for (const Cidr& c : cidrs)
      if (const Claim* k = overlapping(c))
        return absl::StrCat(c.toString(), " overlaps ", k->cidr.toString(), " of node ", k->owner);
    return {};
  }

 private:
  std::vector<Claim> reserved_;
  std::map<decltype(firstOf(std::declval<Cidr>())), Claim> taken_;  // by first address
};

// Why a Node's routed prefix is not routed here (empty: it is).
template <typename Cidr>
std::string prefixRefusal(const PlanInput& in, const Cidr& c) {
  if (std::optional<std::string> special = specialRangeOf(c)) return absl::StrCat("overlaps ", *special);
  if (auto pods = in.cluster_pod_cidrs.overlapping(c))
    return absl::StrCat("overlaps the cluster's pod CIDRs ", pods->toString());
  if (in.routed_prefix_ranges.empty()) return "no routed prefix ranges are allowed (--routed-prefix-ranges)";
  if (!in.routed_prefix_ranges.holds(c))
    return absl::StrCat("outside the allowed routed prefix ranges ", in.routed_prefix_ranges.toString());
  return {};
}

// `prefixes` without those the policy refuses, each refusal noted in `plan`.
template <typename Cidr>
std::vector<Cidr> allowedPrefixes(const PlanInput& in, const std::string& name, const std::vector<Cidr>& prefixes,
                                  Plan& plan) {
  std::vector<Cidr> out;
  for (const Cidr& c : prefixes) {
    if (std::string why = prefixRefusal(in, c); !why.empty())
      plan.refused_prefixes.push_back({name, c.toString(), std::move(why)});
    else
      out.push_back(c);
  }
  return out;
}

}  // namespace

Plan planReconcile(const PlanInput& in) {
  Plan plan;
  std::map<std::string, const TableNode*> current;
  for (const TableNode& t : in.current) current[t.name] = &t;

  // The CIDRs taken, per family (see Claims), and the static and API
  // nodes' VTEPs.
  Claims<Ipv4Cidr> claims;
  Claims<Ipv6Cidr> claims6;
  std::map<std::string, std::string> vteps;  // by VTEP text, either family
  if (auto own = in.nodes.find(in.own_name); own != in.nodes.end()) {
    for (const Ipv4Cidr& c : own->second.pod_cidrs) claims.reserve(in.own_name, c);
    for (const Ipv6Cidr& c : own->second.pod_cidrs_v6) claims6.reserve(in.own_name, c);
    for (const Ipv4Cidr& c : own->second.routed_prefixes) claims.reserve(in.own_name, c);
    for (const Ipv6Cidr& c : own->second.routed_prefixes_v6) claims6.reserve(in.own_name, c);
  }
  for (const TableNode& t : in.current) {
    if (t.kubernetes) continue;
    for (const Ipv4Cidr& c : t.pod_cidrs) claims.reserve(t.name, c);
    for (const Ipv6Cidr& c : t.pod_cidrs_v6) claims6.reserve(t.name, c);
    for (const Ipv4Cidr& c : t.routed_prefixes) claims.reserve(t.name, c);
    for (const Ipv6Cidr& c : t.routed_prefixes_v6) claims6.reserve(t.name, c);
    vteps[t.vtepText()] = t.name;
  }

  // Candidates: nodes already in the table keep what they have before new
  // ones claim anything; then by name (the map's order).
  std::vector<const KubeNode*> order;
  for (const auto& [name, n] : in.nodes) order.push_back(&n);
  std::stable_partition(order.begin(), order.end(), [&](const KubeNode* n) {
    auto it = current.find(n->name);
    return it != current.end() && it->second->kubernetes;
  });

  const KubeNode* own = nullptr;
  if (auto it = in.nodes.find(in.own_name); it != in.nodes.end()) own = &it->second;

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
    if (std::string problem = vtepProblem(*n, own); !problem.empty()) {
      skip(LeftOut::kBadVtep, problem);
      continue;
    }
    if (!in.allow_vtep_outside_internal_ips && !vtepIsInternalIp(*n, *n->vtep)) {
      skip(LeftOut::kVtepNotInternalIp, absl::StrCat("VTEP ", n->vtep->vtepText(), " is none of its InternalIPs"));
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
    // Its pod CIDRs and the routed prefixes the policy allows together:
    // none may overlap another's.
    const std::vector<Ipv4Cidr> prefixes = allowedPrefixes(in, n->name, n->routed_prefixes, plan);
    const std::vector<Ipv6Cidr> prefixes6 = allowedPrefixes(in, n->name, n->routed_prefixes_v6, plan);
    std::vector<Ipv4Cidr> cidrs = n->pod_cidrs;
    cidrs.insert(cidrs.end(), prefixes.begin(), prefixes.end());
    std::vector<Ipv6Cidr> cidrs6 = n->pod_cidrs_v6;
    cidrs6.insert(cidrs6.end(), prefixes6.begin(), prefixes6.end());
    std::string conflict = claims.conflict(cidrs);
    if (conflict.empty()) conflict = claims6.conflict(cidrs6);
    if (!conflict.empty()) {
      skip(LeftOut::kOverlap, conflict);
      continue;
    }
    if (auto v = vteps.find(n->vtep->vtepText()); v != vteps.end()) {
      skip(LeftOut::kVtepConflict, absl::StrCat("VTEP ", n->vtep->vtepText(), " is node ", v->second, "'s"));
      continue;
    }
    for (const Ipv4Cidr& c : cidrs) claims.take(n->name, c);
    for (const Ipv6Cidr& c : cidrs6) claims6.take(n->name, c);
    vteps[n->vtep->vtepText()] = n->name;
    desired[n->name] = TableNode{n->name,         n->vtep->vtep, n->vtep->mac,   n->pod_cidrs,
                                 n->pod_cidrs_v6, true,          n->vtep->vtep6, prefixes,
                                 prefixes6};
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
