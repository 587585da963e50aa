// The client side every command shares (client.h).
#include "dataplane/sluicectl/client.h"

#include <google/protobuf/util/json_util.h>

namespace po = boost::program_options;

namespace sluice::ctl {
namespace {

const char* codeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    default: return "ERROR";
  }
}

}  // namespace

Client::Client(const Globals& g)
    : globals_(g), channel_(grpc::CreateChannel("unix:" + g.socket, grpc::InsecureChannelCredentials())) {}

std::unique_ptr<grpc::ClientContext> Client::context() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(globals_.timeout_ms));
  return ctx;
}

int report(const grpc::Status& s, const Globals& g) {
  bool unreachable = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                     s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  if (unreachable)
    std::fprintf(stderr, "sluicectl: cannot reach sluiced at %s: %s\n", g.socket.c_str(), s.error_message().c_str());
  else
    std::fprintf(stderr, "sluicectl: %s: %s\n", codeName(s.error_code()), s.error_message().c_str());
  return unreachable ? kExitUnreachable : kExitError;
}

std::string toJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.always_print_primitive_fields = true;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return out;
}

void printJson(const google::protobuf::Message& m) { std::fputs(toJson(m).c_str(), stdout); }

po::variables_map parseOptions(const std::vector<std::string>& args, const po::options_description& options,
                               const std::vector<std::string>& positional) {
  po::options_description all = options;
  po::positional_options_description order;
  // Each positional word is an option of its own name (e.g. "PORT").
  for (const std::string& name : positional) {
    all.add_options()(name.c_str(), po::value<std::string>(), "");
    order.add(name.c_str(), 1);
  }
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(order).run(), vm);
  po::notify(vm);
  return vm;
}

uint32_t number(const std::string& name, const std::string& text) {
  size_t used = 0;
  unsigned long v = std::stoul(text, &used);
  if (used != text.size() || v > 0xffffffffUL) throw po::error(name + ": not a number: " + text);
  return static_cast<uint32_t>(v);
}

int64_t nowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace sluice::ctl
