// An array whose length is chosen at run time, once: the per-port arrays a
// PMD and its counters keep are sized by max-ports at start, and their
// elements (atomic counters, batches the PMD points into) must never move,
// which std::vector's growth would do and its element requirements forbid.
#pragma once

#include <cstddef>
#include <memory>

namespace sluice {

template <typename T>
class FixedArray {
 public:
  explicit FixedArray(size_t size) : size_(size), items_(std::make_unique<T[]>(size)) {}

  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  size_t size() const { return size_; }
  T* begin() { return items_.get(); }
  T* end() { return items_.get() + size_; }
  const T* begin() const { return items_.get(); }
  const T* end() const { return items_.get() + size_; }

 private:
  size_t size_;
  std::unique_ptr<T[]> items_;
};

}  // namespace sluice
