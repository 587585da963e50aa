#include "dataplane/core/packet_spec.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <cstring>
#include <map>
#include <string>

#include "common/net_address.h"

namespace sluice {
namespace {

constexpr size_t kMaxHexFrame = 9216;  // a jumbo frame
constexpr uint32_t kMinIpLen = 28;     // IPv4 header + 8 bytes of L4
constexpr uint32_t kMaxIpLen = 1500;

// This abseil's string_view is its own type, not std::string_view.
absl::string_view av(std::string_view s) { return {s.data(), s.size()}; }

absl::StatusOr<uint32_t> number(std::string_view key, std::string_view v, uint32_t max) {
  uint32_t n = 0;
  if (!absl::SimpleAtoi(av(v), &n) || n > max)
    return absl::InvalidArgumentError(absl::StrCat(av(key), "=", av(v), ": not a number from 0 to ", max));
  return n;
}

absl::StatusOr<std::vector<uint8_t>> hexBytes(std::string_view hex) {
  if (hex.size() % 2 != 0) return absl::InvalidArgumentError("hex: an odd number of digits");
  if (hex.size() / 2 < 14 || hex.size() / 2 > kMaxHexFrame)
    return absl::InvalidArgumentError(absl::StrCat("hex: a frame of 14 to ", kMaxHexFrame, " bytes"));
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return absl::InvalidArgumentError("hex: not a hex digit");
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

uint16_t ipChecksum(const uint8_t* p, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

absl::StatusOr<PacketSpec> parsePacketSpec(std::string_view text) {
  std::map<std::string, std::string, std::less<>> fields;
  for (absl::string_view item : absl::StrSplit(av(text), ',', absl::SkipWhitespace())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos || eq == 0)
      return absl::InvalidArgumentError(absl::StrCat("\"", item, "\": expected key=value"));
    std::string key(item.substr(0, eq));
    static const char* const kKeys[] = {"in_port", "src", "dst", "proto", "sport", "dport",
                                        "ttl", "eth_src", "eth_dst", "len", "hex"};
    bool known = false;
    for (const char* k : kKeys) known |= key == k;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown key \"", key, "\""));
    if (!fields.emplace(key, std::string(item.substr(eq + 1))).second)
      return absl::InvalidArgumentError(absl::StrCat(key, " given twice"));
  }
  PacketSpec spec;
  auto in_port = fields.find("in_port");
  if (in_port == fields.end()) return absl::InvalidArgumentError("in_port is required");
  absl::StatusOr<uint32_t> port = number("in_port", in_port->second, 0xffff);
  if (!port.ok()) return port.status();
  spec.in_port = static_cast<uint16_t>(*port);

  if (auto hex = fields.find("hex"); hex != fields.end()) {
    if (fields.size() != 2) return absl::InvalidArgumentError("hex goes with in_port alone");
    absl::StatusOr<std::vector<uint8_t>> bytes = hexBytes(hex->second);
    if (!bytes.ok()) return bytes.status();
    spec.frame = *std::move(bytes);
    return spec;
  }

  auto text_of = [&](const char* key, const char* fallback) {
    auto it = fields.find(key);
    return it == fields.end() ? std::string(fallback) : it->second;
  };
  auto mac = [&](const char* key) -> absl::StatusOr<MacAddress> {
    const std::string v = text_of(key, "02:00:00:00:00:00");
    std::optional<MacAddress> m = MacAddress::parse(v);
    if (!m) return absl::InvalidArgumentError(absl::StrCat(key, "=", v, ": not a MAC address"));
    return *m;
  };
  auto ip = [&](const char* key) -> absl::StatusOr<uint32_t> {
    const std::string v = text_of(key, "0.0.0.0");
    std::optional<Ipv4Address> a = Ipv4Address::parse(v);
    if (!a) return absl::InvalidArgumentError(absl::StrCat(key, "=", v, ": not an IPv4 address"));
    return a->networkOrder();
  };
  spec.eth_src_from_port = !fields.contains("eth_src");
  absl::StatusOr<MacAddress> eth_src = mac("eth_src"), eth_dst = mac("eth_dst");
  if (!eth_src.ok()) return eth_src.status();
  if (!eth_dst.ok()) return eth_dst.status();
  absl::StatusOr<uint32_t> src = ip("src"), dst = ip("dst");
  if (!src.ok()) return src.status();
  if (!dst.ok()) return dst.status();
  uint32_t proto = 17;
  const std::string proto_text = text_of("proto", "udp");
  if (proto_text == "udp") proto = 17;
  else if (proto_text == "tcp") proto = 6;
  else if (proto_text == "icmp") proto = 1;
  else {
    absl::StatusOr<uint32_t> p = number("proto", proto_text, 255);
    if (!p.ok()) return absl::InvalidArgumentError(absl::StrCat("proto=", proto_text, ": tcp, udp, icmp or 0-255"));
    proto = *p;
  }
  absl::StatusOr<uint32_t> sport = number("sport", text_of("sport", "0"), 0xffff);
  absl::StatusOr<uint32_t> dport = number("dport", text_of("dport", "0"), 0xffff);
  absl::StatusOr<uint32_t> ttl = number("ttl", text_of("ttl", "64"), 255);
  if (!sport.ok()) return sport.status();
  if (!dport.ok()) return dport.status();
  if (!ttl.ok()) return ttl.status();
  const uint32_t l4_len = proto == 6 ? 20 : 8;
  absl::StatusOr<uint32_t> ip_len = number("len", text_of("len", "0"), kMaxIpLen);
  if (!ip_len.ok()) return ip_len.status();
  if (*ip_len == 0) *ip_len = 20 + l4_len;
  if (*ip_len < kMinIpLen || *ip_len < 20 + l4_len)
    return absl::InvalidArgumentError(absl::StrCat("len=", *ip_len, ": below the headers' ", 20 + l4_len, " bytes"));

  spec.frame.assign(14 + *ip_len, 0);
  uint8_t* f = spec.frame.data();
  std::memcpy(f, eth_dst->bytes.data(), 6);
  std::memcpy(f + 6, eth_src->bytes.data(), 6);
  put16(f + 12, 0x0800);
  uint8_t* ipv4 = f + 14;
  ipv4[0] = 0x45;
  put16(ipv4 + 2, *ip_len);
  ipv4[8] = static_cast<uint8_t>(*ttl);
  ipv4[9] = static_cast<uint8_t>(proto);
  std::memcpy(ipv4 + 12, &*src, 4);
  std::memcpy(ipv4 + 16, &*dst, 4);
  put16(ipv4 + 10, ipChecksum(ipv4, 20));
  uint8_t* l4 = ipv4 + 20;
  if (proto == 6 || proto == 17) {
    put16(l4, *sport);
    put16(l4 + 2, *dport);
    if (proto == 6) l4[12] = 0x50;  // data offset 5
    else put16(l4 + 4, *ip_len - 20);
  } else if (proto == 1) {
    l4[0] = 8;  // echo request
  }
  return spec;
}

}  // namespace sluice
