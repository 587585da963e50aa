// An in-process fake of sluiced's sluice.v1.Dataplane gRPC service for the
// sluice-cni tests, served on a temporary unix socket. It keeps ports like
// sluiced does (AddPort idempotent per attachment, DeletePort of an unknown
// attachment succeeds), records every call, and can be told to fail a
// method with a given code or to hold calls until released (a busy sluiced).
// gRPC server threads call the service; tests read it under its mutex.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice::cni::testing {

class FakeDataplane final : public v1::Dataplane::Service {
 public:
  explicit FakeDataplane(std::string socket_dir) : socket_dir_(std::move(socket_dir)) {}

  grpc::Status AddPort(grpc::ServerContext*, const v1::AddPortRequest* req, v1::AddPortResponse* resp) override;
  grpc::Status DeletePort(grpc::ServerContext*, const v1::DeletePortRequest* req,
                          v1::DeletePortResponse* resp) override;
  grpc::Status ListPorts(grpc::ServerContext*, const v1::ListPortsRequest*, v1::ListPortsResponse* resp) override;
  grpc::Status Health(grpc::ServerContext*, const v1::HealthRequest*, v1::HealthResponse* resp) override;

  // Knobs (thread-safe).
  void failMethod(const std::string& method, grpc::StatusCode code);
  void setReady(bool ready);
  void setMaxPorts(uint32_t max_ports);
  // While held, every call blocks until release() (or the client gives up).
  void hold();
  void release();
  // Overrides what AddPort reports as the socket path (socketDir mismatch).
  void setSocketDirOverride(std::string dir);
  // Whether AddPort takes an IPv6 address (false: it refuses one as a
  // sluiced without pod-cidr-v6 does). Default true.
  void setIpv6(bool enabled);
  // What AddPort reports as the overlay MTU (0: no VXLAN overlay, the default).
  void setOverlayMtu(uint32_t mtu);
  // Adds a port directly, as if another client had created it.
  void injectPort(const std::string& container_id, const std::string& ifname, const std::string& ip);
  // Removes a port behind the plugin's back (CHECK of a lost port).
  void dropPort(const std::string& container_id, const std::string& ifname);
  // Changes the MAC of an existing port (CHECK mismatch).
  void setMac(const std::string& container_id, const std::string& ifname, const std::string& mac);

  // Observations (thread-safe copies).
  std::vector<v1::Port> ports() const;
  std::vector<std::string> calls() const;
  std::vector<v1::AddPortRequest> addRequests() const;

 private:
  // Records the call, honours hold/fail; returns the failure to answer with.
  grpc::Status enter(const std::string& method, grpc::ServerContext* ctx);

  mutable std::mutex mu_;
  std::condition_variable released_;
  std::string socket_dir_;                                   // what a port's socket path starts with
  std::string socket_dir_override_;                          // non-empty: report this dir instead
  uint32_t overlay_mtu_ = 0;  // reported in every AddPort response
  bool ipv6_enabled_ = true;  // the node has an IPv6 pod CIDR
  std::map<std::pair<std::string, std::string>, v1::Port> ports_;  // by (container id, ifname)
  std::vector<std::string> calls_;                           // method names, in call order
  std::vector<v1::AddPortRequest> add_requests_;             // every AddPort request received
  std::map<std::string, grpc::StatusCode> failures_;         // method → code to answer with
  bool held_ = false;
  bool ready_ = true;
  uint32_t max_ports_ = 64;
  uint32_t next_port_no_ = 1;
};

// Serves a FakeDataplane on unix:<path> until destroyed.
class FakeServer {
 public:
  FakeServer(FakeDataplane& service, const std::string& socket_path);
  ~FakeServer();
  void stop();

 private:
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace sluice::cni::testing
