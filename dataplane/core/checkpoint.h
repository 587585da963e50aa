// sluiced's promise to its pods, on disk: every allocation it has made
// (attachment → port number, type, vhost mode, socket, IP, MAC, pod, netns),
// so that a restarted sluiced restores the same ports before it serves the
// API. Control path only: DataplaneControl writes it within every change, before the API replies; sluiced's main reads it
// once at start.
//
// The file (<state-dir>/checkpoint.json) is replaced atomically: written to a
// temporary file in the same directory, fsynced, renamed over the old one,
// and the directory fsynced, so after a crash at any point the file is either
// the old or the new state, never a mix. (With checkpoint-fsync off the two
// fsyncs are skipped: rename alone is atomic against a process crash.) A file that cannot be read or parsed
// is moved aside (checkpoint.json.corrupt-<unix time>) and sluiced starts
// empty: a broken file must never keep the node's dataplane from starting.
//
// Versions (checkpoint_migrations.h lists them and what each changed): this
// sluiced writes kCheckpointVersion. A file of an older version is migrated
// step by step when read (and rewritten at the current version by the
// restore); nothing in it is discarded. A file of a NEWER version holds a
// newer sluiced's promises in a schema this one does not know: it is refused
// (FailedPrecondition, naming both versions and the file) and left in place
// byte for byte, never moved aside or overwritten, and sluiced does not start
// (a downgrade must not silently drop the pods' ports).
//
// Format (JSON, version 5):
//   {"format": "sluice-checkpoint", "version": 4,
//    "ports": [{"port_no": 0, "container_id": "...", "ifname": "net1",
//               "pod_namespace": "...", "pod_name": "...", "ip": "10.244.0.5",
//               "ipv6": "fd00:10:244::5" (empty: none; "ip" empty: IPv6 only),
//               "mac": "02:..", "type": "vhost-user", "vhost_mode": "server",
//               "socket_subdir": "...", "socket_path": "/var/run/...",
//               "netns": "/var/run/netns/...",
//               "socket_group": 2000 (only when the request named one),
//               "mtu": 1400 (0: the node's port-mtu),
//               "source_validation": true,
//               "routed_prefixes": ["10.100.0.0/16", "fd00:100::/48"]}],
//    "vfs": [ ...records of the SR-IOV module... ],
//    "nodes": [ ...remote nodes the API added to the VXLAN overlay... ]}
// Every other top-level key is a module's section (control_module.h), e.g.
// "vfs" for the SR-IOV VF allocations: an array of JSON objects whose schema
// belongs to the module (this file only requires each to be an object). A
// section whose module this sluiced does not run is kept as it was.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <map>
#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataplane/core/port_request.h"

namespace sluice {

// One port as checkpointed: the request as it arrived (re-validated against
// the configuration on restore), plus what sluiced derived from it.
struct CheckpointPort {
  uint16_t port_no = 0;         // the datapath port number (not the DPDK port id)
  RawPortRequest request;       // attachment, pod, ip, mac, type, vhost mode, subdir
  std::string socket_path;      // the vhost-user socket it had
  std::string netns;            // the pod's netns path, empty when unknown
};

struct CheckpointState {
  // The version the parsed text had (before migration); save() always
  // writes kCheckpointVersion.
  uint64_t read_version = 0;
  std::vector<CheckpointPort> ports;
  // Ports of a newer sluiced's file that need a newer reader than this one,
  // left out of `ports`: "container_id/ifname (needs version N)".
  std::vector<std::string> ports_left_out;
  // Modules' sections by key: arrays of objects whose schema is theirs.
  std::map<std::string, nlohmann::json> sections;
};

// Pure text ↔ state conversions (tested and fuzzed without files).
// parseCheckpoint migrates an older version; it returns InvalidArgument
// naming the first bad field (a corrupt file), or FailedPrecondition naming
// both versions when the text is of a newer version than this sluiced's
// that does not name this version as one that can read it.
std::string serializeCheckpoint(const CheckpointState& state);
absl::StatusOr<CheckpointState> parseCheckpoint(std::string_view text);

// What loading found.
struct CheckpointLoad {
  CheckpointState state;
  bool found = false;           // a checkpoint file existed
  std::string moved_aside_to;   // non-empty: the file was corrupt and now lives here
};

class CheckpointStore {
 public:
  // `dir` is the state directory; created (mode 0700) by load() or save().
  // `fsync`: also make each save durable against power loss (config key
  // checkpoint-fsync); without it a save is still atomic for readers and
  // against sluiced's own death.
  explicit CheckpointStore(std::string dir, bool fsync = true);
  // checkpoint-fsync changed while running: the next save follows it.
  void setFsync(bool fsync) { fsync_.store(fsync, std::memory_order_relaxed); }

  // A missing file is an empty state; an unreadable or corrupt one is logged
  // as an error, moved aside and treated as empty; an older version is
  // migrated. Fails only on a file of a newer version: FailedPrecondition,
  // naming the file and both versions, with the file left as it was (the
  // caller must not start without it). A temp file left by a save that was
  // killed before its rename is removed.
  absl::StatusOr<CheckpointLoad> load();
  // Atomically replaces the checkpoint; an error leaves the old file intact.
  absl::Status save(const CheckpointState& state);

  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }
  // Files this store put in place (renamed over the checkpoint) since it was
  // made: what a change costs on disk, for tests to count.
  uint64_t saves() const { return saves_.load(std::memory_order_relaxed); }

 private:
  std::string dir_;
  std::string path_;
  std::atomic<bool> fsync_;  // changes while sluiced runs (setFsync)
  std::atomic<uint64_t> saves_{0};
};

}  // namespace sluice
