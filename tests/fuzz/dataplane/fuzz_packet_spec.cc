// libFuzzer target: the "what would happen" packet text (`sluicectl trace
// --packet`, TracePacket over the API). Whatever is accepted must be a frame
// of 14 to 9216 bytes whose flow key extraction stays inside it, and a
// field-built IPv4 frame must carry a valid header checksum.
#include <cstdint>
#include <optional>
#include <string>

#include "dataplane/core/packet_spec.h"
#include "dataplane/datapath/flow/flow_key.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sluice::PacketSpec> spec = sluice::parsePacketSpec(text);
  if (!spec.ok()) {
    if (spec.status().message().empty()) __builtin_trap();  // every refusal says why
    return 0;
  }
  const std::vector<uint8_t>& f = spec->frame;
  if (f.size() < 14 || f.size() > 9216) __builtin_trap();
  sluice::flow::FlowKey key{};
  (void)sluice::flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), spec->in_port, std::nullopt, key);
  if (text.find("hex=") == std::string::npos) {
    // Built from fields: Ethernet + a 20-byte IPv4 header whose checksum holds.
    if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00 || f[14] != 0x45) __builtin_trap();
    uint32_t sum = 0;
    for (size_t i = 14; i < 34; i += 2) sum += static_cast<uint32_t>(f[i] << 8 | f[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    if (sum != 0xffff) __builtin_trap();
  }
  return 0;
}
