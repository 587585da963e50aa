// GetConfig and SetConfig: sluiced's settings through RuntimeConfig, which
// owns the checks (the same conversion as the config file and flags) and
// the status codes; here only the translation to and from messages.
#include "dataplane/api/grpc_guard.h"
#include "dataplane/api/grpc_service.h"

namespace sluice {
namespace {

v1::ConfigSource toProto(ConfigSource source) {
  switch (source) {
    case ConfigSource::kDefault: return v1::CONFIG_SOURCE_DEFAULT;
    case ConfigSource::kFile: return v1::CONFIG_SOURCE_FILE;
    case ConfigSource::kFlag: return v1::CONFIG_SOURCE_FLAG;
    case ConfigSource::kApi: return v1::CONFIG_SOURCE_API;
  }
  return v1::CONFIG_SOURCE_UNSPECIFIED;
}

void fillSetting(const ConfigEntry& e, v1::ConfigSetting* out) {
  out->set_key(e.key);
  out->set_value(e.value);
  out->set_live(e.live);
  out->set_source(toProto(e.source));
}

grpc::Status noSettings() {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "this service was made without sluiced's settings");
}

}  // namespace

grpc::Status DataplaneService::GetConfig(grpc::ServerContext*, const v1::GetConfigRequest* req,
                                         v1::GetConfigResponse* resp) {
  return guarded([&] {
    if (settings_ == nullptr) return noSettings();
    if (!req->key().empty()) {
      auto entry = settings_->entry(req->key());
      if (!entry.ok()) return toGrpcStatus(entry.status());
      fillSetting(*entry, resp->add_settings());
      return grpc::Status::OK;
    }
    for (const ConfigEntry& e : settings_->entries()) fillSetting(e, resp->add_settings());
    return grpc::Status::OK;
  });
}

grpc::Status DataplaneService::SetConfig(grpc::ServerContext*, const v1::SetConfigRequest* req,
                                         v1::SetConfigResponse* resp) {
  return guarded([&] {
    if (settings_ == nullptr) return noSettings();
    auto entry = settings_->set(req->key(), req->value());
    if (!entry.ok()) return toGrpcStatus(entry.status());
    fillSetting(*entry, resp->mutable_setting());
    return grpc::Status::OK;
  });
}

}  // namespace sluice
