// One connection per vhost-user socket: the first is admitted, others are
// refused and counted while it is open, and only the admitted connection's
// device events are the port's (an older or refused connection's teardown
// leaves the port's state alone).
#include "dataplane/core/vhost_connection_slot.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(VhostConnectionSlotTest, TheFirstConnectionIsAdmittedAndTheNextAreRefusedWhileItIsOpen) {
  VhostConnectionSlot slot;
  EXPECT_FALSE(slot.holds(-1));
  EXPECT_TRUE(slot.admit(3));
  EXPECT_FALSE(slot.admit(4));
  EXPECT_FALSE(slot.admit(5));
  EXPECT_EQ(slot.refused(), 2u);
  EXPECT_TRUE(slot.holds(3));
  // A refused connection's device is not the port's: its teardown is ignored.
  EXPECT_FALSE(slot.holds(4));
  EXPECT_FALSE(slot.holds(-1));
}

TEST(VhostConnectionSlotTest, AnotherConnectionsCloseKeepsTheSlotAndTheHoldersFreesIt) {
  VhostConnectionSlot slot;
  ASSERT_TRUE(slot.admit(3));
  slot.release(4);
  EXPECT_TRUE(slot.holds(3));
  EXPECT_FALSE(slot.admit(4));
  slot.release(3);
  EXPECT_FALSE(slot.holds(3));
  // The pod reconnecting: its new connection is the port's now, and the old
  // one's id no longer counts.
  EXPECT_TRUE(slot.admit(4));
  EXPECT_TRUE(slot.holds(4));
  EXPECT_FALSE(slot.holds(3));
  EXPECT_EQ(slot.refused(), 1u);
}

}  // namespace
}  // namespace sluice
