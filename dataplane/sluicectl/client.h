// What every sluicectl command uses: the global options, the channel to
// sluiced, one unary call printed as JSON or text, the error report and its
// exit code, and the one option parser (Boost.Program_options). Exit codes:
// 0 success, 1 the dataplane answered with an error or is not ready, 2 bad
// usage, 3 the dataplane could not be reached. The CLI's one thread.
#pragma once

#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace sluice::ctl {

struct Globals {
  std::string socket = "/var/run/sluice/sluice.sock";  // sluiced's API socket (--socket)
  bool json = false;                                   // print replies as JSON (--json)
  int timeout_ms = 5000;                               // deadline of each unary call (--timeout)
};

// Exit codes.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;

// One channel to sluiced; each command makes the stub of its service on it
// (the core's or its module's), so the client names no service.
class Client {
 public:
  explicit Client(const Globals& g);
  // A context with the --timeout deadline.
  std::unique_ptr<grpc::ClientContext> context() const;
  template <typename Stub>
  Stub stub() const {
    return Stub(channel_);
  }
  const Globals& globals() const { return globals_; }

 private:
  const Globals& globals_;
  std::shared_ptr<grpc::Channel> channel_;
};

// Prints the error and returns its exit code (3 if sluiced was not reached, else 1).
int report(const grpc::Status& s, const Globals& g);
std::string toJson(const google::protobuf::Message& m);
void printJson(const google::protobuf::Message& m);

// One unary call: print the reply as JSON or through `human`, or report the error.
template <typename Stub, typename Request, typename Response, typename Human>
int call(Client& client, grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Request&, Response*),
         const Request& request, Human human) {
  Response resp;
  Stub stub = client.stub<Stub>();
  grpc::Status s = (stub.*rpc)(client.context().get(), request, &resp);
  if (!s.ok()) return report(s, client.globals());
  // Rendered even for --json: `human` may also record what the exit code needs.
  std::string text = human(resp);
  if (client.globals().json) printJson(resp);
  else std::fputs(text.c_str(), stdout);
  return 0;
}

// The one option parser: `args` (a command's words after its name) against
// `options`, the leading words bound to `positional` in order (none: a
// positional word is bad usage). Throws boost::program_options::error.
boost::program_options::variables_map parseOptions(const std::vector<std::string>& args,
                                                   const boost::program_options::options_description& options,
                                                   const std::vector<std::string>& positional = {});

// `text` as a 32-bit unsigned number; bad usage (naming `name`) otherwise.
uint32_t number(const std::string& name, const std::string& text);

// The Unix time now (for ages in the listings).
int64_t nowUnix();

}  // namespace sluice::ctl
