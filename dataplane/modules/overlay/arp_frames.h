// ARP frames the control path sends and reads on the uplink (neighbor
// resolution for the VTEP next hops). Plain bytes, control thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/net_address.h"

namespace sluice {

// A broadcast who-has `target` from (mac, ip), padded to 60 bytes.
std::vector<uint8_t> buildArpRequest(MacAddress mac, Ipv4Address ip, Ipv4Address target);
// The same frame with an 802.1Q tag of VLAN `vlan` (1..4094) after the MAC
// addresses (64 bytes: the tag on top of the untagged minimum, as a switch
// that adds it would send).
std::vector<uint8_t> tagFrame(std::vector<uint8_t> frame, uint16_t vlan);

struct ArpSender {
  uint16_t op = 0;  // 1 request, 2 reply
  Ipv4Address ip;     // sender protocol address
  MacAddress mac;     // sender hardware address
  Ipv4Address target; // target protocol address
  MacAddress eth_dst; // the frame's Ethernet destination
};
// The sender of an Ethernet/IPv4 ARP frame; nullopt if it is not one.
std::optional<ArpSender> parseArp(const uint8_t* data, size_t len);

}  // namespace sluice
