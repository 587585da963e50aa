#include "agent/node_parser.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "common/remote_node_limits.h"

namespace sluice::agent {
namespace {

using Json = nlohmann::json;

// The member `key` of `object` if it is an object holding one, else null.
const Json* member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const std::string* stringMember(const Json& object, const char* key) {
  const Json* m = member(object, key);
  return m != nullptr && m->is_string() ? m->get_ptr<const std::string*>() : nullptr;
}

// Adds a CIDR once (spec.podCIDR repeats podCIDRs[0]), and no more than kMaxPodCidrsPerFamily of a family
// (sluiced refuses a node with more): the later ones are ignored.
template <typename Cidr>
void addBounded(KubeNode& node, std::vector<Cidr>& cidrs, const Cidr& c) {
  if (std::find(cidrs.begin(), cidrs.end(), c) != cidrs.end()) return;
  if (cidrs.size() >= kMaxPodCidrsPerFamily) {
    node.problems.emplace_back(NodeProblem::kBadCidr, absl::StrCat("pod CIDR ", c.toString(), " is beyond ",
                                                                   kMaxPodCidrsPerFamily, " of its family: ignored"));
    return;
  }
  cidrs.push_back(c);
}

void addCidr(KubeNode& node, const std::string& text) {
  if (auto c = Ipv4Cidr::parse(text)) {
    addBounded(node, node.pod_cidrs, *c);
    return;
  }
  if (auto c = Ipv6Cidr::parse(text)) {
    addBounded(node, node.pod_cidrs_v6, *c);
    return;
  }
  node.problems.emplace_back(NodeProblem::kBadCidr, absl::StrCat("pod CIDR '", text, "' is no CIDR: ignored"));
}

std::string dumped(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

const char* nodeProblemName(NodeProblem p) {
  switch (p) {
    case NodeProblem::kNoAnnotation: return "no_annotation";
    case NodeProblem::kBadAnnotation: return "bad_annotation";
    case NodeProblem::kUnknownAnnotation: return "unknown_annotation";
    case NodeProblem::kBadCidr: return "bad_cidr";
    case NodeProblem::kNoPodCidr: return "no_pod_cidr";
    case NodeProblem::kBadRoutedPrefixes: return "bad_routed_prefixes";
  }
  return "unknown";
}

std::optional<std::chrono::system_clock::time_point> parseRfc3339(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS
  if (t.size() < 20) return std::nullopt;
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2), hour = digits(11, 2), minute = digits(14, 2),
       second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || t[4] != '-' || t[7] != '-' ||
      (t[10] != 'T' && t[10] != 't') || t[13] != ':' || t[16] != ':')
    return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60)
    return std::nullopt;
  size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (i == start) return std::nullopt;
  }
  long offset = 0;
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
    ++i;
  } else if (i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && t[i + 3] == ':') {
    auto oh = digits(i + 1, 2), om = digits(i + 4, 2);
    if (!oh || !om || *oh > 23 || *om > 59) return std::nullopt;
    offset = (t[i] == '+' ? 1 : -1) * (*oh * 3600L + *om * 60L);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != t.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  const time_t secs = ::timegm(&tm) - offset;
  // system_clock counts nanoseconds in 64 bits: from 1677 to 2262. A time
  // outside that is no time an API server sends; converting it would
  // overflow.
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  using std::chrono::system_clock;
  if (secs <= duration_cast<seconds>(system_clock::time_point::min().time_since_epoch()).count() ||
      secs >= duration_cast<seconds>(system_clock::time_point::max().time_since_epoch()).count())
    return std::nullopt;
  return system_clock::from_time_t(secs);
}

ParsedVtep parseVtepAnnotation(std::string_view value) {
  ParsedVtep out;
  Json j = Json::parse(value.begin(), value.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.error = "not a JSON object";
    return out;
  }
  const Json* version = member(j, "version");
  if (version == nullptr || !version->is_number_unsigned()) {
    out.error = "no \"version\" number";
    return out;
  }
  if (version->get<uint64_t>() != kVtepAnnotationVersion) {
    out.problem = NodeProblem::kUnknownAnnotation;
    out.error = absl::StrCat("version ", version->get<uint64_t>(), " (this controller reads ", kVtepAnnotationVersion,
                             ")");
    return out;
  }
  VtepInfo v;
  const std::string* vtep = stringMember(j, "vtep");
  auto ip = vtep != nullptr ? Ipv4Address::parse(*vtep) : std::nullopt;
  auto ip6 = vtep != nullptr && !ip ? Ipv6Address::parse(*vtep) : std::nullopt;
  if (!ip && !ip6) {
    out.error = "\"vtep\" is not an IPv4 or IPv6 address";
    return out;
  }
  if (ip) v.vtep = *ip;
  v.vtep6 = ip6;
  const std::string* mac = stringMember(j, "mac");
  auto m = mac != nullptr ? MacAddress::parse(*mac) : std::nullopt;
  if (!m || m->isMulticast() || m->isZero()) {
    out.error = "\"mac\" is not a unicast MAC";
    return out;
  }
  v.mac = *m;
  const Json* vni = member(j, "vni");
  if (vni == nullptr || !vni->is_number_unsigned() || vni->get<uint64_t>() < 1 || vni->get<uint64_t>() > 0xffffff) {
    out.error = "\"vni\" is not in 1..16777215";
    return out;
  }
  v.vni = static_cast<uint32_t>(vni->get<uint64_t>());
  out.vtep = v;
  return out;
}

std::string formatVtepAnnotation(const VtepInfo& v) {
  return Json{{"version", v.version}, {"vtep", v.vtepText()}, {"mac", v.mac.toString()}, {"vni", v.vni}}.dump();
}

ParsedNode parseNode(const Json& object) {
  ParsedNode out;
  const Json* metadata = member(object, "metadata");
  const std::string* name = metadata != nullptr ? stringMember(*metadata, "name") : nullptr;
  if (name == nullptr || name->empty()) {
    out.error = "a Node without metadata.name";
    return out;
  }
  KubeNode node;
  node.name = *name;
  if (const std::string* rv = stringMember(*metadata, "resourceVersion")) node.resource_version = *rv;

  const Json* spec = member(object, "spec");
  if (spec != nullptr) {
    if (const Json* list = member(*spec, "podCIDRs"); list != nullptr && list->is_array()) {
      for (const Json& c : *list) {
        if (c.is_string()) addCidr(node, c.get<std::string>());
        else node.problems.emplace_back(NodeProblem::kBadCidr, absl::StrCat("podCIDRs entry ", dumped(c)));
      }
    }
    if (const std::string* one = stringMember(*spec, "podCIDR")) addCidr(node, *one);
  }
  if (node.pod_cidrs.empty()) node.problems.emplace_back(NodeProblem::kNoPodCidr, "no IPv4 pod CIDR");

  const Json* status = member(object, "status");
  if (status != nullptr) {
    if (const Json* addresses = member(*status, "addresses"); addresses != nullptr && addresses->is_array()) {
      for (const Json& a : *addresses) {
        const std::string* type = stringMember(a, "type");
        const std::string* address = stringMember(a, "address");
        if (type == nullptr || address == nullptr || *type != "InternalIP") continue;
        if (auto v4 = Ipv4Address::parse(*address)) node.internal_ips.push_back(*v4);
        else if (auto v6 = Ipv6Address::parse(*address)) node.internal_ips_v6.push_back(*v6);
      }
    }
    if (const Json* conditions = member(*status, "conditions"); conditions != nullptr && conditions->is_array()) {
      for (const Json& c : *conditions) {
        const std::string* type = stringMember(c, "type");
        if (type == nullptr || *type != "Ready") continue;
        const std::string* st = stringMember(c, "status");
        node.ready = st != nullptr && *st == "True";
        if (const std::string* since = stringMember(c, "lastTransitionTime")) node.ready_since = parseRfc3339(*since);
      }
    }
  }

  const Json* annotations = member(*metadata, "annotations");
  const std::string* vtep = annotations != nullptr ? stringMember(*annotations, kVtepAnnotation) : nullptr;
  if (vtep == nullptr) {
    if (annotations != nullptr && member(*annotations, kVtepAnnotation) != nullptr)
      node.problems.emplace_back(NodeProblem::kBadAnnotation, "sluice.dev/vtep is not a string");
    else
      node.problems.emplace_back(NodeProblem::kNoAnnotation, "no sluice.dev/vtep annotation");
  } else {
    ParsedVtep v = parseVtepAnnotation(*vtep);
    if (v.vtep) node.vtep = *v.vtep;
    else node.problems.emplace_back(v.problem, absl::StrCat("sluice.dev/vtep: ", v.error));
  }
  // Absent: the node's pods own no prefixes. Unreadable: none of them is
  // routed (its pod CIDRs still are).
  if (const Json* prefixes = annotations != nullptr ? member(*annotations, kRoutedPrefixesAnnotation) : nullptr) {
    std::string why = "is not a string";
    if (!prefixes->is_string() || !parseRoutedPrefixesAnnotation(prefixes->get<std::string>(), node.routed_prefixes,
                                                                 node.routed_prefixes_v6, &why))
      node.problems.emplace_back(NodeProblem::kBadRoutedPrefixes,
                                 absl::StrCat(kRoutedPrefixesAnnotation, " ", why, ": ignored"));
  }
  out.node = std::move(node);
  return out;
}

bool parseRoutedPrefixesAnnotation(std::string_view value, std::vector<Ipv4Cidr>& v4, std::vector<Ipv6Cidr>& v6,
                                   std::string* why) {
  auto fail = [&](std::string reason) {
    if (why != nullptr) *why = std::move(reason);
    return false;
  };
  Json j = Json::parse(value.begin(), value.end(), nullptr, false);
  std::vector<Ipv4Cidr> got4;
  std::vector<Ipv6Cidr> got6;
  if (j.is_discarded() || !j.is_array()) return fail("is not a JSON array of CIDRs");
  // sluiced refuses a node with more, so none of them could be routed.
  if (j.size() > kMaxRoutedPrefixesPerNode)
    return fail(absl::StrCat("lists ", j.size(), " prefixes, more than ", kMaxRoutedPrefixesPerNode));
  for (const Json& c : j) {
    if (!c.is_string()) return fail("is not a JSON array of CIDRs");
    const std::string& text = c.get_ref<const std::string&>();
    if (auto a = Ipv4Cidr::parse(text)) got4.push_back(*a);
    else if (auto b = Ipv6Cidr::parse(text)) got6.push_back(*b);
    else return fail(absl::StrCat("is not a JSON array of CIDRs ('", text, "')"));
  }
  v4 = std::move(got4);
  v6 = std::move(got6);
  return true;
}

std::string formatRoutedPrefixesAnnotation(std::vector<std::string> prefixes) {
  std::sort(prefixes.begin(), prefixes.end());
  return Json(prefixes).dump();
}

std::optional<WatchEvent> parseWatchEvent(std::string_view line, std::string* error) {
  Json j = Json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "a watch line that is not a JSON object";
    return std::nullopt;
  }
  const std::string* type = stringMember(j, "type");
  const Json* object = member(j, "object");
  if (type == nullptr || object == nullptr || !object->is_object()) {
    *error = "a watch event without type or object";
    return std::nullopt;
  }
  WatchEvent e;
  if (*type == "ADDED") e.type = WatchEvent::Type::kAdded;
  else if (*type == "MODIFIED") e.type = WatchEvent::Type::kModified;
  else if (*type == "DELETED") e.type = WatchEvent::Type::kDeleted;
  else if (*type == "BOOKMARK") e.type = WatchEvent::Type::kBookmark;
  else if (*type == "ERROR") e.type = WatchEvent::Type::kError;
  else {
    *error = absl::StrCat("a watch event of unknown type '", *type, "'");
    return std::nullopt;
  }
  if (e.type == WatchEvent::Type::kError) {
    // A Status object: {"kind": "Status", "code": 410, "message": ...}.
    const Json* code = member(*object, "code");
    e.error_code = code != nullptr && code->is_number_integer() ? code->get<int>() : 0;
    if (const std::string* m = stringMember(*object, "message")) e.error_message = *m;
    return e;
  }
  const Json* metadata = member(*object, "metadata");
  if (const std::string* rv = metadata != nullptr ? stringMember(*metadata, "resourceVersion") : nullptr)
    e.resource_version = *rv;
  if (e.type == WatchEvent::Type::kBookmark) {
    if (e.resource_version.empty()) {
      *error = "a BOOKMARK without resourceVersion";
      return std::nullopt;
    }
    return e;
  }
  ParsedNode n = parseNode(*object);
  if (!n.node) {
    *error = n.error;
    return std::nullopt;
  }
  e.node = std::move(n.node);
  return e;
}

}  // namespace sluice::agent
