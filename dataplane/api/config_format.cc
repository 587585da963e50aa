#include "dataplane/api/config_format.h"

#include <algorithm>

namespace sluice {
namespace {

std::string sourceName(v1::ConfigSource source) {
  switch (source) {
    case v1::CONFIG_SOURCE_DEFAULT: return "default";
    case v1::CONFIG_SOURCE_FILE: return "file";
    case v1::CONFIG_SOURCE_FLAG: return "flag";
    case v1::CONFIG_SOURCE_API: return "api";
    default: return "?";
  }
}

std::string padded(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

}  // namespace

std::string formatConfig(const v1::GetConfigResponse& resp) {
  size_t key_width = 3, value_width = 5;
  for (const v1::ConfigSetting& s : resp.settings()) {
    key_width = std::max(key_width, s.key().size());
    value_width = std::max(value_width, s.value().size());
  }
  std::string out = padded("KEY", key_width) + "  " + padded("VALUE", value_width) + "  CHANGES  SOURCE\n";
  for (const v1::ConfigSetting& s : resp.settings())
    out += padded(s.key(), key_width) + "  " + padded(s.value(), value_width) + "  " +
           padded(s.live() ? "live" : "restart", 7) + "  " + sourceName(s.source()) + "\n";
  return out;
}

std::string formatConfigSet(const v1::SetConfigResponse& resp) {
  return resp.setting().key() + " = " + resp.setting().value() + " (in force)\n";
}

}  // namespace sluice
