#include "dataplane/modules/offload/offload_module.h"

#include <absl/strings/str_cat.h>

#include "common/log.h"

namespace sluice {

OffloadModule::OffloadModule(DataplaneControl& core, offload::OffloadManager& manager, Target target)
    : core_(core), manager_(manager), target_(std::move(target)) {
  core_.registerModule(this);
  core_.setFlowOffload(&manager_);
}

OffloadModule::~OffloadModule() {
  DataplaneControl::Change change(core_);
  if (attached_) manager_.detachPort(*attached_);
  core_.unregisterModuleLocked(this);
}

void OffloadModule::portAdded(uint16_t port_no, const PortRequest& request, std::optional<uint16_t> dpdk_port) {
  const bool wanted =
      target_.port_no ? *target_.port_no == port_no
                      : !target_.attachment.empty() &&
                            absl::StrCat(request.attachment.container_id, "/", request.attachment.ifname) ==
                                target_.attachment;
  if (!wanted) return;
  if (!dpdk_port) {
    // A vhost-user port on the vhost library has no ethdev to mark on
    // (sluiced makes pod ports ethdevs when offload-port names a pod).
    logWarning("offload: port ", port_no, " has no ethdev: nothing of it is offloaded");
    return;
  }
  // The port's packets get marks (the provider probes it once here).
  // A target by port number is the overlay's uplink (offload-port empty).
  manager_.attachPort(port_no, *dpdk_port, 1, target_.port_no.has_value());
  attached_ = port_no;
}

void OffloadModule::portClosing(uint16_t port_no) {
  if (attached_ != port_no) return;
  manager_.detachPort(port_no);  // its rules go before the port
  attached_.reset();
}

bool OffloadModule::tick(std::chrono::steady_clock::time_point) {
  offload::PmdGracePeriods& grace = manager_.pmdGracePeriods();
  if (const uint64_t token = grace.outstanding(); token != 0) {
    core_.assertInChange();  // ticks run within the flow thread's change
    core_.quiesceLocked();
    grace.complete(token);
  }
  return false;
}

}  // namespace sluice
