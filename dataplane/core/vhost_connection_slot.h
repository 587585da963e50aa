// Which of a vhost-user socket's connections is its port's: one at a time.
//
// DPDK's vhost library makes every connection it accepts on a server
// socket a device of its own, without limit, and would call our device
// callbacks for each: a second connection would take the port over, and the
// first one's teardown would then clear the second's state. The library asks
// (new_connection) before it serves a connection; the slot admits one and
// refuses the rest until that one closed (destroy_connection), and device
// events count only for the connection holding it.
//
// Not thread-safe: VhostPortBackend calls it under its registry lock.
#pragma once

#include <cstdint>

namespace sluice {

class VhostConnectionSlot {
 public:
  // A connection with device id `vid` arrived: true if it now holds the
  // slot, false (refused, counted) while another one holds it.
  bool admit(int vid);
  // Connection `vid` closed: frees the slot if it held it.
  void release(int vid);
  // Whether `vid` is the connection holding the slot (device events of any
  // other are not the port's).
  bool holds(int vid) const { return vid >= 0 && vid == holder_; }
  // Connections refused so far.
  uint64_t refused() const { return refused_; }

 private:
  int holder_ = -1;  // the admitted connection's device id; -1: none
  uint64_t refused_ = 0;
};

}  // namespace sluice
