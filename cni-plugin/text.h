// String building for sluice-cni messages. Debian's Abseil is built with its
// own absl::string_view (not std::string_view), so absl::StrCat does not take
// our std::string_view values; this small variadic concatenation takes both,
// plus integers. Used by the single thread of the sluice-cni process.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace sluice::cni {

namespace text_internal {
inline void append(std::string& out, std::string_view s) { out.append(s); }
inline void append(std::string& out, const char* s) { out.append(s); }
inline void append(std::string& out, const std::string& s) { out.append(s); }
inline void append(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void append(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>)
void append(std::string& out, T n) {
  out.append(std::to_string(n));
}
}  // namespace text_internal

template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (text_internal::append(out, parts), ...);
  return out;
}

// absl::string_view (Status::message()) as std::string_view.
inline std::string_view sv(absl::string_view s) { return {s.data(), s.size()}; }
// std::string_view as absl::string_view (Status constructor, payload URLs).
inline absl::string_view asv(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace sluice::cni
