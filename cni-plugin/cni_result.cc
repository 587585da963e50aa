// See cni_result.h.
#include "cni-plugin/cni_result.h"

#include <charconv>
#include <vector>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/netconf.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

absl::Status bad(std::string_view what, std::string_view why) {
  return cniError(ErrorCode::kDecodeFailure, cat(what, ": invalid result: ", why));
}

bool isCidr(std::string_view text) { return parseIpv4Cidr(text) || parseIpv6Cidr(text); }

bool isIp(std::string_view text) { return Ipv4Address::parse(text).has_value() || Ipv6Address::parse(text); }

// The spec's "version" of an "ips" entry (before 1.0.0) for a CIDR that
// isCidr() accepted.
std::string_view addressFamily(std::string_view cidr) { return parseIpv4Cidr(cidr) ? "4" : "6"; }

std::optional<Ipv4Assignment> assignmentOf(const json& ip) {
  std::optional<Ipv4Assignment> a = parseIpv4Cidr(ip.at("address").get<std::string>());
  if (!a) return std::nullopt;
  if (auto gw = ip.find("gateway"); gw != ip.end()) a->gateway = Ipv4Address::parse(gw->get<std::string>());
  return a;
}

std::optional<Ipv6Assignment> ipv6AssignmentOf(const json& ip) {
  std::optional<Ipv6Assignment> a = parseIpv6Cidr(ip.at("address").get<std::string>());
  if (!a) return std::nullopt;
  if (auto gw = ip.find("gateway"); gw != ip.end()) a->gateway = Ipv6Address::parse(gw->get<std::string>());
  return a;
}

// "len" of a CIDR: decimal, no leading zero, at most `max`.
std::optional<uint8_t> prefixLength(std::string_view len, unsigned max) {
  unsigned prefix = 0;
  auto [ptr, ec] = std::from_chars(len.data(), len.data() + len.size(), prefix);
  if (len.empty() || ec != std::errc() || ptr != len.data() + len.size() || prefix > max) return std::nullopt;
  if (len.size() > 1 && len[0] == '0') return std::nullopt;
  return static_cast<uint8_t>(prefix);
}

}  // namespace

std::optional<Ipv4Assignment> parseIpv4Cidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::optional<Ipv4Address> addr = Ipv4Address::parse(text.substr(0, slash));
  if (!addr) return std::nullopt;
  std::optional<uint8_t> prefix = prefixLength(text.substr(slash + 1), 32);
  if (!prefix) return std::nullopt;
  return Ipv4Assignment{*addr, *prefix, std::nullopt};
}

std::optional<Ipv6Assignment> parseIpv6Cidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::optional<Ipv6Address> addr = Ipv6Address::parse(text.substr(0, slash));
  if (!addr) return std::nullopt;
  std::optional<uint8_t> prefix = prefixLength(text.substr(slash + 1), 128);
  if (!prefix) return std::nullopt;
  return Ipv6Assignment{*addr, *prefix, std::nullopt};
}

absl::StatusOr<Result> parseResult(const json& doc, std::string_view what) {
  if (!doc.is_object()) return bad(what, "not a JSON object");
  Result r;
  if (auto it = doc.find("interfaces"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return bad(what, "\"interfaces\" must be an array");
    for (const json& iface : *it) {
      if (!iface.is_object()) return bad(what, "\"interfaces\" entries must be objects");
      auto name = iface.find("name");
      if (name == iface.end() || !name->is_string()) return bad(what, "interface without a string \"name\"");
      for (const char* key : {"mac", "sandbox", "socketPath", "pciID"}) {
        if (auto f = iface.find(key); f != iface.end() && !f->is_string()) {
          return bad(what, cat("interface \"", key, "\" must be a string"));
        }
      }
      r.interfaces.push_back(iface);
    }
  }
  if (auto it = doc.find("ips"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return bad(what, "\"ips\" must be an array");
    for (const json& ip : *it) {
      if (!ip.is_object()) return bad(what, "\"ips\" entries must be objects");
      auto addr = ip.find("address");
      if (addr == ip.end() || !addr->is_string() || !isCidr(addr->get<std::string>())) {
        return bad(what, "\"ips\" entry without a CIDR \"address\"");
      }
      if (auto gw = ip.find("gateway"); gw != ip.end() && (!gw->is_string() || !isIp(gw->get<std::string>()))) {
        return bad(what, "\"ips\" entry with an invalid \"gateway\"");
      }
      json entry = ip;
      if (auto family = entry.find("version"); family != entry.end()) {
        const std::string_view want = addressFamily(addr->get<std::string>());
        if (!family->is_string() || family->get<std::string>() != want) {
          return bad(what, cat("\"ips\" entry for ", addr->get<std::string>(), " must have \"version\": \"", want,
                               "\""));
        }
        entry.erase("version");
      }
      if (auto idx = ip.find("interface"); idx != ip.end()) {
        if (!idx->is_number_integer() || idx->get<int64_t>() < 0 ||
            static_cast<size_t>(idx->get<int64_t>()) >= r.interfaces.size()) {
          return bad(what, "\"ips\" entry with an \"interface\" index out of range");
        }
      }
      r.ips.push_back(std::move(entry));
    }
  }
  if (auto it = doc.find("routes"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return bad(what, "\"routes\" must be an array");
    for (const json& route : *it) {
      if (!route.is_object()) return bad(what, "\"routes\" entries must be objects");
      auto dst = route.find("dst");
      if (dst == route.end() || !dst->is_string() || !isCidr(dst->get<std::string>())) {
        return bad(what, "route without a CIDR \"dst\"");
      }
      if (auto gw = route.find("gw"); gw != route.end() && (!gw->is_string() || !isIp(gw->get<std::string>()))) {
        return bad(what, "route with an invalid \"gw\"");
      }
      r.routes.push_back(route);
    }
  }
  if (auto it = doc.find("dns"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return bad(what, "\"dns\" must be an object");
    r.dns = *it;
  }
  return r;
}

absl::StatusOr<AttachmentAddresses> Result::attachmentAddresses(std::string_view source) const {
  AttachmentAddresses out;
  std::vector<std::string> v4, v6;
  for (const json& ip : ips) {
    if (std::optional<Ipv4Assignment> a = assignmentOf(ip)) {
      if (!out.ipv4) out.ipv4 = a;
      v4.push_back(ip.at("address").get<std::string>());
    } else if (std::optional<Ipv6Assignment> b = ipv6AssignmentOf(ip)) {
      if (!out.ipv6) out.ipv6 = b;
      v6.push_back(ip.at("address").get<std::string>());
    }
  }
  if (v4.empty() && v6.empty()) {
    return cniError(ErrorCode::kInvalidConfig,
                    cat(source, " returned no address; sluiced needs an IPv4 or an IPv6 address (or both)"));
  }
  auto tooMany = [source](std::string_view family, const std::vector<std::string>& list) {
    std::string all;
    for (const std::string& a : list) all.append(all.empty() ? "" : ", ").append(a);
    return cniError(ErrorCode::kInvalidConfig,
                    cat(source, " returned ", list.size(), " ", family, " addresses (", all,
                        "); a sluice attachment takes at most one address per family: give the IPAM one range "
                        "set per family"));
  };
  if (v4.size() > 1) return tooMany("IPv4", v4);
  if (v6.size() > 1) return tooMany("IPv6", v6);
  return out;
}

AttachmentAddresses Result::addressesForInterface(size_t index) const {
  AttachmentAddresses out;
  for (const json& ip : ips) {
    auto idx = ip.find("interface");
    if (idx == ip.end() || static_cast<size_t>(idx->get<int64_t>()) != index) continue;
    if (!out.ipv4) out.ipv4 = assignmentOf(ip);
    if (!out.ipv6) out.ipv6 = ipv6AssignmentOf(ip);
  }
  return out;
}

std::optional<Ipv4Assignment> Result::ipv4ForInterface(size_t index) const {
  for (const json& ip : ips) {
    auto idx = ip.find("interface");
    if (idx == ip.end() || static_cast<size_t>(idx->get<int64_t>()) != index) continue;
    if (auto a = assignmentOf(ip)) return a;
  }
  return std::nullopt;
}

std::optional<size_t> Result::findInterface(std::string_view name, std::string_view sandbox) const {
  for (size_t i = 0; i < interfaces.size(); ++i) {
    const json& iface = interfaces[i];
    if (iface.at("name").get<std::string>() != name) continue;
    auto sb = iface.find("sandbox");
    if (!sandbox.empty() && sb != iface.end() && !sb->get<std::string>().empty() &&
        sb->get<std::string>() != sandbox) {
      continue;
    }
    return i;
  }
  return std::nullopt;
}

json Result::toJson(std::string_view cni_version) const {
  const SpecVersion& spec = specVersion(cni_version);
  json out = json::object();
  out["cniVersion"] = std::string(cni_version);
  json ifaces = json::array();
  for (const json& iface : interfaces) {
    json shaped = iface;
    if (spec.ip_family_field) {
      shaped = json::object();
      for (const char* key : {"name", "mac", "sandbox"}) {
        if (auto f = iface.find(key); f != iface.end()) shaped[key] = *f;
      }
    } else if (!spec.interface_11_fields) {
      for (const char* key : {"mtu", "socketPath", "pciID"}) shaped.erase(key);
    }
    ifaces.push_back(std::move(shaped));
  }
  if (!ifaces.empty()) out["interfaces"] = std::move(ifaces);
  out["ips"] = ips;
  if (spec.ip_family_field) {
    for (json& ip : out["ips"]) ip["version"] = std::string(addressFamily(ip.at("address").get<std::string>()));
  }
  if (!routes.empty()) out["routes"] = routes;
  out["dns"] = dns;
  return out;
}

}  // namespace sluice::cni
