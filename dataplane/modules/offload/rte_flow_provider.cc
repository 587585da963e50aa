// rte_flow provider (see rte_flow_provider.h). Control path.
#include "dataplane/modules/offload/rte_flow_provider.h"

#include <absl/strings/str_cat.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "dataplane/core/rx_marks.h"
#include "dataplane/modules/offload/offload_provider_registry.h"

namespace sluice::offload {
namespace {

const rte_flow_attr kIngress = [] {
  rte_flow_attr a{};
  a.ingress = 1;
  return a;
}();

// rte_flow's error (message and cause) as text.
std::string flowError(int rc, const rte_flow_error& e) {
  const int code = rc < 0 ? -rc : rc;
  return absl::StrCat(e.message != nullptr ? e.message : "no message", " (", rte_strerror(code), ", type ",
                      static_cast<int>(e.type), ")");
}

absl::Status asStatus(int rc, const rte_flow_error& e, const char* what) {
  const std::string text = absl::StrCat(what, ": ", flowError(rc, e));
  const int code = rc < 0 ? -rc : rc;
  if (code == ENOTSUP || code == ENOSYS) return absl::UnimplementedError(text);
  if (code == ENOMEM || code == ENOSPC) return absl::ResourceExhaustedError(text);
  if (code == EEXIST) return absl::AlreadyExistsError(text);
  return absl::InvalidArgumentError(text);
}

}  // namespace

Capability RteFlowProvider::probe(uint16_t dpdk_port, uint16_t rx_queues) {
  rx_queues_[dpdk_port] = rx_queues;
  Capability cap;
  uint64_t features = RTE_ETH_RX_METADATA_USER_MARK;
  int rc = 0;
  // Asked before configure by whoever opened the port (asking now, after
  // configure, would fail with EBUSY), else asked here.
  if (auto answer = negotiatedUserMarks(dpdk_port)) {
    rc = answer->first;
    features = answer->second;
  } else {
    rc = rte_eth_rx_metadata_negotiate(dpdk_port, &features);
  }
  std::string negotiated;
  if (rc == 0) {
    if ((features & RTE_ETH_RX_METADATA_USER_MARK) == 0) {
      cap.reason = "rte_eth_rx_metadata_negotiate: the port cannot deliver user marks";
      return cap;
    }
    negotiated = "user marks negotiated";
  } else if (rc == -ENOTSUP) {
    // Drivers without the negotiation may still deliver marks: validate decides.
    negotiated = "rx metadata negotiation not supported by the driver";
  } else if (rc == -EBUSY) {
    // Negotiation must precede rte_eth_dev_configure; this port was
    // configured before offload attached. Validation still tells whether
    // the flow engine takes MARK at all.
    negotiated = "rx metadata negotiation refused: port already configured";
  } else {
    cap.reason = absl::StrCat("rte_eth_rx_metadata_negotiate: ", rte_strerror(-rc));
    return cap;
  }
  FlowPattern p;
  PatternItem& eth = p.add(RTE_FLOW_ITEM_TYPE_ETH);
  eth.spec.eth.hdr.ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
  eth.mask.eth.hdr.ether_type = 0xffff;
  PatternItem& ip = p.add(RTE_FLOW_ITEM_TYPE_IPV4);
  ip.spec.ipv4.hdr.dst_addr = RTE_BE32(0x0a000001);
  ip.mask.ipv4.hdr.dst_addr = 0xffffffffU;
  if (absl::Status s = validate(dpdk_port, p, 1); !s.ok()) {
    cap.reason = absl::StrCat(negotiated, "; ", s.message());
    return cap;
  }
  cap.supported = true;
  cap.reason = negotiated;
  return cap;
}

void RteFlowProvider::detach(uint16_t dpdk_port) {
  (void)flush(dpdk_port);
  rx_queues_.erase(dpdk_port);
  // The port id may later name another device.
  forgetUserMarks(dpdk_port);
}

absl::Status RteFlowProvider::validate(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) {
  auto it = rx_queues_.find(dpdk_port);
  MarkRssActions actions(mark, it != rx_queues_.end() ? it->second : 1);
  std::vector<rte_flow_item> items = pattern.items();
  rte_flow_error err{};
  const int rc = rte_flow_validate(dpdk_port, &kIngress, items.data(), actions.actions(), &err);
  if (rc != 0) return asStatus(rc, err, "rte_flow_validate");
  return absl::OkStatus();
}

absl::StatusOr<RuleHandle> RteFlowProvider::create(uint16_t dpdk_port, const FlowPattern& pattern, uint32_t mark) {
  auto it = rx_queues_.find(dpdk_port);
  MarkRssActions actions(mark, it != rx_queues_.end() ? it->second : 1);
  std::vector<rte_flow_item> items = pattern.items();
  rte_flow_error err{};
  rte_flow* f = rte_flow_create(dpdk_port, &kIngress, items.data(), actions.actions(), &err);
  if (f == nullptr) return asStatus(-rte_errno, err, "rte_flow_create");
  return reinterpret_cast<RuleHandle>(f);
}

absl::Status RteFlowProvider::destroy(uint16_t dpdk_port, RuleHandle rule) {
  rte_flow_error err{};
  const int rc = rte_flow_destroy(dpdk_port, reinterpret_cast<rte_flow*>(rule), &err);
  if (rc != 0) return asStatus(rc, err, "rte_flow_destroy");
  return absl::OkStatus();
}

absl::Status RteFlowProvider::flush(uint16_t dpdk_port) {
  rte_flow_error err{};
  const int rc = rte_flow_flush(dpdk_port, &err);
  if (rc != 0) return asStatus(rc, err, "rte_flow_flush");
  return absl::OkStatus();
}

}  // namespace sluice::offload

namespace {
std::unique_ptr<sluice::offload::OffloadProvider> makeRteFlowProvider(uint32_t max_flows) {
  (void)max_flows;  // the NIC's flow table is the NIC's
  return std::make_unique<sluice::offload::RteFlowProvider>();
}
}  // namespace

SLUICE_REGISTER_OFFLOAD_PROVIDER(rte_flow, makeRteFlowProvider);
