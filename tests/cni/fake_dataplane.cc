// See fake_dataplane.h.
#include "tests/cni/fake_dataplane.h"

#include "common/net_address.h"

namespace sluice::cni::testing {

grpc::Status FakeDataplane::enter(const std::string& method, grpc::ServerContext* ctx) {
  std::unique_lock lock(mu_);
  calls_.push_back(method);
  // Wait until released or the client has gone (its deadline passed). The
  // sync API has no cancellation callback, so cancellation is polled.
  while (held_ && !ctx->IsCancelled()) released_.wait_for(lock, std::chrono::milliseconds(20));
  // A call whose client gave up changes nothing (so a test can tell whether
  // the plugin cleaned up after its own timed-out calls).
  if (ctx->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "client gave up");
  auto it = failures_.find(method);
  if (it != failures_.end()) return grpc::Status(it->second, "injected failure of " + method);
  return grpc::Status::OK;
}

grpc::Status FakeDataplane::AddPort(grpc::ServerContext* ctx, const v1::AddPortRequest* req,
                                    v1::AddPortResponse* resp) {
  if (grpc::Status s = enter("AddPort", ctx); !s.ok()) return s;
  std::lock_guard lock(mu_);
  add_requests_.push_back(*req);
  if (req->type() == v1::PORT_TYPE_SRIOV_VF) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "type: SR-IOV VFs are not supported yet");
  }
  if (req->ip().empty() && req->ipv6().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "ip or ipv6: required");
  }
  // sluiced's answer on a node without an IPv6 pod CIDR.
  if (!req->ipv6().empty() && !ipv6_enabled_) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "ipv6: this node has no IPv6 pod CIDR (config key pod-cidr-v6)");
  }
  auto key = std::make_pair(req->attachment().container_id(), req->attachment().ifname());
  if (auto it = ports_.find(key); it != ports_.end()) {
    *resp->mutable_port() = it->second;
    resp->set_created(false);
    return grpc::Status::OK;
  }
  if (ports_.size() >= max_ports_) return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "port table full");
  v1::Port port;
  port.set_port_no(next_port_no_++);
  *port.mutable_attachment() = req->attachment();
  port.set_pod_namespace(req->pod_namespace());
  port.set_pod_name(req->pod_name());
  port.set_ip(req->ip());
  port.set_ipv6(req->ipv6());
  auto ip = Ipv4Address::parse(req->ip());
  // An IPv6-only port's MAC: 02:00 and the address's last four bytes.
  std::string mac = req->mac();
  if (mac.empty() && ip) mac = MacAddress::fromIpv4(*ip).toString();
  if (auto ip6 = Ipv6Address::parse(req->ipv6()); mac.empty() && ip6) {
    mac = MacAddress{{0x02, 0x00, ip6->bytes[12], ip6->bytes[13], ip6->bytes[14], ip6->bytes[15]}}.toString();
  }
  port.set_mac(mac);
  port.set_type(req->type());
  port.set_vhost_mode(req->vhost_mode());
  const std::string& dir = socket_dir_override_.empty() ? socket_dir_ : socket_dir_override_;
  port.set_socket_path(dir + "/" + req->socket_subdir() + "/" + req->attachment().ifname() + ".sock");
  port.set_overlay_mtu(overlay_mtu_);
  *port.mutable_routed_prefixes() = req->routed_prefixes();
  ports_[key] = port;
  *resp->mutable_port() = port;
  resp->set_created(true);
  return grpc::Status::OK;
}

grpc::Status FakeDataplane::DeletePort(grpc::ServerContext* ctx, const v1::DeletePortRequest* req,
                                       v1::DeletePortResponse* resp) {
  if (grpc::Status s = enter("DeletePort", ctx); !s.ok()) return s;
  std::lock_guard lock(mu_);
  resp->set_deleted(ports_.erase({req->attachment().container_id(), req->attachment().ifname()}) > 0);
  return grpc::Status::OK;
}

grpc::Status FakeDataplane::ListPorts(grpc::ServerContext* ctx, const v1::ListPortsRequest*,
                                      v1::ListPortsResponse* resp) {
  if (grpc::Status s = enter("ListPorts", ctx); !s.ok()) return s;
  std::lock_guard lock(mu_);
  for (const auto& [key, port] : ports_) *resp->add_ports() = port;
  return grpc::Status::OK;
}

grpc::Status FakeDataplane::Health(grpc::ServerContext* ctx, const v1::HealthRequest*, v1::HealthResponse* resp) {
  if (grpc::Status s = enter("Health", ctx); !s.ok()) return s;
  std::lock_guard lock(mu_);
  resp->set_ready(ready_);
  resp->set_version("fake");
  resp->set_ports(static_cast<uint32_t>(ports_.size()));
  resp->set_max_ports(max_ports_);
  return grpc::Status::OK;
}

void FakeDataplane::failMethod(const std::string& method, grpc::StatusCode code) {
  std::lock_guard lock(mu_);
  failures_[method] = code;
}

void FakeDataplane::setReady(bool ready) {
  std::lock_guard lock(mu_);
  ready_ = ready;
}

void FakeDataplane::setMaxPorts(uint32_t max_ports) {
  std::lock_guard lock(mu_);
  max_ports_ = max_ports;
}

void FakeDataplane::hold() {
  std::lock_guard lock(mu_);
  held_ = true;
}

void FakeDataplane::release() {
  {
    std::lock_guard lock(mu_);
    held_ = false;
  }
  released_.notify_all();
}

void FakeDataplane::setSocketDirOverride(std::string dir) {
  std::lock_guard lock(mu_);
  socket_dir_override_ = std::move(dir);
}

void FakeDataplane::setIpv6(bool enabled) {
  std::lock_guard lock(mu_);
  ipv6_enabled_ = enabled;
}

void FakeDataplane::setOverlayMtu(uint32_t mtu) {
  std::lock_guard lock(mu_);
  overlay_mtu_ = mtu;
}

void FakeDataplane::injectPort(const std::string& container_id, const std::string& ifname, const std::string& ip) {
  std::lock_guard lock(mu_);
  v1::Port port;
  port.set_port_no(next_port_no_++);
  port.mutable_attachment()->set_container_id(container_id);
  port.mutable_attachment()->set_ifname(ifname);
  port.set_ip(ip);
  port.set_mac(MacAddress::fromIpv4(*Ipv4Address::parse(ip)).toString());
  port.set_type(v1::PORT_TYPE_VHOST_USER);
  ports_[{container_id, ifname}] = port;
}

void FakeDataplane::dropPort(const std::string& container_id, const std::string& ifname) {
  std::lock_guard lock(mu_);
  ports_.erase({container_id, ifname});
}

void FakeDataplane::setMac(const std::string& container_id, const std::string& ifname, const std::string& mac) {
  std::lock_guard lock(mu_);
  ports_.at({container_id, ifname}).set_mac(mac);
}

std::vector<v1::Port> FakeDataplane::ports() const {
  std::lock_guard lock(mu_);
  std::vector<v1::Port> out;
  for (const auto& [key, port] : ports_) out.push_back(port);
  return out;
}

std::vector<std::string> FakeDataplane::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

std::vector<v1::AddPortRequest> FakeDataplane::addRequests() const {
  std::lock_guard lock(mu_);
  return add_requests_;
}

FakeServer::FakeServer(FakeDataplane& service, const std::string& socket_path) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  server_ = builder.BuildAndStart();
}

FakeServer::~FakeServer() { stop(); }

void FakeServer::stop() {
  if (server_) {
    // Held calls end when their clients' deadlines pass; don't wait longer.
    server_->Shutdown(std::chrono::system_clock::now());
    server_.reset();
  }
}

}  // namespace sluice::cni::testing
