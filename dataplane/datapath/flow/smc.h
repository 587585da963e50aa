// Signature match cache (SMC): the second tier. Far larger than the EMC
// because an entry is tiny: a 16-bit signature of the packet key's hash and
// the 32-bit index of a megaflow. Signatures collide, so a candidate is
// always verified against the megaflow's mask and masked key before it counts
// as a hit — a wrong signature match costs one compare, never a wrong
// forwarding decision. (This is the DFC/SMC design OVS adopted; see
// ARCHITECTURE.md for the figures that motivate it.)
//
// One Smc per PMD, used only by that PMD's thread. Entries are never
// invalidated explicitly: a dead megaflow fails the alive check, and a
// recycled index fails (or, if the new megaflow does match the packet,
// correctly passes) verification.
//
// Shape: entries/8 buckets of one cache line each, 8 ways of (signature,
// index); the bucket comes from the hash's low bits, the signature from its
// high 16 bits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "dataplane/datapath/flow/megaflow.h"

namespace sluice::flow {

struct SmcConfig {
  uint32_t entries = 1U << 20;  // ~1M as OVS; power of two, >= 8
  bool enabled = true;
};

struct SmcStats {
  uint64_t hits = 0;            // lookups answered here (verified)
  uint64_t misses = 0;          // lookups passed on
  uint64_t false_matches = 0;   // signature matched, verification failed (collision)
  uint64_t dead = 0;            // signature matched a dead megaflow
  uint64_t inserts = 0;
  uint64_t evictions = 0;       // inserts that replaced another signature
};

inline constexpr uint32_t kSmcWays = 8;

struct alignas(64) SmcBucket {
  uint16_t sig[kSmcWays];
  MegaflowIndex megaflow[kSmcWays];  // kNoMegaflow = empty way
  uint8_t pad[16];
};
static_assert(sizeof(SmcBucket) == 64);

class Smc {
 public:
  // InvalidArgument unless entries is a power of two >= kSmcWays.
  static absl::StatusOr<std::unique_ptr<Smc>> create(const SmcConfig& config);

  bool enabled() const { return enabled_; }
  void setEnabled(bool on) { enabled_ = on; }

  // Same contract as Emc::lookupBurst: hits write out[idx[j]], misses are
  // compacted to the front of idx in order, their count is returned.
  uint32_t lookupBurst(const FlowKey* keys, uint16_t* idx, uint32_t n, MegaflowIndex* out,
                       const MegaflowTable& table);

  // Remembers key's signature -> megaflow. A way with the same signature is
  // overwritten (it can only name one megaflow), else an empty way, else a
  // victim chosen round robin within the bucket.
  void insert(const FlowKey& key, MegaflowIndex megaflow);

  void clear();
  uint32_t entries() const { return (bucket_mask_ + 1) * kSmcWays; }
  const SmcStats& stats() const { return stats_; }

  static uint16_t signature(uint32_t hash) { return static_cast<uint16_t>(hash >> 16); }

 private:
  explicit Smc(const SmcConfig& config);
  uint32_t bucketOf(uint32_t hash) const { return hash & bucket_mask_; }

  std::vector<SmcBucket> buckets_;
  uint32_t bucket_mask_;
  bool enabled_;
  uint32_t victim_ = 0;  // round-robin victim way
  SmcStats stats_;
};

}  // namespace sluice::flow
