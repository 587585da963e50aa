// libFuzzer target: fragmentIpv4 (ipv4_fragment.h) on arbitrary frames, as
// the PMD calls it: only an untagged IPv4 frame whose key parses, with DF
// clear and an IP packet longer than the MTU, reaches it. The first two
// bytes choose the MTU (68..9216), the third where the frame's first mbuf
// segment ends (behind the IP header: the PMD's headers lie in the first
// segment) for a chained frame; the rest is the frame. Runs on a real
// mempool (EAL without hugepages, started once).
// Every fragment must be a frame of at most the MTU of IP plus the
// original's Ethernet header; its IP header the original's (options aside:
// only the first fragment carries those not marked for copying) with a
// valid checksum, offsets in steps of 8 that follow each other, MF on all
// but the last; and the fragments' payloads, in order, must be the
// original's IP payload exactly. Fragmenting, then freeing the fragments,
// must give every mbuf back to the pool (a leak there would starve the PMD).
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/ipv4_fragment.h"

namespace {

using namespace sluice;

rte_mempool* g_pool = nullptr;
constexpr uint16_t kDataRoom = 2048;

// A failed check names its line: the input that broke it is in the crash file.
void check(bool ok, int line = __builtin_LINE()) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_ipv4_fragment: check on line %d failed\n", line);
  std::abort();
}

uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}
uint16_t sum16(const uint8_t* p, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1] << 8);
  return fold(sum);
}

// The frame as an mbuf chain: a first segment of `first` bytes, then
// segments of at most the data room.
rte_mbuf* chainOf(const std::vector<uint8_t>& frame, size_t first) {
  rte_mbuf* head = nullptr;
  rte_mbuf* last = nullptr;
  size_t at = 0;
  while (at < frame.size()) {
    rte_mbuf* seg = rte_pktmbuf_alloc(g_pool);
    if (seg == nullptr) std::abort();  // the pool is sized for the largest input
    const size_t len = std::min<size_t>(at == 0 ? first : frame.size() - at, kDataRoom);
    std::memcpy(rte_pktmbuf_append(seg, static_cast<uint16_t>(len)), frame.data() + at, len);
    at += len;
    if (head == nullptr) {
      head = seg;
    } else {
      last->next = seg;
      head->nb_segs++;
      head->pkt_len += seg->data_len;
    }
    last = seg;
  }
  return head;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string prefix = "--file-prefix=fuzz_frag_" + std::to_string(::getpid());
  std::vector<std::string> args = {"fuzz_ipv4_fragment", "-l", "0", "--no-huge", "--no-pci", "-m", "128",
                                   "--no-shconf", prefix, "--log-level=1"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) std::abort();
  // Every fragment of the largest datagram takes a direct and an indirect
  // mbuf, besides the original's segments.
  g_pool = rte_pktmbuf_pool_create("fuzz_frag", 2048, 0, 0, kDataRoom + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
  if (g_pool == nullptr) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3 || size - 3 > kMaxPortMtu + 14) return 0;
  const auto mtu = static_cast<uint16_t>(68 + (uint32_t{data[0]} << 8 | data[1]) % (kMaxPortMtu - 67));
  const uint8_t split = data[2];
  const std::vector<uint8_t> frame(data + 3, data + size);
  flow::FlowKey key;
  if (flow::extractFlowKey(frame.data(), static_cast<uint32_t>(frame.size()), 0, std::nullopt, key) !=
          flow::ParseResult::kOk ||
      key.eth_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
    return 0;
  const uint8_t* ip = frame.data() + 14;
  const size_t ihl = (ip[0] & 0x0f) * 4u;
  const size_t ip_len = static_cast<size_t>(ip[2] << 8 | ip[3]);
  if ((ip[6] & 0x40) != 0 || ip_len <= mtu) return 0;

  // The first segment ends behind the IP header (and the L4 header, when
  // there is one, as extraction reads it), as far on as `split` says.
  const size_t headers = key.l4_ofs != 0 ? key.l4_ofs + 8u : 14 + ihl;
  const size_t first = std::min(frame.size(), headers + split * 8u);
  const unsigned before = rte_mempool_avail_count(g_pool);
  rte_mbuf* m = chainOf(frame, first);
  rte_mbuf* out[kMaxIpv4Fragments];
  const uint32_t n = fragmentIpv4(m, mtu, g_pool, out);

  std::vector<uint8_t> payload;
  // A datagram that is itself a fragment: its pieces start at its offset,
  // and the last keeps its MF.
  size_t next_offset = (static_cast<size_t>(ip[6] & 0x1f) << 8 | ip[7]) * 8u;
  const bool original_more = (ip[6] & 0x20) != 0;
  for (uint32_t i = 0; i < n; ++i) {
    rte_mbuf* f = out[i];
    std::vector<uint8_t> bytes(rte_pktmbuf_pkt_len(f));
    check(rte_pktmbuf_read(f, 0, bytes.size(), bytes.data()) != nullptr || bytes.empty());
    check(bytes.size() >= 14 + 20);
    check(std::memcmp(bytes.data(), frame.data(), 14) == 0);
    const uint8_t* h = bytes.data() + 14;
    const size_t f_ihl = (h[0] & 0x0f) * 4u;
    const size_t f_len = static_cast<size_t>(h[2] << 8 | h[3]);
    check(f_len <= mtu && f_len == bytes.size() - 14 && f_ihl >= 20 && f_ihl <= f_len);
    check(sum16(h, f_ihl) == 0xffff);
    check(h[9] == ip[9] && std::memcmp(h + 12, ip + 12, 8) == 0 && std::memcmp(h + 4, ip + 4, 2) == 0);
    const size_t offset = (static_cast<size_t>(h[6] & 0x1f) << 8 | h[7]) * 8u;
    const bool more = (h[6] & 0x20) != 0;
    check(offset == next_offset);
    check(more == (i + 1 < n || original_more));
    if (i + 1 < n) check((f_len - f_ihl) % 8 == 0);
    payload.insert(payload.end(), h + f_ihl, h + f_len);
    next_offset += f_len - f_ihl;
    rte_pktmbuf_free(f);
  }
  if (n != 0) {
    check(payload.size() == ip_len - ihl);
    check(std::memcmp(payload.data(), ip + ihl, payload.size()) == 0);
  }
  check(rte_mempool_avail_count(g_pool) == before);
  return 0;
}
