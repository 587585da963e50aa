#include "dataplane/api/grpc_observe.h"

#include <absl/strings/str_cat.h>
#include <arpa/inet.h>
#include <rte_ether.h>

#include <cstring>
#include <optional>

#include "common/log.h"
#include "common/net_address.h"
#include "dataplane/api/grpc_guard.h"
#include "dataplane/core/flow_control.h"
#include "dataplane/core/packet_spec.h"
#include "dataplane/core/would_happen.h"
#include "dataplane/datapath/drop_reason.h"
#include "dataplane/datapath/l3_forward.h"

namespace sluice {
namespace {

grpc::Status invalid(const std::string& what) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, what); }

std::string_view reasonName(size_t r) {
  return r < kDropReasonCount ? kDropReasonNames[r] : std::string_view("?");
}

// The fields a packet's key holds that decisions read, as describeMatch
// writes a megaflow's match.
std::string describeKey(const flow::FlowKey& key) {
  flow::FlowMask all{};
  all.in_port = 0xffff;
  all.eth_type = 0xffff;
  if (key.eth_type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
    all.ip_proto = 0xff;
    all.ttl_class = 0xff;
    all.ipv4_src = 0xffffffffU;
    all.ipv4_dst = 0xffffffffU;
    if (key.tp_src != 0 || key.tp_dst != 0) {
      all.tp_src = 0xffff;
      all.tp_dst = 0xffff;
    }
  }
  if (key.tun_src != 0) {
    all.tun_src = 0xffffffffU;
    all.tun_vni = 0xffffffffU;
  }
  return describeMatch(key, all);
}

const char* tierName(TraceTier t) {
  switch (t) {
    case TraceTier::kScreened: return "screened";
    case TraceTier::kRunHit: return "run";
    case TraceTier::kEmc: return "emc";
    case TraceTier::kSmc: return "smc";
    case TraceTier::kMegaflow: return "megaflow";
    case TraceTier::kMiss: return "miss";
  }
  return "?";
}

const char* upcallName(TraceUpcall u) {
  switch (u) {
    case TraceUpcall::kNone: return "";
    case TraceUpcall::kSent: return "sent";
    case TraceUpcall::kCoalesced: return "coalesced";
    case TraceUpcall::kLost: return "lost";
  }
  return "?";
}

// A decision made before lookup: next port, or kNextDrop and its reason.
void fillScreened(uint16_t next, DropReason reason, v1::TraceRecord* o) {
  o->set_megaflow(-1);
  if (next == kNextDrop) {
    o->set_output_port(-1);
    o->set_drop_reason(std::string(reasonName(static_cast<size_t>(reason))));
    o->set_actions("drop:" + std::string(reasonName(static_cast<size_t>(reason))));
  } else {
    o->set_output_port(next);
    o->set_actions(absl::StrCat("reply:", next));
  }
}

// A megaflow's (or translation's) actions.
void fillActions(const flow::MegaflowActions& a, const flow::FlowKey& mf_key, const flow::FlowMask& mf_mask,
                 v1::TraceRecord* o) {
  o->set_megaflow_match(describeMatch(mf_key, mf_mask));
  o->set_megaflow_mask(describeMask(mf_mask));
  o->set_actions(describeActions(a));
  if (a.kind == flow::MegaflowActions::Kind::kDrop) {
    o->set_output_port(-1);
    o->set_drop_reason(std::string(reasonName(a.drop_reason)));
  } else {
    o->set_output_port(a.out_port);
  }
}

void fillKey(const flow::FlowKey& key, uint8_t parse_result, v1::TraceRecord* o) {
  o->set_in_port(key.in_port);
  o->set_parse(std::string(flow::parseResultName(static_cast<flow::ParseResult>(parse_result))));
  o->set_key(describeKey(key));
  if (key.tun_src != 0) {
    o->set_decap(absl::StrCat("vni=", key.tun_vni, ",tun_src=", Ipv4Address::fromNetworkOrder(key.tun_src).toString()));
  }
}

void fillRecord(unsigned pmd, const TraceRecord& rec, uint64_t dropped, v1::TraceRecord* o) {
  o->set_pmd(pmd);
  o->set_length(rec.pkt_len);
  fillKey(rec.key, rec.parse_result, o);
  o->set_tier(tierName(rec.tier));
  o->set_upcall(upcallName(rec.upcall));
  o->set_dropped(dropped);
  if (rec.tier == TraceTier::kScreened) {
    fillScreened(rec.next, static_cast<DropReason>(rec.reason), o);
    return;
  }
  o->set_megaflow(rec.megaflow == flow::kNoMegaflow ? -1 : static_cast<int64_t>(rec.megaflow));
  fillActions(rec.actions, rec.mf_key, rec.mf_mask, o);
}

// The filter's text fields in the key's terms (network order).
std::optional<grpc::Status> parseFilter(const v1::TraceFilter& f, TapFilter& out) {
  auto address = [&](const std::string& text, const char* name, uint32_t& be) -> std::optional<grpc::Status> {
    if (text.empty()) return std::nullopt;
    std::optional<Ipv4Address> a = Ipv4Address::parse(text);
    if (!a) return invalid(absl::StrCat("filter ", name, "=", text, ": not an IPv4 address"));
    be = a->networkOrder();
    return std::nullopt;
  };
  if (auto e = address(f.src(), "src", out.ipv4_src)) return e;
  if (auto e = address(f.dst(), "dst", out.ipv4_dst)) return e;
  if (f.proto() == "tcp") out.ip_proto = 6;
  else if (f.proto() == "udp") out.ip_proto = 17;
  else if (f.proto() == "icmp") out.ip_proto = 1;
  else if (!f.proto().empty()) {
    int n = -1;
    try {
      size_t used = 0;
      n = std::stoi(f.proto(), &used);
      if (used != f.proto().size()) n = -1;
    } catch (const std::exception&) {
    }
    if (n < 1 || n > 255) return invalid(absl::StrCat("filter proto=", f.proto(), ": tcp, udp, icmp or 1-255"));
    out.ip_proto = static_cast<uint8_t>(n);
  }
  if (f.sport() > 0xffff || f.dport() > 0xffff) return invalid("filter ports: 0-65535");
  out.tp_src = htons(static_cast<uint16_t>(f.sport()));
  out.tp_dst = htons(static_cast<uint16_t>(f.dport()));
  return std::nullopt;
}

}  // namespace

grpc::Status ObserveService::checkPort(uint32_t port_no) {
  for (const PortStatsView& p : control_.stats().ports) {
    if (p.port_no == port_no) return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("no port ", port_no));
}

grpc::Status ObserveService::Trace(grpc::ServerContext* ctx, const v1::TraceRequest* req,
                                   grpc::ServerWriter<v1::TraceRecord>* writer) {
  return guarded([&] {
    if (grpc::Status s = checkPort(req->port_no()); !s.ok()) return s;
    TraceSpec spec;
    spec.port = static_cast<uint16_t>(req->port_no());
    spec.count = req->count() == 0 ? 1 : req->count();
    if (auto e = parseFilter(req->filter(), spec.filter)) return *e;
    // A trace shows the traced pod's addresses and ports: logged as a capture is.
    const std::string caller = describe_caller_(*ctx);
    logInfo("trace of port ", spec.port, " (up to ", spec.count, " records) started by ", caller);
    uint64_t records = 0;
    absl::Status s = taps_.trace(
        spec,
        [&](unsigned pmd, const TraceRecord& rec, uint64_t dropped) {
          v1::TraceRecord o;
          fillRecord(pmd, rec, dropped, &o);
          ++records;
          return writer->Write(o);
        },
        [&] { return ctx->IsCancelled(); });
    if (!s.ok()) {
      logInfo("trace of port ", spec.port, " by ", caller, " refused: ", s.message());
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, std::string(s.message()));
    }
    logInfo("trace of port ", spec.port, " by ", caller, " ended: ", records, " records sent",
            ctx->IsCancelled() ? " (cancelled by the caller)" : "");
    return grpc::Status::OK;
  });
}

grpc::Status ObserveService::TracePacket(grpc::ServerContext*, const v1::TracePacketRequest* req,
                                         v1::TraceRecord* resp) {
  return guarded([&] {
    absl::StatusOr<PacketSpec> spec = parsePacketSpec(req->packet());
    if (!spec.ok()) return invalid(std::string(spec.status().message()));
    if (grpc::Status s = checkPort(spec->in_port); !s.ok()) return s;
    // A packet from the port's pod, unless told otherwise: its own MAC.
    if (spec->eth_src_from_port) {
      for (const PortView& p : control_.listPorts())
        if (p.port_no == spec->in_port) std::memcpy(spec->frame.data() + 6, p.request.mac.bytes.data(), 6);
    }
    const WouldHappen w = wouldHappen(control_, spec->in_port, spec->frame);
    fillKey(w.key, static_cast<uint8_t>(w.parse), resp);
    resp->set_length(static_cast<uint32_t>(spec->frame.size()));
    if (w.arp || w.neighbor_discovery) {
      // Answered per packet from the port's own addresses; not predicted here.
      resp->set_tier("screened");
      resp->set_megaflow(-1);
      resp->set_output_port(-1);
      resp->set_actions(w.arp ? "arp:answered_in_place_or_dropped" : "nd:answered_in_place_or_dropped");
    } else if (w.screened) {
      resp->set_tier("screened");
      fillScreened(kNextDrop, w.reason, resp);
    } else {
      resp->set_tier("translate");
      resp->set_megaflow(-1);
      fillActions(w.translation.actions, flow::applyMask(w.key, w.translation.mask), w.translation.mask, resp);
    }
    return grpc::Status::OK;
  });
}

grpc::Status ObserveService::Capture(grpc::ServerContext* ctx, const v1::CaptureRequest* req,
                                     grpc::ServerWriter<v1::CapturedPacket>* writer) {
  return guarded([&] {
    if (grpc::Status s = checkPort(req->port_no()); !s.ok()) return s;
    CaptureSpec spec;
    spec.port = static_cast<uint16_t>(req->port_no());
    const std::string& dir = req->direction();
    if (dir.empty() || dir == "rx") {
      spec.rx = true;
      spec.tx = false;
    } else if (dir == "tx") {
      spec.rx = false;
      spec.tx = true;
    } else if (dir == "both") {
      spec.rx = spec.tx = true;
    } else {
      return invalid(absl::StrCat("direction ", dir, ": rx, tx or both"));
    }
    if (req->count() > kCaptureMaxPackets)
      return invalid(absl::StrCat("count ", req->count(), ": a capture takes at most ", kCaptureMaxPackets,
                                  " packets (0: that many)"));
    spec.count = req->count() == 0 ? kCaptureMaxPackets : req->count();
    spec.snaplen = req->snaplen() == 0 ? kCaptureSnapMax : std::min<uint32_t>(req->snaplen(), kCaptureSnapMax);
    // Who copied which pod's traffic, and how much, is left in the log.
    const std::string caller = describe_caller_(*ctx);
    logInfo("capture of port ", spec.port, " (", dir.empty() ? "rx" : dir, ", up to ", spec.count,
            " packets, snaplen ", spec.snaplen, ") started by ", caller);
    uint64_t packets = 0, dropped_total = 0;
    absl::Status s = taps_.capture(
        spec,
        [&](unsigned pmd, const CaptureSlot& slot, uint64_t time_ns, uint64_t dropped) {
          v1::CapturedPacket o;
          o.set_time_ns(time_ns);
          o.set_orig_len(slot.orig_len);
          o.set_data(slot.data, slot.cap_len);
          o.set_tx(slot.tx != 0);
          o.set_pmd(pmd);
          o.set_dropped(dropped);
          ++packets;
          dropped_total = dropped;
          return writer->Write(o);
        },
        [&] { return ctx->IsCancelled(); });
    if (!s.ok()) {
      logInfo("capture of port ", spec.port, " by ", caller, " refused: ", s.message());
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, std::string(s.message()));
    }
    logInfo("capture of port ", spec.port, " by ", caller, " ended: ", packets, " packets sent, ", dropped_total,
            " dropped", ctx->IsCancelled() ? " (cancelled by the caller)" : "");
    return grpc::Status::OK;
  });
}

}  // namespace sluice
