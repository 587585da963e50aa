// The compact flow key every cache tier and the megaflow classifier match on,
// its mask (same layout), and extraction of a key from packet bytes.
//
// Used on PMD lcores: extraction runs once per received packet, compare/mask
// helpers run inside the EMC, SMC and classifier. The control thread builds
// masks and masked keys with the same helpers when it installs megaflows.
//
// Layout: 16 words of 64 bits (two cache lines). Words 0..13 are the match
// area (what masks and compares cover); words 14..15 carry per-packet metadata
// (hash, parse result, header offsets) that is never matched. Hot fields of a
// router decision (in-port, EtherType, protocol, TTL class, IPv4 addresses,
// ports) sit in the first three words. All multi-byte header fields are kept in
// network byte order, exactly as on the wire, so extraction is plain copies.
// Unused fields and padding are always zero, so whole-word compares are exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include <smmintrin.h>

#include "dataplane/datapath/flow/flow_hash.h"
#include "dataplane/datapath/flow/parse_result.h"

namespace sluice::flow {

// Largest burst any flow stage accepts (DPDK rx bursts are 32 in practice;
// 64 leaves room for merged bursts while per-burst scratch stays on the stack).
inline constexpr uint32_t kMaxBurst = 64;

inline constexpr uint32_t kKeyWords = 16;    // whole key, two cache lines
inline constexpr uint32_t kMatchWords = 14;  // words a mask and a compare cover

// TTL / hop-limit class: all a router needs (0 and 1 must not be forwarded).
enum class TtlClass : uint8_t { kNotIp = 0, kZero = 1, kOne = 2, kMany = 3 };

// Fragment position; later fragments carry no L4 header, so no ports.
enum class IpFrag : uint8_t { kNone = 0, kFirst = 1, kLater = 2 };

// Bits of FlowKey::flags.
inline constexpr uint8_t kFlagVlan = 0x01;  // a VLAN tag was present

// Word access to a key that is also accessed through its named fields.
using KeyWord = uint64_t __attribute__((__may_alias__));

struct alignas(64) FlowKey {
  // word 0
  uint16_t in_port;    // datapath port number the packet arrived on (host order)
  uint16_t eth_type;   // EtherType after any VLAN tag (network order)
  uint16_t vlan_tci;   // TCI of the tag (network order); 0 without one
  uint8_t ip_proto;    // IPv4 protocol / IPv6 final next-header; 0 if not IP
  uint8_t ttl_class;   // TtlClass
  // word 1
  uint32_t ipv4_src;   // network order
  uint32_t ipv4_dst;   // network order
  // word 2
  uint16_t tp_src;     // TCP/UDP/SCTP source port (network order)
  uint16_t tp_dst;     // TCP/UDP/SCTP destination port (network order)
  uint8_t icmp_type;   // ICMP or ICMPv6 type
  uint8_t icmp_code;   // ICMP or ICMPv6 code
  uint8_t ip_frag;     // IpFrag
  uint8_t flags;       // kFlag* bits
  // word 3
  uint8_t eth_dst[6];
  uint16_t arp_op;     // network order
  // word 4
  uint8_t eth_src[6];
  uint8_t ip_tos;      // IPv4 TOS / IPv6 traffic class (DSCP + ECN)
  uint8_t pad0;
  // word 5
  uint8_t arp_sha[6];  // ARP sender hardware address
  uint16_t pad1;
  // word 6
  uint32_t arp_spa;    // ARP sender IPv4 (network order)
  uint32_t arp_tpa;    // ARP target IPv4 (network order)
  // word 7: tunnel metadata, set by the decap stage (extraction leaves it 0)
  uint32_t tun_src;    // outer IPv4 source (network order)
  uint32_t tun_dst;    // outer IPv4 destination (network order)
  // word 8
  uint32_t tun_vni;    // VXLAN VNI (host order, 24 bits used); 0 = not tunnelled
  uint32_t pad2;
  // words 9..12
  uint8_t ipv6_src[16];
  uint8_t ipv6_dst[16];
  // word 13: reserved for later match fields (flow label, TCP flags, ...)
  uint64_t reserved;
  // words 14..15: metadata, outside the match area
  uint32_t hash;        // RSS hash when the NIC gave one, else hash of the match words
  uint8_t parse_result; // ParseResult
  uint8_t pad3;
  uint16_t l3_ofs;      // offset of the L3 header in the frame (0 if none)
  uint16_t l4_ofs;      // offset of the L4 header in the frame (0 if none)
  uint16_t pad4;
  uint32_t pad5;

  const KeyWord* words() const { return reinterpret_cast<const KeyWord*>(this); }
  KeyWord* words() { return reinterpret_cast<KeyWord*>(this); }
  ParseResult result() const { return static_cast<ParseResult>(parse_result); }
};

static_assert(sizeof(FlowKey) == kKeyWords * 8);
static_assert(offsetof(FlowKey, ipv4_src) == 8);
static_assert(offsetof(FlowKey, tp_src) == 16);
static_assert(offsetof(FlowKey, eth_dst) == 24);
static_assert(offsetof(FlowKey, eth_src) == 32);
static_assert(offsetof(FlowKey, arp_sha) == 40);
static_assert(offsetof(FlowKey, arp_spa) == 48);
static_assert(offsetof(FlowKey, tun_src) == 56);
static_assert(offsetof(FlowKey, tun_vni) == 64);
static_assert(offsetof(FlowKey, ipv6_src) == 72);
static_assert(offsetof(FlowKey, reserved) == 104);
static_assert(offsetof(FlowKey, hash) == kMatchWords * 8);

// A mask has the key's layout: a 1 bit means "this bit of the key matters".
// Its metadata words are ignored.
using FlowMask = FlowKey;

// A zeroed key (the identity for building keys and masks field by field).
inline FlowKey zeroKey() {
  FlowKey k;
  std::memset(&k, 0, sizeof(k));
  return k;
}

// Exact equality of the match areas.
inline bool keysEqual(const FlowKey& a, const FlowKey& b) {
  const KeyWord* x = a.words();
  const KeyWord* y = b.words();
  uint64_t diff = 0;
  for (uint32_t i = 0; i < kMatchWords; ++i) {
    diff |= x[i] ^ y[i];
  }
  return diff == 0;
}

// True when (key AND mask) equals masked_key over the match area. Unrolled
// 16-byte operations: the SMC and every subtable probe run this per packet,
// and the loop form spends half its time on loop control.
inline bool maskedEqual(const FlowKey& key, const FlowMask& mask, const FlowKey& masked_key) {
  static_assert(kMatchWords == 14 && alignof(FlowKey) >= 16);
  const auto* k = reinterpret_cast<const __m128i*>(key.words());
  const auto* m = reinterpret_cast<const __m128i*>(mask.words());
  const auto* mk = reinterpret_cast<const __m128i*>(masked_key.words());
  __m128i diff = _mm_setzero_si128();
  for (int i = 0; i < 7; ++i) {
    diff = _mm_or_si128(diff, _mm_xor_si128(_mm_and_si128(_mm_load_si128(k + i), _mm_load_si128(m + i)),
                                            _mm_load_si128(mk + i)));
  }
  return _mm_testz_si128(diff, diff) != 0;
}

// key AND mask over the match area; metadata words zero.
inline FlowKey applyMask(const FlowKey& key, const FlowMask& mask) {
  FlowKey out = zeroKey();
  for (uint32_t i = 0; i < kMatchWords; ++i) {
    out.words()[i] = key.words()[i] & mask.words()[i];
  }
  return out;
}

// The hash of a match area given word by word (word(i) for i < 14): the one
// definition behind hashKey() and the extraction fast path, which hashes
// words still in registers. Words 0..4 hold every field of an IPv4 5-tuple
// and are CRC'd one by one; words 5..13 (ARP, tunnel, IPv6, reserved) are
// first folded into one word by XOR with distinct rotations, which costs a
// few cycles when they are present and nothing when they are known to be
// zero (the plain IPv4 path), instead of nine more CRC steps per packet.
// Two chains of three CRCs: crc32 has 3 cycles of latency but issues every cycle.
template <typename WordFn>
inline uint32_t hashMatchArea(WordFn word) {
  static_assert(kMatchWords == 14);
  uint64_t fold = 0;
  for (uint32_t i = 5; i < kMatchWords; ++i) {
    const uint32_t r = (i - 5) * 7;
    const uint64_t w = word(i);
    fold ^= r == 0 ? w : (w << r) | (w >> (64 - r));
  }
  uint64_t a = 0;
  uint64_t b = 0x9e3779b9U;
  uint64_t c = 0x85ebca6bU;
  a = _mm_crc32_u64(a, word(0));
  b = _mm_crc32_u64(b, word(1));
  c = _mm_crc32_u64(c, word(2));
  a = _mm_crc32_u64(a, word(3));
  b = _mm_crc32_u64(b, word(4));
  c = _mm_crc32_u64(c, fold);
  const uint64_t ab = (a << 32) | (b & 0xffffffffU);
  // Multiply-mix the chains together, then avalanche.
  const uint64_t x = ab * 0x9e3779b97f4a7c15ULL ^ c * 0xc2b2ae3d27d4eb4fULL;
  return hashFinish(static_cast<uint32_t>(x >> 32) ^ static_cast<uint32_t>(x));
}

// The hash of a key's match area, used when the NIC supplied no RSS hash.
inline uint32_t hashKey(const FlowKey& key) {
  const KeyWord* w = key.words();
  return hashMatchArea([w](uint32_t i) -> uint64_t { return w[i]; });
}

// Extracts the key of one frame. Reads only data[0, len). Fills key
// completely (zeroing what the frame lacks) and returns why parsing stopped;
// on anything but kOk the fields parsed before the failing layer are kept (for
// accounting) but the pipeline must drop the packet with that reason. The
// hash is the RSS hash when given, else hashKey(); 0 on failure.
ParseResult extractFlowKey(const uint8_t* data, uint32_t len, uint16_t in_port,
                           std::optional<uint32_t> rss_hash, FlowKey& key);

// One received packet, as the PMD sees it after rx (mbuf data pointer, data
// length, RSS hash if the mbuf carries RTE_MBUF_F_RX_RSS_HASH). A chained
// mbuf gives its first segment as data/len and its whole length as
// frame_len: its headers must lie in the first segment (else the key is
// truncated), the lengths they state are checked against the whole frame.
struct PacketRef {
  const uint8_t* data;
  uint32_t len;
  uint32_t rss_hash;
  bool has_rss;
  uint32_t frame_len = 0;  // 0: len (a contiguous frame)
};

// Burst form: keys[i] from pkts[i] for i < n (n <= kMaxBurst), all arriving on
// in_port. Prefetches the next frame while parsing the current one. Returns
// how many packets parsed kOk; each key's parse_result says which did not.
uint32_t extractFlowKeys(const PacketRef* pkts, uint32_t n, uint16_t in_port, FlowKey* keys);

// Consecutive packets of a burst that have one flow key: pkts[first,
// first + count).
struct PacketRun {
  uint16_t first;
  uint16_t count;
};

// Burst form by runs, what the PMD uses: one flow's packets mostly arrive
// together (a burst from a pod is often a single flow), and a packet whose
// key-making header bytes equal its predecessor's needs neither a key nor a
// lookup of its own. Writes runs[r] and keys[r] (the key of the run's first
// packet) for each run, in packet order, and returns the number of runs.
// Only untagged IPv4 UDP/TCP frames without options, 48 bytes or longer,
// are compared (34 header bytes and TCP's data offset: MACs, EtherType,
// addresses, ports, TTL, TOS, lengths, fragment field; not the IP
// identification or checksum); any other frame is a run of one. A set bit
// i in `breaks` starts a new run at packet i whatever its headers (the
// uplink: the packet came through another tunnel).
// With breaks all ones this is extractFlowKeys.
uint32_t extractFlowKeyRuns(const PacketRef* pkts, uint32_t n, uint16_t in_port, uint64_t breaks, FlowKey* keys,
                            PacketRun* runs);

}  // namespace sluice::flow
