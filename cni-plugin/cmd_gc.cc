// GC (spec 1.1): remove every attachment of this network that is not in
// "cni.dev/valid-attachments", and finish every pending delete. This
// network's attachments are those with a record under <dataDir>/<network>:
// the spec keys an attachment by network name, container id and ifname, and
// sluiced's ports carry no network name, so a port without a record here may
// belong to another network (another name, or another dataDir) and is never
// touched; sluiced itself removes ports whose pod netns is gone. Then the
// IPAM delegate gets its own GC when it speaks 1.1.0. Every stale attachment
// is torn down like a DEL, in the same order and with the same rule for its
// address (attachment_teardown.h), which is also why the delegate's GC waits
// until every stale port is confirmed gone; an error does not stop the others, the
// first one is returned; sluiced not answering stops GC (code 11).
#include <algorithm>
#include <set>

#include "cni-plugin/attachment_teardown.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/text.h"

namespace sluice::cni {

absl::Status runGc(CommandContext& c) {
  if (!c.conf.valid_attachments) {
    return cniError(ErrorCode::kInvalidConfig, "network config: \"cni.dev/valid-attachments\" is required for GC");
  }
  const std::set<AttachmentId> valid(c.conf.valid_attachments->begin(), c.conf.valid_attachments->end());
  absl::StatusOr<std::vector<AttachmentRecord>> records = c.store.list();
  if (!records.ok()) return records.status();

  absl::Status first_error;
  bool all_finished = true;
  for (AttachmentRecord& r : *records) {
    // A pending delete was DEL'd already, whatever the runtime lists now.
    if (valid.contains({r.container_id, r.ifname}) && !r.pending_delete) continue;
    c.log.info(cat("GC: removing stale attachment ", r.container_id, "/", r.ifname));
    TeardownResult done = teardownAttachment(c, std::move(r), "");
    if (done.unreachable) {
      return cniError(ErrorCode::kTryAgainLater, "GC: sluiced is not answering; the rest is left for later");
    }
    if (first_error.ok()) first_error = done.error;
    all_finished = all_finished && done.finished;
  }

  // The delegate's GC would release every address not in the valid list,
  // including those kept because their port is not confirmed gone.
  if (c.ipam != nullptr && !all_finished) c.log.warn("IPAM GC skipped while a stale attachment's teardown is unfinished");
  if (c.ipam != nullptr && all_finished) {
    absl::StatusOr<std::vector<std::string>> versions = c.ipam->supportedVersions();
    if (versions.ok() && std::find(versions->begin(), versions->end(), "1.1.0") != versions->end()) {
      if (absl::Status s = c.ipam->gc(c.stdin_data); !s.ok()) {
        c.log.error(std::string(s.message()));
        if (first_error.ok()) first_error = s;
      }
    }
  }
  return first_error;
}

}  // namespace sluice::cni
