// The per-PMD upcall queue: flow keys of packets that missed every cache tier,
// on their way from the PMD (single producer) to the control thread that
// installs megaflows (single consumer).
//
// Why a queue and not an install on the PMD (as OVS's userspace datapath
// does): the megaflow table, the classifier versions and the revalidation of
// both belong to control (megaflow.h, classifier.h: installs build a new
// classifier version, which allocates), and control must see every megaflow
// to revalidate it before a table change returns. The PMD keeps the part that
// must be fast: it translates the missed packet inline from its snapshot's
// tables (flow_translate.h) and forwards it at once; only the key travels
// here, so a slow control thread delays caching, never forwarding.
//
// Lock-free ring (Lamport): the producer owns head_, the consumer tail_;
// each publishes its index with release and reads the other's with acquire,
// so a slot's contents are complete before the consumer sees it. Sized at
// construction; push never allocates, and a full queue is the caller's
// "upcall lost".
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "dataplane/datapath/flow/flow_key.h"

namespace sluice {

class UpcallQueue {
 public:
  // 1024 keys (128 KiB): far more than a rate-limited PMD enqueues between
  // two polls of the control thread (every millisecond).
  static constexpr uint32_t kCapacity = 1024;

  UpcallQueue() : slots_(new flow::FlowKey[kCapacity]) {}
  UpcallQueue(const UpcallQueue&) = delete;
  UpcallQueue& operator=(const UpcallQueue&) = delete;

  // PMD: false when full.
  bool push(const flow::FlowKey& key) {
    const uint32_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == kCapacity) return false;
    slots_[head & (kCapacity - 1)] = key;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Control: whether keys wait to be drained.
  bool pending() const {
    return head_.load(std::memory_order_acquire) != tail_.load(std::memory_order_relaxed);
  }

  // Control: calls f(key) for every queued key, oldest first; returns how many.
  template <typename F>
  uint32_t drain(F&& f) {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    const uint32_t head = head_.load(std::memory_order_acquire);
    const uint32_t n = head - tail;
    for (; tail != head; ++tail) {
      f(static_cast<const flow::FlowKey&>(slots_[tail & (kCapacity - 1)]));
    }
    tail_.store(tail, std::memory_order_release);
    return n;
  }

 private:
  static_assert((kCapacity & (kCapacity - 1)) == 0, "indices wrap with a mask");
  alignas(64) std::atomic<uint32_t> head_{0};  // next slot to write (PMD)
  alignas(64) std::atomic<uint32_t> tail_{0};  // next slot to read (control)
  std::unique_ptr<flow::FlowKey[]> slots_;
};

}  // namespace sluice
