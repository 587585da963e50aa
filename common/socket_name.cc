#include "common/socket_name.h"

#include "absl/strings/str_cat.h"

namespace sluice {

std::string ifnameFileComponent(const std::string& ifname) {
  std::string out;
  for (size_t i = 0; i < ifname.size(); ++i) {
    const char c = ifname[i];
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       c == '-' || (c == '.' && i > 0);
    if (plain) {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  return out;
}

}  // namespace sluice
