// The ARP responder both PMD stages answer with: the pod-facing L3 stage
// (gateway and proxy ARP, l3_forward.cc) and the overlay uplink stage (our
// VTEP, uplink_stage.cc). Each stage decides which requests it
// answers; checking the frame's format and turning a request into its reply
// is the same for both. Inline: it runs once per ARP frame on the PMD.
#pragma once

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>

#include <cstdint>

namespace sluice {

// Ethernet hardware addresses and IPv4 protocol addresses: the only ARP
// either stage reads or answers.
inline bool isEthernetIpv4Arp(const rte_arp_hdr& arp) {
  return arp.arp_hardware == RTE_BE16(RTE_ARP_HRD_ETHER) && arp.arp_protocol == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
         arp.arp_hlen == RTE_ETHER_ADDR_LEN && arp.arp_plen == 4;
}

// Turns the request in `eth`/`arp` into the reply in place: `our_mac` is at
// the address that was asked for, sent back to the asker.
inline void turnArpRequestIntoReply(rte_ether_hdr* eth, rte_arp_hdr* arp, const rte_ether_addr& our_mac) {
  const uint32_t asked = arp->arp_data.arp_tip;
  const uint32_t sender = arp->arp_data.arp_sip;
  arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
  arp->arp_data.arp_tha = arp->arp_data.arp_sha;
  arp->arp_data.arp_tip = sender;
  arp->arp_data.arp_sha = our_mac;
  arp->arp_data.arp_sip = asked;
  eth->dst_addr = eth->src_addr;
  eth->src_addr = our_mac;
}

}  // namespace sluice
