#include "dataplane/core/vhost_connection_slot.h"

namespace sluice {

bool VhostConnectionSlot::admit(int vid) {
  if (holder_ >= 0) {
    ++refused_;
    return false;
  }
  holder_ = vid;
  return true;
}

void VhostConnectionSlot::release(int vid) {
  if (vid == holder_) holder_ = -1;
}

}  // namespace sluice
