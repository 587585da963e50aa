// sluice.v1.Observe: packet trace, the "what would happen" trace and packet
// capture, translated between the API and the core (PacketTaps, and the
// control's tables for TracePacket). API threads; Trace and Capture hold
// their handler thread for the session.
#pragma once

#include <functional>
#include <string>

#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/packet_taps.h"
#include "sluice/v1/observe.grpc.pb.h"

namespace sluice {

class ObserveService final : public v1::Observe::Service {
 public:
  // Names a call's caller for the log (e.g. its process and user).
  using DescribeCaller = std::function<std::string(const grpc::ServerContext&)>;

  ObserveService(DataplaneControl& control, PacketTaps& taps, DescribeCaller describe_caller = defaultCaller)
      : control_(control), taps_(taps), describe_caller_(std::move(describe_caller)) {}
  // What gRPC knows of the caller: its transport's peer address.
  static std::string defaultCaller(const grpc::ServerContext& ctx) { return ctx.peer(); }

  grpc::Status Trace(grpc::ServerContext* ctx, const v1::TraceRequest* req,
                     grpc::ServerWriter<v1::TraceRecord>* writer) override;
  grpc::Status TracePacket(grpc::ServerContext* ctx, const v1::TracePacketRequest* req,
                           v1::TraceRecord* resp) override;
  grpc::Status Capture(grpc::ServerContext* ctx, const v1::CaptureRequest* req,
                       grpc::ServerWriter<v1::CapturedPacket>* writer) override;

 private:
  // NOT_FOUND unless port_no is a port sluiced has now.
  grpc::Status checkPort(uint32_t port_no);

  DataplaneControl& control_;
  PacketTaps& taps_;
  DescribeCaller describe_caller_;
};

}  // namespace sluice
