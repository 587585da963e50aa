// The SR-IOV module's gRPC side: its own service, sluice.v1.Sriov (ListVfs),
// and its part of the core's answers (AddPort of a VF, VF attachments in
// ListPorts). Translation only; runs on gRPC's threads.
#pragma once

#include "dataplane/modules/sriov/sriov_module.h"
#include "sluice/v1/dataplane.pb.h"
#include "sluice/v1/sriov.grpc.pb.h"

namespace sluice {

class SriovService final : public v1::Sriov::Service {
 public:
  explicit SriovService(SriovModule& sriov) : sriov_(sriov) {}

  grpc::Status ListVfs(grpc::ServerContext*, const v1::ListVfsRequest*, v1::ListVfsResponse*) override;

  // AddPort of type PORT_TYPE_SRIOV_VF.
  grpc::Status addVfPort(const v1::AddPortRequest& req, v1::AddPortResponse* resp);
  // The VF attachments, appended to a port listing.
  void listAttachments(v1::ListPortsResponse* resp);

 private:
  SriovModule& sriov_;
};

// A VF attachment's fields of a Port message.
void fillVfFields(const sriov::VfAttachment& vf, v1::Port* out);

}  // namespace sluice
