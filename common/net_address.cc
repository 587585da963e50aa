#include "common/net_address.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace sluice {
namespace {

std::optional<uint8_t> hexDigit(char c) {
  if (c >= '0' && c <= '9') return static_cast<uint8_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<uint8_t>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<uint8_t>(c - 'A' + 10);
  return std::nullopt;
}

}  // namespace

std::optional<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  uint32_t value = 0;
  size_t pos = 0;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (pos >= text.size() || text[pos] != '.') return std::nullopt;
      ++pos;
    }
    size_t start = pos;
    uint32_t part = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      part = part * 10 + static_cast<uint32_t>(text[pos] - '0');
      if (part > 255 || pos - start >= 3) return std::nullopt;
      ++pos;
    }
    size_t digits = pos - start;
    if (digits == 0) return std::nullopt;
    if (digits > 1 && text[start] == '0') return std::nullopt;  // "01" is ambiguous (octal?)
    value = (value << 8) | part;
  }
  if (pos != text.size()) return std::nullopt;
  return Ipv4Address{value};
}

std::string Ipv4Address::toString() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", (value >> 24) & 0xff, (value >> 16) & 0xff,
                (value >> 8) & 0xff, value & 0xff);
  return buf;
}

uint32_t Ipv4Address::networkOrder() const { return htonl(value); }

Ipv4Address Ipv4Address::fromNetworkOrder(uint32_t be) { return Ipv4Address{ntohl(be)}; }

std::optional<MacAddress> MacAddress::parse(std::string_view text) {
  // "aa:bb:cc:dd:ee:ff" is exactly 17 characters.
  if (text.size() != 17) return std::nullopt;
  MacAddress mac;
  for (size_t i = 0; i < 6; ++i) {
    size_t at = i * 3;
    if (i > 0 && text[at - 1] != ':') return std::nullopt;
    auto hi = hexDigit(text[at]);
    auto lo = hexDigit(text[at + 1]);
    if (!hi || !lo) return std::nullopt;
    mac.bytes[i] = static_cast<uint8_t>(*hi << 4 | *lo);
  }
  return mac;
}

MacAddress MacAddress::fromIpv4(Ipv4Address ip) {
  // 0x02: locally administered, unicast. 0x53 ('S'): keeps these apart from
  // other 02:00:... schemes (e.g. the kernel's random veth MACs rarely).
  return MacAddress{{0x02, 0x53, static_cast<uint8_t>(ip.value >> 24),
                     static_cast<uint8_t>(ip.value >> 16), static_cast<uint8_t>(ip.value >> 8),
                     static_cast<uint8_t>(ip.value)}};
}

MacAddress MacAddress::fromIpv6(const Ipv6Address& ip) {
  return MacAddress{{0x06, 0x53, ip.bytes[12], ip.bytes[13], ip.bytes[14], ip.bytes[15]}};
}

std::string MacAddress::toString() const {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", bytes[0], bytes[1], bytes[2],
                bytes[3], bytes[4], bytes[5]);
  return buf;
}

bool MacAddress::isZero() const {
  for (uint8_t b : bytes)
    if (b != 0) return false;
  return true;
}

std::optional<Ipv4Cidr> Ipv4Cidr::parse(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto ip = Ipv4Address::parse(text.substr(0, slash));
  std::string_view len_text = text.substr(slash + 1);
  if (!ip || len_text.empty() || len_text.size() > 2) return std::nullopt;
  unsigned len = 0;
  for (char c : len_text) {
    if (c < '0' || c > '9') return std::nullopt;
    len = len * 10 + static_cast<unsigned>(c - '0');
  }
  if (len > 32 || (len_text.size() == 2 && len_text[0] == '0')) return std::nullopt;
  Ipv4Cidr cidr{*ip, static_cast<uint8_t>(len)};
  if ((ip->value & ~cidr.mask()) != 0) return std::nullopt;
  return cidr;
}

std::string Ipv4Cidr::toString() const {
  return network.toString() + "/" + std::to_string(prefix_len);
}

uint32_t Ipv4Cidr::mask() const {
  return prefix_len == 0 ? 0 : ~uint32_t{0} << (32 - prefix_len);
}

bool Ipv4Cidr::contains(Ipv4Address ip) const { return (ip.value & mask()) == network.value; }

Ipv4Address Ipv4Cidr::broadcast() const { return Ipv4Address{network.value | ~mask()}; }

std::optional<Ipv6Address> Ipv6Address::parse(std::string_view text) {
  // inet_pton takes a C string: longer than any valid form means invalid.
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  Ipv6Address ip;
  if (inet_pton(AF_INET6, buf, ip.bytes.data()) != 1) return std::nullopt;
  return ip;
}

std::string Ipv6Address::toString() const {
  char buf[INET6_ADDRSTRLEN];
  // glibc's inet_ntop writes the RFC 5952 form.
  if (inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf) == nullptr) return "::";
  return buf;
}

bool Ipv6Address::isZero() const {
  for (uint8_t b : bytes)
    if (b != 0) return false;
  return true;
}

std::optional<Ipv6Cidr> Ipv6Cidr::parse(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto ip = Ipv6Address::parse(text.substr(0, slash));
  std::string_view len_text = text.substr(slash + 1);
  if (!ip || len_text.empty() || len_text.size() > 3) return std::nullopt;
  unsigned len = 0;
  for (char c : len_text) {
    if (c < '0' || c > '9') return std::nullopt;
    len = len * 10 + static_cast<unsigned>(c - '0');
  }
  if (len > 128 || (len_text.size() > 1 && len_text[0] == '0')) return std::nullopt;
  Ipv6Cidr cidr{*ip, static_cast<uint8_t>(len)};
  for (unsigned bit = len; bit < 128; ++bit)
    if ((ip->bytes[bit / 8] >> (7 - bit % 8)) & 1) return std::nullopt;
  return cidr;
}

std::string Ipv6Cidr::toString() const { return network.toString() + "/" + std::to_string(prefix_len); }

bool Ipv6Cidr::contains(const Ipv6Address& ip) const {
  const unsigned whole = prefix_len / 8;
  if (std::memcmp(ip.bytes.data(), network.bytes.data(), whole) != 0) return false;
  const unsigned rest = prefix_len % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (ip.bytes[whole] & mask) == network.bytes[whole];
}

Ipv6Address Ipv6Cidr::host(uint64_t offset) const {
  // Adds offset to the low 64 bits, carrying into the high ones.
  Ipv6Address ip = network;
  unsigned carry = 0;
  for (int i = 15; i >= 0; --i) {
    const unsigned add = i >= 8 ? static_cast<unsigned>((offset >> (8 * (15 - i))) & 0xff) : 0;
    const unsigned sum = ip.bytes[static_cast<size_t>(i)] + add + carry;
    ip.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(sum);
    carry = sum >> 8;
  }
  return ip;
}

}  // namespace sluice
