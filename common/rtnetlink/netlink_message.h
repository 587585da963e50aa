// The rtnetlink wire format, both ways, for the two places that talk to the
// kernel over raw NETLINK_ROUTE sockets (no libnl): sluice-cni's link,
// address and route requests, and sluiced's SR-IOV PF control. Building a
// request and reading the replies are pure functions over bytes, so that
// each user can test its requests to the byte. Plain C++: sluice-cni links
// it statically.
#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sluice::rtnetlink {

// One request being built: header, family message, attributes (netlink is
// in host byte order). Every request asks for an acknowledgement.
class RequestBuilder {
 public:
  // flags: besides NLM_F_REQUEST | NLM_F_ACK (e.g. NLM_F_CREATE).
  RequestBuilder(uint16_t type, uint16_t flags, uint32_t seq);

  // The family message (ifinfomsg, ifaddrmsg, rtmsg), padded to alignment.
  template <typename T>
  void addFamilyMessage(const T& message) {
    append(&message, sizeof(T));
    pad();
  }
  void addAttribute(uint16_t type, const void* data, size_t len);
  // An attribute holding attributes: what is added between beginNested and
  // endNested(its result) goes inside.
  size_t beginNested(uint16_t type);
  void endNested(size_t nested);
  // The request, its length filled in.
  std::vector<uint8_t> finish() &&;

 private:
  void append(const void* data, size_t len);
  void pad();
  std::vector<uint8_t> buf_;
};

// The messages of one datagram from the kernel, in order. Defensive: the
// bytes are read bounds-checked although they come from the kernel.
class ReplyReader {
 public:
  explicit ReplyReader(std::span<const uint8_t> datagram) : datagram_(datagram) {}
  // The next message (header copied out, message = header and payload);
  // false at the end of the datagram, or at a message whose length field
  // does not fit in what is left of it (then malformed()).
  bool next(nlmsghdr& header, std::span<const uint8_t>& message);
  bool malformed() const { return malformed_; }

 private:
  std::span<const uint8_t> datagram_;
  size_t offset_ = 0;
  bool malformed_ = false;
};

// The error field of an NLMSG_ERROR message: 0 acknowledges success, a
// negative errno refuses the request; nullopt when the message is too short
// to hold it.
std::optional<int> ackError(std::span<const uint8_t> message);

}  // namespace sluice::rtnetlink
