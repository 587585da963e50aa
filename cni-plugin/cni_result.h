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

// One IPv6 entry of a result's "ips".
struct Ipv6Assignment {
  Ipv6Address address;                 // the interface's address
  uint8_t prefix_len = 0;              // of "address": "fd00::5/64"
  std::optional<Ipv6Address> gateway;  // "gateway" when given and IPv6
};

// The addresses of one attachment: sluiced gives a port at most one address
// per family (its ip and ipv6), so an attachment has at most one of each.
struct AttachmentAddresses {
  std::optional<Ipv4Assignment> ipv4;
  std::optional<Ipv6Assignment> ipv6;
};

struct Result {
  nlohmann::json interfaces = nlohmann::json::array();  // objects with "name"
  nlohmann::json ips = nlohmann::json::array();         // objects with "address"
  nlohmann::json routes = nlohmann::json::array();      // objects with "dst"
  nlohmann::json dns = nlohmann::json::object();

  // The entries of `ips` (whatever interface they name) as one attachment's
  // addresses. InvalidConfig (code 7) when there is none, or more than one
  // of a family; `source` names where they came from ("ipam host-local").
  absl::StatusOr<AttachmentAddresses> attachmentAddresses(std::string_view source) const;
  // The first IPv4 entry of `ips` whose "interface" is `index`.
  std::optional<Ipv4Assignment> ipv4ForInterface(size_t index) const;
  // The first IPv4 and the first IPv6 entry whose "interface" is `index`.
  AttachmentAddresses addressesForInterface(size_t index) const;
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
// "fd00:10:244::5/64" → address and prefix (host bits set, as an interface
// address has them); nullopt for anything else.
std::optional<Ipv6Assignment> parseIpv6Cidr(std::string_view text);

}  // namespace sluice::cni
