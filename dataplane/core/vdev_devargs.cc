#include "dataplane/core/vdev_devargs.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <map>
#include <set>

namespace sluice {
namespace {

absl::Status invalid(const std::string& why) { return absl::InvalidArgumentError(absl::StrCat("devargs: ", why)); }

// Longer devargs than any benchmark needs are refused rather than reasoned about.
constexpr size_t kMaxDevargsLen = 512;

bool allowedChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == ',' || c == '/' || c == ':' || c == '=' || c == '-';
}

absl::Status checkFlag(const std::string& key, const std::string& value) {
  if (value != "0" && value != "1") return invalid(absl::StrCat(key, " must be 0 or 1, not '", value, "'"));
  return absl::OkStatus();
}

// A decimal number without sign, prefix or leading zero: DPDK reads these
// values with strtoul(value, NULL, 0), which would take "0x800" as hex and
// "010" as octal.
absl::Status checkPacketSize(const std::string& value, uint32_t max) {
  uint32_t n = 0;
  const bool plain = !value.empty() && value.size() <= 5 && value[0] != '0' &&
                     value.find_first_not_of("0123456789") == std::string::npos && absl::SimpleAtoi(value, &n);
  if (!plain || n < 1 || n > max)
    return invalid(absl::StrCat("size must be a decimal 1..", max, " (the bytes an mbuf holds), not '", value, "'"));
  return absl::OkStatus();
}

absl::Status checkPcapPath(const std::string& value, const std::string& dir) {
  if (dir.empty()) return invalid("rx_pcap: no pcap directory is configured");
  const std::string prefix = absl::StrCat(dir, "/");
  if (value.size() <= prefix.size() || value.compare(0, prefix.size(), prefix) != 0)
    return invalid(absl::StrCat("rx_pcap must be a file below ", dir, ", not '", value, "'"));
  const std::vector<std::string> parts = absl::StrSplit(value.substr(prefix.size()), '/');
  for (const std::string& part : parts) {
    if (part.empty() || part == "." || part == "..")
      return invalid(absl::StrCat("rx_pcap '", value, "' has an empty, '.' or '..' component"));
  }
  return absl::OkStatus();
}

}  // namespace

VdevPolicy vdevPolicyFor(const std::string& state_dir) {
  std::string dir = state_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return VdevPolicy{absl::StrCat(dir == "/" ? "" : dir, "/", kVdevPcapSubdir), kMbufDataRoom};
}

absl::StatusOr<VdevDevargs> splitVdevDevargs(const std::string& devargs) {
  if (devargs.empty()) return invalid("must not be empty for a DPDK vdev port");
  if (devargs.size() > kMaxDevargsLen) return invalid(absl::StrCat("longer than ", kMaxDevargsLen, " characters"));
  for (char c : devargs)
    if (!allowedChar(c)) return invalid("may hold only letters, digits and _.,/:=-");
  const std::vector<std::string> parts = absl::StrSplit(devargs, ',');
  VdevDevargs out;
  out.driver = parts[0];
  if (out.driver.empty()) return invalid("no driver before the first ','");
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& arg = parts[i];
    const size_t eq = arg.find('=');
    // One '=' exactly: DPDK would take the key from before the last '='.
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size() || arg.find('=', eq + 1) != std::string::npos)
      return invalid(absl::StrCat("'", arg, "' is not key=value with one '='"));
    out.args.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
  }
  return out;
}

absl::Status validateVdevDevargs(const std::string& devargs, const VdevPolicy& policy) {
  auto split = splitVdevDevargs(devargs);
  if (!split.ok()) return split.status();
  // Only what makes a pod stand-in (read a pcap file, sink or make packets):
  // net_pcap's tx_pcap/rx_iface/tx_iface/iface write files or open host
  // interfaces and are never accepted.
  static const std::map<std::string, std::set<std::string>> kKeysByDriver = {
      {"net_pcap", {"rx_pcap", "infinite_rx"}},
      {"net_null", {"size", "copy", "no-rx"}},
  };
  auto driver = kKeysByDriver.find(split->driver);
  if (driver == kKeysByDriver.end())
    return invalid(absl::StrCat("driver '", split->driver, "' is not net_pcap or net_null"));
  std::map<std::string, std::string> seen;
  for (const auto& [key, value] : split->args) {
    if (!driver->second.contains(key)) return invalid(absl::StrCat(split->driver, " does not take '", key, "' here"));
    if (!seen.emplace(key, value).second) return invalid(absl::StrCat("'", key, "' given more than once"));
    absl::Status s = key == "rx_pcap" ? checkPcapPath(value, policy.pcap_dir)
                     : key == "size"  ? checkPacketSize(value, policy.max_packet_bytes)
                                      : checkFlag(key, value);
    if (!s.ok()) return s;
  }
  if (split->driver == "net_pcap" && !seen.contains("rx_pcap")) return invalid("net_pcap needs rx_pcap");
  if (seen["copy"] == "1" && seen["no-rx"] == "1") return invalid("net_null takes copy=1 or no-rx=1, not both");
  return absl::OkStatus();
}

}  // namespace sluice
