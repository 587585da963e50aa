#include "common/device_names.h"

#include <algorithm>
#include <cctype>

namespace sluice {
namespace {

bool isLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

bool isPciAddress(std::string_view t) {
  // 0000:3b:02.1 is 12 characters.
  if (t.size() != 12 || t[4] != ':' || t[7] != ':' || t[10] != '.') return false;
  if (!isLowerHex(t.substr(0, 4)) || !isLowerHex(t.substr(5, 2)) || !isLowerHex(t.substr(8, 2))) return false;
  // Device numbers are 5 bits (< 0x20), functions 3 bits.
  return t[8] <= '1' && t[11] >= '0' && t[11] <= '7';
}

bool isNetdevName(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ':' || c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0;
  });
}

}  // namespace sluice
