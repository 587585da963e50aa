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

using Fields = std::map<std::string, std::string, std::less<>>;

// The key=value items, each key known and given once.
absl::StatusOr<Fields> splitFields(std::string_view text) {
  Fields fields;
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
  return fields;
}

std::string textOf(const Fields& fields, const char* key, const char* fallback) {
  auto it = fields.find(key);
  return it == fields.end() ? std::string(fallback) : it->second;
}

absl::StatusOr<MacAddress> macOf(const Fields& fields, const char* key) {
  const std::string v = textOf(fields, key, "02:00:00:00:00:00");
  std::optional<MacAddress> m = MacAddress::parse(v);
  if (!m) return absl::InvalidArgumentError(absl::StrCat(key, "=", v, ": not a MAC address"));
  return *m;
}

absl::StatusOr<uint32_t> ipOf(const Fields& fields, const char* key) {
  const std::string v = textOf(fields, key, "0.0.0.0");
  std::optional<Ipv4Address> a = Ipv4Address::parse(v);
  if (!a) return absl::InvalidArgumentError(absl::StrCat(key, "=", v, ": not an IPv4 address"));
  return a->networkOrder();
}

absl::StatusOr<uint32_t> protoOf(const Fields& fields) {
  const std::string proto_text = textOf(fields, "proto", "udp");
  if (proto_text == "udp") return 17;
  if (proto_text == "tcp") return 6;
  if (proto_text == "icmp") return 1;
  absl::StatusOr<uint32_t> p = number("proto", proto_text, 255);
  if (!p.ok()) return absl::InvalidArgumentError(absl::StrCat("proto=", proto_text, ": tcp, udp, icmp or 0-255"));
  return *p;
}

// The frame's header fields, each parsed and in range.
struct FrameFields {
  MacAddress eth_src, eth_dst;
  uint32_t src_be = 0, dst_be = 0;
  uint32_t proto = 17, sport = 0, dport = 0, ttl = 64;
  uint32_t ip_len = 0;  // the IPv4 total length
};

absl::StatusOr<FrameFields> frameFieldsOf(const Fields& fields) {
  FrameFields f;
  absl::StatusOr<MacAddress> eth_src = macOf(fields, "eth_src"), eth_dst = macOf(fields, "eth_dst");
  if (!eth_src.ok()) return eth_src.status();
  if (!eth_dst.ok()) return eth_dst.status();
  absl::StatusOr<uint32_t> src = ipOf(fields, "src"), dst = ipOf(fields, "dst");
  if (!src.ok()) return src.status();
  if (!dst.ok()) return dst.status();
  absl::StatusOr<uint32_t> proto = protoOf(fields);
  if (!proto.ok()) return proto.status();
  absl::StatusOr<uint32_t> sport = number("sport", textOf(fields, "sport", "0"), 0xffff);
  absl::StatusOr<uint32_t> dport = number("dport", textOf(fields, "dport", "0"), 0xffff);
  absl::StatusOr<uint32_t> ttl = number("ttl", textOf(fields, "ttl", "64"), 255);
  if (!sport.ok()) return sport.status();
  if (!dport.ok()) return dport.status();
  if (!ttl.ok()) return ttl.status();
  const uint32_t l4_len = *proto == 6 ? 20 : 8;
  absl::StatusOr<uint32_t> ip_len = number("len", textOf(fields, "len", "0"), kMaxIpLen);
  if (!ip_len.ok()) return ip_len.status();
  if (*ip_len == 0) *ip_len = 20 + l4_len;
  if (*ip_len < kMinIpLen || *ip_len < 20 + l4_len)
    return absl::InvalidArgumentError(absl::StrCat("len=", *ip_len, ": below the headers' ", 20 + l4_len, " bytes"));
  f.eth_src = *eth_src;
  f.eth_dst = *eth_dst;
  f.src_be = *src;
  f.dst_be = *dst;
  f.proto = *proto;
  f.sport = *sport;
  f.dport = *dport;
  f.ttl = *ttl;
  f.ip_len = *ip_len;
  return f;
}

std::vector<uint8_t> frameOf(const FrameFields& h) {
  std::vector<uint8_t> frame(14 + h.ip_len, 0);
  uint8_t* f = frame.data();
  std::memcpy(f, h.eth_dst.bytes.data(), 6);
  std::memcpy(f + 6, h.eth_src.bytes.data(), 6);
  put16(f + 12, 0x0800);
  uint8_t* ipv4 = f + 14;
  ipv4[0] = 0x45;
  put16(ipv4 + 2, h.ip_len);
  ipv4[8] = static_cast<uint8_t>(h.ttl);
  ipv4[9] = static_cast<uint8_t>(h.proto);
  std::memcpy(ipv4 + 12, &h.src_be, 4);
  std::memcpy(ipv4 + 16, &h.dst_be, 4);
  put16(ipv4 + 10, ipChecksum(ipv4, 20));
  uint8_t* l4 = ipv4 + 20;
  if (h.proto == 6 || h.proto == 17) {
    put16(l4, h.sport);
    put16(l4 + 2, h.dport);
    if (h.proto == 6) l4[12] = 0x50;  // data offset 5
    else put16(l4 + 4, h.ip_len - 20);
  } else if (h.proto == 1) {
    l4[0] = 8;  // echo request
  }
  return frame;
}

}  // namespace

absl::StatusOr<PacketSpec> parsePacketSpec(std::string_view text) {
  absl::StatusOr<Fields> fields = splitFields(text);
  if (!fields.ok()) return fields.status();
  PacketSpec spec;
  auto in_port = fields->find("in_port");
  if (in_port == fields->end()) return absl::InvalidArgumentError("in_port is required");
  absl::StatusOr<uint32_t> port = number("in_port", in_port->second, 0xffff);
  if (!port.ok()) return port.status();
  spec.in_port = static_cast<uint16_t>(*port);

  if (auto hex = fields->find("hex"); hex != fields->end()) {
    if (fields->size() != 2) return absl::InvalidArgumentError("hex goes with in_port alone");
    absl::StatusOr<std::vector<uint8_t>> bytes = hexBytes(hex->second);
    if (!bytes.ok()) return bytes.status();
    spec.frame = *std::move(bytes);
    return spec;
  }
  spec.eth_src_from_port = !fields->contains("eth_src");
  absl::StatusOr<FrameFields> header = frameFieldsOf(*fields);
  if (!header.ok()) return header.status();
  spec.frame = frameOf(*header);
  return spec;
}

}  // namespace sluice
