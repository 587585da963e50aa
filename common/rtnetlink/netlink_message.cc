// See netlink_message.h.
#include "common/rtnetlink/netlink_message.h"

#include <linux/rtnetlink.h>

#include <cstring>

namespace sluice::rtnetlink {

RequestBuilder::RequestBuilder(uint16_t type, uint16_t flags, uint32_t seq) {
  nlmsghdr hdr{};
  hdr.nlmsg_type = type;
  hdr.nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags);
  hdr.nlmsg_seq = seq;
  append(&hdr, sizeof hdr);
}

// resize + memcpy rather than insert(): GCC 12 warns (wrongly) about
// insert() of a few bytes into a vector that may be empty.
void RequestBuilder::append(const void* data, size_t len) {
  const size_t at = buf_.size();
  buf_.resize(at + len);
  std::memcpy(buf_.data() + at, data, len);
}

void RequestBuilder::pad() { buf_.resize(NLMSG_ALIGN(buf_.size()), 0); }

void RequestBuilder::addAttribute(uint16_t type, const void* data, size_t len) {
  const size_t nested = beginNested(type);
  append(data, len);
  endNested(nested);
}

size_t RequestBuilder::beginNested(uint16_t type) {
  const size_t at = buf_.size();
  const rtattr header{0, type};  // length filled in by endNested
  append(&header, sizeof header);
  return at;
}

void RequestBuilder::endNested(size_t nested) {
  const auto len = static_cast<unsigned short>(buf_.size() - nested);
  std::memcpy(buf_.data() + nested + offsetof(rtattr, rta_len), &len, sizeof len);
  pad();
}

std::vector<uint8_t> RequestBuilder::finish() && {
  const auto len = static_cast<uint32_t>(buf_.size());
  std::memcpy(buf_.data() + offsetof(nlmsghdr, nlmsg_len), &len, sizeof len);
  return std::move(buf_);
}

bool ReplyReader::next(nlmsghdr& header, std::span<const uint8_t>& message) {
  if (malformed_ || offset_ + sizeof(nlmsghdr) > datagram_.size()) return false;
  std::memcpy(&header, datagram_.data() + offset_, sizeof header);
  if (header.nlmsg_len < sizeof(nlmsghdr) || offset_ + header.nlmsg_len > datagram_.size()) {
    malformed_ = true;
    return false;
  }
  message = datagram_.subspan(offset_, header.nlmsg_len);
  offset_ += NLMSG_ALIGN(header.nlmsg_len);
  return true;
}

std::optional<int> ackError(std::span<const uint8_t> message) {
  if (message.size() < NLMSG_LENGTH(sizeof(int))) return std::nullopt;
  int error = 0;
  std::memcpy(&error, message.data() + NLMSG_HDRLEN, sizeof error);
  return error;
}

}  // namespace sluice::rtnetlink
