// libFuzzer target: the devargs of a DPDK vdev pod port (AddPort's
// PORT_TYPE_DPDK_VDEV, vdev_devargs.h) on arbitrary input. Whatever is
// accepted must be read by DPDK's own parser (rte_kvargs_parse) as exactly
// the pairs sluiced validated, and those pairs must be harmless: net_pcap
// reading one file below the pcap directory, or net_null making packets no
// larger than an mbuf, as the driver itself will read the numbers.
#include <rte_kvargs.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "dataplane/core/dpdk_port_backend.h"
#include "dataplane/core/vdev_devargs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const sluice::VdevPolicy policy{"/var/lib/sluice/vdev", sluice::kMbufDataRoom};
  const std::string devargs(reinterpret_cast<const char*>(data), size);
  if (!sluice::validateVdevDevargs(devargs, policy).ok()) return 0;
  if (!sluice::checkDpdkReadsVdevArgs(devargs).ok()) __builtin_trap();
  if (devargs.size() > 512) __builtin_trap();
  for (char c : devargs)
    if (c <= ' ' || c > '~' || c == ';' || c == '"' || c == '\'' || c == '\\' || c == '[' || c == ']')
      __builtin_trap();
  const size_t comma = devargs.find(',');
  const std::string driver = devargs.substr(0, comma);
  if (driver != "net_pcap" && driver != "net_null") __builtin_trap();
  std::map<std::string, std::string> args;
  if (comma != std::string::npos) {
    // What the driver gets, read by DPDK.
    rte_kvargs* kv = rte_kvargs_parse(devargs.c_str() + comma + 1, nullptr);
    if (kv == nullptr) __builtin_trap();
    for (unsigned i = 0; i < kv->count; ++i)
      if (!args.emplace(kv->pairs[i].key, kv->pairs[i].value).second) __builtin_trap();  // each key once
    rte_kvargs_free(kv);
  }
  static const std::set<std::string> pcap_keys = {"rx_pcap", "infinite_rx"}, null_keys = {"no-rx", "size", "copy"};
  const std::set<std::string>& keys = driver == "net_pcap" ? pcap_keys : null_keys;
  for (const auto& [key, value] : args)
    if (!keys.contains(key)) __builtin_trap();
  if (driver == "net_pcap") {
    const std::string& file = args["rx_pcap"];
    if (file.rfind(policy.pcap_dir + "/", 0) != 0 || file.find("/../") != std::string::npos ||
        file.find("/./") != std::string::npos || file.find("//") != std::string::npos ||
        file.ends_with("/..") || file.ends_with("/.") || file.ends_with("/"))
      __builtin_trap();
  }
  if (auto it = args.find("size"); it != args.end()) {
    // net_null reads it with strtoul(value, NULL, 0).
    const unsigned long bytes = std::strtoul(it->second.c_str(), nullptr, 0);
    if (bytes == 0 || bytes > policy.max_packet_bytes) __builtin_trap();
  }
  return 0;
}
