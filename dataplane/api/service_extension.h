// What a feature module adds to the core's own answers (sluice.v1.Dataplane):
// a port type it attaches itself, its fields of every port, its attachments
// in the port listing, its figures in GetStats and Health. The core's
// service calls every registered extension in turn and knows no module by
// name. API threads; a hook reads its module under the core's read lock
// (or opens a change, as AddPort does).
#pragma once

#include <grpcpp/support/status.h>

#include <optional>
#include <span>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {

class ServiceExtension {
 public:
  virtual ~ServiceExtension() = default;

  // An AddPort the module serves itself (e.g. an SR-IOV VF); nullopt: a
  // port type that is not the module's.
  virtual std::optional<grpc::Status> addPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp) {
    (void)req;
    (void)resp;
    return std::nullopt;
  }
  // Appends the module's attachments to ListPorts, after the core's ports.
  virtual void listPorts(v1::ListPortsResponse* resp) { (void)resp; }
  // Sets the module's fields of the ports an AddPort or ListPorts answers
  // (e.g. the overlay's MTU), once per answer.
  virtual void fillPorts(std::span<v1::Port* const> ports) { (void)ports; }
  virtual void fillStats(v1::GetStatsResponse* resp) { (void)resp; }
  virtual void fillHealth(v1::HealthResponse* resp) { (void)resp; }
};

}  // namespace sluice
