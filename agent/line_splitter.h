// Splits a watch response's body, as curl hands it over in pieces of any
// size, into its newline-delimited JSON events (curl has already undone the
// chunked transfer encoding). A line longer than the limit is an error:
// the stream is garbage or hostile, and the caller drops the connection.
// Single-threaded (the watch thread).
#pragma once

#include <string>
#include <string_view>

namespace sluice::agent {

class LineSplitter {
 public:
  // Large enough for a Node of many labels, annotations and images.
  static constexpr size_t kDefaultMaxLine = 8 << 20;
  explicit LineSplitter(size_t max_line = kDefaultMaxLine) : max_line_(max_line) {}

  // Calls `line(view)` for every complete non-empty line in what has arrived
  // so far (without its "\n" or "\r\n"); stops early when it returns false.
  // Returns false when `line` did, or a line grew beyond the limit.
  template <typename F>
  bool feed(std::string_view data, F&& line) {
    size_t start = 0;
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] != '\n') continue;
      std::string_view piece = data.substr(start, i - start);
      start = i + 1;
      std::string_view whole = piece;
      if (!pending_.empty()) {
        pending_.append(piece);
        whole = pending_;
      }
      if (!whole.empty() && whole.back() == '\r') whole.remove_suffix(1);
      const bool go_on = whole.empty() || line(whole);
      pending_.clear();
      if (!go_on) return false;
    }
    pending_.append(data.substr(start));
    return pending_.size() <= max_line_;
  }
  // What arrived after the last newline (a stream cut off mid-event).
  const std::string& pending() const { return pending_; }
  void reset() { pending_.clear(); }

 private:
  size_t max_line_;
  std::string pending_;
};

}  // namespace sluice::agent
