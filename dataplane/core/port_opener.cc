#include "dataplane/core/port_opener.h"

#include "common/log.h"
#include "dataplane/core/crash_points.h"
#include "dataplane/core/port_files.h"

namespace sluice {
namespace {

// The driver enforces the MTU too where it can (a NIC's ethdev); the fast
// path enforces it on every packet routed to the port either way. A
// vhost-user port cannot: it has no MTU operation, and vhost-user passes the
// MTU from the front-end (the pod) to sluiced, never the other way.
void setMtu(PortBackend& backend, const CreatedPort& port, uint16_t port_no, uint32_t mtu) {
  absl::Status s = backend.setMtu(port, mtu);
  if (s.ok()) return;
  if (absl::IsUnimplemented(s)) {
    logDebug("port ", port_no, ": ", s.message(), "; MTU ", mtu, " is enforced by the fast path alone");
  } else {
    logWarning("port ", port_no, ": ", s.message(), "; MTU ", mtu, " is enforced by the fast path alone");
  }
}

}  // namespace

absl::StatusOr<OpenedPort> openPort(PortBackend& backend, const std::string& socket_dir, uint16_t port_no,
                                    const PortRequest& req, const std::string& socket_path) {
  // A vdev standing in for a pod (benchmarks, tests) has no files.
  const bool vdev = req.kind == PortKind::kDpdkVdev;
  absl::StatusOr<PortFiles> files = vdev ? absl::StatusOr<PortFiles>(PortFiles{{}, socket_path})
                                         : preparePortFiles(socket_dir, req, socket_path);
  if (!files.ok()) return files.status();
  crashPoint(CrashPoint::kAddPortBeforePortOpen);
  absl::StatusOr<CreatedPort> created =
      vdev ? backend.createVdev(port_no, req.devargs)
           : backend.createVhostUser(port_no, files->open_path, req.vhost_mode == VhostMode::kClient,
                                     static_cast<uint16_t>(req.queues));
  if (!created.ok()) {
    undoPortFiles(*files);
    return created.status();
  }
  if (absl::Status s = vdev ? absl::OkStatus() : setPortSocketGroup(req, *files); !s.ok()) {
    backend.destroy(*created);
    undoPortFiles(*files);
    return s;
  }
  setMtu(backend, *created, port_no, req.mtu);
  return OpenedPort{*created, std::move(files->dir)};
}

}  // namespace sluice
