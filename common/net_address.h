// Value types for the addresses Sluice handles everywhere (IPv4, IPv6, MAC,
// CIDRs of both families),
// with strict parsing from and formatting to their usual text forms.
// Shared by sluiced, sluicectl and sluice-cni; no DPDK, usable from any thread.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// An IPv4 address held in host byte order (so arithmetic and masks are plain).
struct Ipv4Address {
  uint32_t value = 0;

  // Accepts exactly four decimal octets 0-255 separated by dots, no leading
  // zeros beyond a single "0", nothing before or after.
  static std::optional<Ipv4Address> parse(std::string_view text);
  std::string toString() const;
  uint32_t networkOrder() const;
  static Ipv4Address fromNetworkOrder(uint32_t be);

  auto operator<=>(const Ipv4Address&) const = default;
};

struct Ipv6Address;

struct MacAddress {
  std::array<uint8_t, 6> bytes{};

  // Accepts six two-digit hex octets separated by ':' (either case).
  static std::optional<MacAddress> parse(std::string_view text);
  // A locally administered unicast MAC (02:xx:...) derived from an IPv4
  // address, so a pod's MAC is stable across restarts without being stored.
  static MacAddress fromIpv4(Ipv4Address ip);
  // The same for an IPv6-only interface: 06:53 and the address's last four
  // bytes (06: locally administered unicast, apart from fromIpv4's 02).
  static MacAddress fromIpv6(const Ipv6Address& ip);
  std::string toString() const;  // lower case, colon separated
  bool isMulticast() const { return (bytes[0] & 0x01) != 0; }
  bool isZero() const;

  auto operator<=>(const MacAddress&) const = default;
};

struct Ipv4Cidr {
  Ipv4Address network;  // host bits are zero
  uint8_t prefix_len = 0;

  // "a.b.c.d/n" with n in 0..32. Host bits set is an error ("10.0.0.1/24"),
  // because it usually means the user meant a different network.
  static std::optional<Ipv4Cidr> parse(std::string_view text);
  std::string toString() const;
  uint32_t mask() const;
  bool contains(Ipv4Address ip) const;
  Ipv4Address broadcast() const;

  auto operator<=>(const Ipv4Cidr&) const = default;
};

// An IPv6 address, its 16 bytes in network order (as on the wire).
struct Ipv6Address {
  std::array<uint8_t, 16> bytes{};

  // Accepts the RFC 4291 text forms ("fd00:10:244::1", "::", "::ffff:10.0.0.1"),
  // nothing else: no prefix length, zone ("%eth0") or brackets.
  static std::optional<Ipv6Address> parse(std::string_view text);
  // The RFC 5952 form: lower case, the longest run of zero groups as "::".
  std::string toString() const;
  bool isZero() const;
  bool isMulticast() const { return bytes[0] == 0xff; }
  bool isLinkLocal() const { return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80; }

  auto operator<=>(const Ipv6Address&) const = default;
};

struct Ipv6Cidr {
  Ipv6Address network;  // host bits are zero
  uint8_t prefix_len = 0;

  // "addr/n" with n in 0..128; host bits set is an error, as for IPv4.
  static std::optional<Ipv6Cidr> parse(std::string_view text);
  std::string toString() const;
  bool contains(const Ipv6Address& ip) const;
  // The address `offset` past the network address (offset 1: the first
  // host, the gateway by convention, as host-local IPAM picks it).
  Ipv6Address host(uint64_t offset) const;

  auto operator<=>(const Ipv6Cidr&) const = default;
};

}  // namespace sluice
