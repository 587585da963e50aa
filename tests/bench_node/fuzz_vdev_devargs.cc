// libFuzzer target: the devargs of a DPDK vdev pod port (AddPort's
// PORT_TYPE_DPDK_VDEV, port_request.h) on arbitrary input. Whatever is
// accepted must be a net_pcap or net_null device whose every argument is
// key=value with a key that only reads a file or shapes the sink: nothing
// that writes files or opens interfaces.
#include <cstdint>
#include <set>
#include <string>

#include "dataplane/control/port_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string devargs(reinterpret_cast<const char*>(data), size);
  if (!sluice::validateVdevDevargs(devargs).ok()) return 0;
  static const std::set<std::string> pcap_keys = {"rx_pcap", "infinite_rx"}, null_keys = {"no-rx", "size", "copy"};
  if (devargs.size() > 512) __builtin_trap();
  size_t at = devargs.find(',');
  const std::string driver = devargs.substr(0, at);
  if (driver != "net_pcap" && driver != "net_null") __builtin_trap();
  const std::set<std::string>& keys = driver == "net_pcap" ? pcap_keys : null_keys;
  while (at != std::string::npos) {
    const size_t next = devargs.find(',', at + 1);
    const std::string arg = devargs.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size() || !keys.contains(arg.substr(0, eq)))
      __builtin_trap();
    at = next;
  }
  for (char c : devargs)
    if (c <= ' ' || c > '~' || c == ';' || c == '"' || c == '\'' || c == '\\') __builtin_trap();
  return 0;
}
