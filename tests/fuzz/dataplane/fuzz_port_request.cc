// libFuzzer target: AddPort's request validation on arbitrary field values.
// Input: the text fields separated by '\n'. Whatever is accepted must yield a
// socket path inside the socket directory (no "..", no NUL, one or two levels).
#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/core/port_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> fields(7);
  size_t field = 0;
  for (char c : text) {
    if (c == '\n' && field + 1 < fields.size()) ++field;
    else fields[field] += c;
  }
  sluice::RawPortRequest raw{fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[6]};
  static const sluice::Ipv4Cidr cidr = *sluice::Ipv4Cidr::parse("10.244.0.0/16");
  auto req = sluice::parsePortRequest(raw, cidr, *sluice::Ipv4Address::parse("10.244.0.1"));
  if (!req.ok()) return 0;
  const std::string dir = "/var/run/sluice/vhost";
  auto path = sluice::vhostSocketPath(dir, *req);
  if (!path.ok()) return 0;
  std::string rest = path->substr(dir.size());
  bool escapes = path->compare(0, dir.size(), dir) != 0 || rest.empty() || rest[0] != '/' ||
                 rest.find("/.") != std::string::npos || rest.find('\0') != std::string::npos ||
                 path->size() > 107;
  if (escapes || !cidr.contains(req->ip) || req->mac.isMulticast()) __builtin_trap();
  return 0;
}
