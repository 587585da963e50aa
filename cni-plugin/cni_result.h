// The CNI result (the spec's "Success" object, in any version of
// kSpecVersions): validating one that comes from outside (an IPAM plugin's
// output, a runtime's prevResult) and producing ours. A Result holds the
// 1.1.0 form whatever version it was read in; toJson() gives the form of the
// version asked for. Entries are kept as JSON objects after validation so that
// fields of newer spec revisions (route "mtu", "table", ...) pass through
// unchanged. Used by the single thread of the sluice-cni process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "common/net_address.h"

namespace sluice::cni {

// One IPv4 entry of a result's "ips".
struct Ipv4Assignment {
  Ipv4Address address;                 // the interface's address
  uint8_t prefix_len = 0;              // of "address": "a.b.c.d/len"
  std::optional<Ipv4Address> gateway;  // "gateway" when given and IPv4
};

struct Result {
  nlohmann::json interfaces = nlohmann::json::array();  // objects with "name"
  nlohmann::json ips = nlohmann::json::array();         // objects with "address"
  nlohmann::json routes = nlohmann::json::array();      // objects with "dst"
  nlohmann::json dns = nlohmann::json::object();

  // The first IPv4 entry of `ips` (whatever interface it names).
  std::optional<Ipv4Assignment> firstIpv4() const;
  // The first IPv4 entry of `ips` whose "interface" is `index`.
  std::optional<Ipv4Assignment> ipv4ForInterface(size_t index) const;
  // Index of the interface named `name` (and in `sandbox` when both are set).
  std::optional<size_t> findInterface(std::string_view name, std::string_view sandbox) const;

  // The result in the form of `cni_version` (one of kSpecVersions), as the
  // spec converts between versions: before 1.0.0 every "ips" entry gets its
  // address family ("version": "4" | "6") and interfaces keep only name,
  // mac and sandbox; before 1.1.0 interfaces lose mtu, socketPath and pciID.
  nlohmann::json toJson(std::string_view cni_version) const;
};

// Validates the shape of a result: every "ips" entry has an "address" in
// CIDR form (IPv4 or IPv6) and optional "gateway" / "interface" of the right
// type (the index in range when interfaces are given), every route has a
// CIDR "dst", "dns" is an object. An "ips" entry's "version" (results
// before 1.0.0) must be "4" or "6" and match its address; it is dropped, as
// the spec does when converting such a result to 1.0.0. `what` names the
// source in messages.
// Errors carry code 6 (the content could not be decoded as a result).
absl::StatusOr<Result> parseResult(const nlohmann::json& doc, std::string_view what);

// "10.1.2.3/24" → address and prefix; nullopt for anything else.
std::optional<Ipv4Assignment> parseIpv4Cidr(std::string_view text);

}  // namespace sluice::cni
