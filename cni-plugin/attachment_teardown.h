// Tearing down one recorded attachment, shared by DEL, GC and the retry of
// pending deletes. The order (and why) is written in cmd_del.cc. The rule
// that matters most: the address goes back to IPAM only once sluiced has
// confirmed the port is gone (DeletePort answered, or sluiced refuses the
// attachment id as invalid, so it can hold no port by it). While sluiced is
// unreachable the port's fate is unknown, and an address released then could
// be handed to another pod while sluiced still routes it to the old port.
//
// A teardown that cannot finish leaves the record marked pending-delete,
// with the address still held. containerd never sends CNI GC, so a pending
// record is not left for GC: every later ADD, DEL and STATUS of this network
// that finds sluiced answering finishes up to kMaxPendingDeletesPerRun of
// them, and GC finishes all. Used by the single thread of the sluice-cni
// process.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "cni-plugin/commands.h"

namespace sluice::cni {

// Each pending delete costs up to a VF netdev move, a DeletePort and an
// IPAM exec (a few ms each when sluiced answers); four keeps a DEL or ADD
// well inside the runtime's deadline while a backlog still drains.
inline constexpr size_t kMaxPendingDeletesPerRun = 4;

struct TeardownResult {
  bool finished = false;     // port gone, address released, record removed
  bool unreachable = false;  // sluiced did not answer: the record is pending
  absl::Status error;        // the first failure other than sluiced's absence
};

// Tears `record` down (its device-info file, VF netdev, port, socket,
// address, then the record itself); `netns` is where the VF netdev is (empty:
// the recorded one). When it cannot finish, the record is written back
// marked pending-delete.
TeardownResult teardownAttachment(CommandContext& c, AttachmentRecord record, std::string_view netns);

// Finishes up to kMaxPendingDeletesPerRun pending-delete records of this
// network, those tried least often first, skipping `skip` (the invocation's
// own attachment, just handled); stops once sluiced does not answer.
// Failures are logged: they never change the invocation's own result.
void retryPendingDeletes(CommandContext& c, const AttachmentId& skip);

}  // namespace sluice::cni
