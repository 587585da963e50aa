// The checkpoint's schema versions and the steps between them. A file that a
// sluiced of an older version wrote is brought to the current version one
// step at a time before it is read, so nothing it promised is discarded; a
// new version adds one migration (a function and its line in the list in
// checkpoint_migrations.cc) and raises kCheckpointVersion by one.
//
// The versions:
//   1  "ports" and the modules' sections ("vfs": the SR-IOV VF allocations).
//   2  adds "nodes": the remote nodes the API added to the VXLAN overlay
//      (overlay_module.h has the record's schema).
//   3  each port has "ipv6", the pod's IPv6 address ("" for none), and
//      "ip" may be "" (an IPv6-only attachment).
//   4  each port has "mtu" (0: the node's port-mtu) and
//      "source_validation" (whether the pod's sources are checked); readers
//      take an absent key as its default (0, true).
//   5  each port has "routed_prefixes", the CIDRs routed to it ([] for
//      none); readers take an absent key as [].
//
// Rollbacks. A file of a newer version is read only when it says so: its
// top-level "oldest_reader" names the oldest version whose sluiced keeps
// every promise of the file by reading the keys it knows and ignoring the
// rest (a step that only adds keys whose absence means what older sluiced
// did leaves kOldestCheckpointReader where it was). A port that needs a newer
// reader than the file does says so in its own "oldest_reader"; an older
// sluiced leaves that port out, names it, and keeps the others. A newer file
// without the key, or whose oldest reader is newer than this sluiced, is
// refused and left in place. The key is written only while it differs from
// "version": a sluiced from before the key treats unknown top-level keys as
// module sections and refuses scalars there.
#pragma once

#include <absl/status/status.h>

#include <cstdint>

#include <nlohmann/json.hpp>

namespace sluice {

// The version this sluiced writes, and the newest it reads.
inline constexpr uint64_t kCheckpointVersion = 5;
// The oldest version it reads (migrating it).
inline constexpr uint64_t kOldestCheckpointVersion = 1;
// The oldest version whose sluiced can read what this one writes (see
// "Rollbacks" above).
inline constexpr uint64_t kOldestCheckpointReader = 5;
static_assert(kOldestCheckpointReader <= kCheckpointVersion);

// Brings `doc`, a checkpoint document of version `from` (oldest..current),
// to kCheckpointVersion, "version" included. InvalidArgument, naming the
// step, when a step cannot make sense of the document (a corrupt file).
absl::Status migrateCheckpoint(nlohmann::json& doc, uint64_t from);

// Version 1 → 2: an empty "nodes" section (no version-1 sluiced kept remote
// nodes). A "nodes" key already there was no version-1 module's section and
// is kept as any unknown section was.
absl::Status migrateV1ToV2(nlohmann::json& doc);

// Version 2 → 3: every port gets "ipv6": "" (no version-2 sluiced served
// IPv6). A port that already has an "ipv6" key keeps it; a "ports" that is
// not an array, or a port that is not an object, is left for the reader to
// refuse with its own message.
absl::Status migrateV2ToV3(nlohmann::json& doc);

// Version 3 → 4: every port gets "mtu": 0 (no version-3 sluiced applied an
// MTU: the node's default) and "source_validation": true (none turned the
// check off). Keys already there are kept; odd shapes are left for the
// reader, as in migrateV2ToV3.
absl::Status migrateV3ToV4(nlohmann::json& doc);

// Version 4 → 5: every port gets "routed_prefixes": [] (no version-4
// sluiced routed prefixes to a port). Keys already there are kept; odd
// shapes are left for the reader, as in migrateV2ToV3.
absl::Status migrateV4ToV5(nlohmann::json& doc);

}  // namespace sluice
