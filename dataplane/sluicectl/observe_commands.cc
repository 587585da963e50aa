// `trace` and `capture`: what sluice.v1.Observe shows of a port's packets,
// as they arrive (no deadline: they wait for packets).
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "dataplane/api/observe_format.h"
#include "dataplane/api/pcap_writer.h"
#include "dataplane/sluicectl/client.h"
#include "dataplane/sluicectl/command.h"
#include "sluice/v1/observe.grpc.pb.h"

namespace sluice::ctl {
namespace {

namespace po = boost::program_options;
namespace v1 = sluice::v1;

// Packets `capture` takes when no --count is given.
constexpr uint32_t kDefaultCaptureCount = 100;
// The largest snap length, and the default.
constexpr uint32_t kMaxSnaplen = 2048;

// An option's value as a string, or `fallback` when absent.
std::string optionOr(const po::variables_map& vm, const char* name, const std::string& fallback) {
  return vm.count(name) != 0 ? vm[name].as<std::string>() : fallback;
}

// `trace PORT ...`: trace records until N.
int tracePort(Client& client, const Args& args) {
  po::options_description desc("trace");
  desc.add_options()("count", po::value<std::string>(), "")("src", po::value<std::string>(), "")(
      "dst", po::value<std::string>(), "")("proto", po::value<std::string>(), "")("sport", po::value<std::string>(), "")(
      "dport", po::value<std::string>(), "");
  po::variables_map vm = parseOptions(args, desc, {"PORT"});
  if (vm.count("PORT") == 0) throw po::error("trace needs a PORT or --packet SPEC");
  v1::TraceRequest req;
  req.set_port_no(number("PORT", vm["PORT"].as<std::string>()));
  req.set_count(vm.count("count") != 0 ? number("--count", vm["count"].as<std::string>()) : 1);
  req.mutable_filter()->set_src(optionOr(vm, "src", ""));
  req.mutable_filter()->set_dst(optionOr(vm, "dst", ""));
  req.mutable_filter()->set_proto(optionOr(vm, "proto", ""));
  if (vm.count("sport") != 0) req.mutable_filter()->set_sport(number("--sport", vm["sport"].as<std::string>()));
  if (vm.count("dport") != 0) req.mutable_filter()->set_dport(number("--dport", vm["dport"].as<std::string>()));
  auto stub = client.stub<v1::Observe::Stub>();
  grpc::ClientContext ctx;  // no deadline: it waits for packets
  auto reader = stub.Trace(&ctx, req);
  v1::TraceRecord r;
  uint32_t n = 0;
  while (reader->Read(&r)) {
    if (client.globals().json) printJson(r), std::fputs("\n", stdout);
    else std::fputs(sluice::formatTraceRecord(r, ++n).c_str(), stdout);
    std::fflush(stdout);
  }
  grpc::Status s = reader->Finish();
  return s.ok() ? 0 : report(s, client.globals());
}

// `trace --packet SPEC`: asks once; nothing is sent.
int tracePacket(Client& client, const Args& args) {
  v1::TracePacketRequest req;
  req.set_packet(args[0]);
  return call(client, &v1::Observe::Stub::TracePacket, req,
              [](const v1::TraceRecord& r) { return sluice::formatTraceRecord(r, 0); });
}

// `capture PORT ... -w FILE|-`: pcap, written as packets arrive.
int capturePort(Client& client, const Args& args) {
  po::options_description desc("capture");
  desc.add_options()("direction", po::value<std::string>(), "")("count", po::value<std::string>(), "")(
      "snaplen", po::value<std::string>(), "")(",w", po::value<std::string>(), "");
  po::variables_map vm = parseOptions(args, desc, {"PORT"});
  if (vm.count("PORT") == 0) throw po::error("capture needs a PORT");
  v1::CaptureRequest req;
  req.set_port_no(number("PORT", vm["PORT"].as<std::string>()));
  if (vm.count("-w") == 0) throw po::error("capture needs -w FILE (or -w - for stdout)");
  const std::string file = vm["-w"].as<std::string>();
  req.set_direction(optionOr(vm, "direction", "rx"));
  // A bound by default: a forgotten capture stops by itself.
  req.set_count(vm.count("count") != 0 ? number("--count", vm["count"].as<std::string>()) : kDefaultCaptureCount);
  req.set_snaplen(vm.count("snaplen") != 0 ? number("--snaplen", vm["snaplen"].as<std::string>()) : kMaxSnaplen);
  std::FILE* out = stdout;
  if (file != "-") {
    // A new file only, owner-only: run as root, following a symlink or
    // truncating an existing file would let whoever made that path choose
    // what a root-written capture overwrites.
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      const int err = errno;
      if (err == EEXIST || err == ELOOP)
        std::fprintf(stderr, "sluicectl: %s already exists (a file or a symlink): capture writes only a new file\n",
                     file.c_str());
      else
        std::fprintf(stderr, "sluicectl: cannot create %s: %s\n", file.c_str(), std::strerror(err));
      return kExitError;
    }
    out = ::fdopen(fd, "wb");
    if (out == nullptr) {
      std::fprintf(stderr, "sluicectl: cannot write %s: %s\n", file.c_str(), std::strerror(errno));
      ::close(fd);
      return kExitError;
    }
  }
  sluice::PcapWriter pcap(out, req.snaplen() == 0 || req.snaplen() > kMaxSnaplen ? kMaxSnaplen : req.snaplen());
  auto stub = client.stub<v1::Observe::Stub>();
  grpc::ClientContext ctx;  // no deadline: it waits for packets
  auto reader = stub.Capture(&ctx, req);
  v1::CapturedPacket p;
  uint64_t n = 0, dropped = 0;
  while (reader->Read(&p)) {
    ++n;
    dropped = p.dropped();
    if (!pcap.write(p.time_ns(), p.orig_len(), p.data())) {
      ctx.TryCancel();
      break;
    }
  }
  grpc::Status s = reader->Finish();
  if (out != stdout) std::fclose(out);
  std::fprintf(stderr, "sluicectl: %llu packets captured, %llu dropped (capture ring full)\n",
               static_cast<unsigned long long>(n), static_cast<unsigned long long>(dropped));
  if (!pcap.ok()) {
    std::fprintf(stderr, "sluicectl: writing the pcap failed\n");
    return kExitError;
  }
  return s.ok() || s.error_code() == grpc::StatusCode::CANCELLED ? 0 : report(s, client.globals());
}

}  // namespace

SLUICECTL_COMMAND(trace_port, {.words = {"trace"},
                               .synopsis = "PORT [--count N] [--src A] [--dst A] [--proto tcp|udp|icmp|N] [--sport N] [--dport N]",
                               .help = "the next N packets received on PORT: parse, tier, megaflow, actions, output",
                               .run = tracePort});
SLUICECTL_COMMAND(trace_packet, {.words = {"trace", "--packet"},
                                 .synopsis = "'in_port=P,src=A,dst=A,proto=udp,sport=N,dport=N,ttl=N' (or 'in_port=P,hex=FRAME')",
                                 .help = "what the tables in force would do with that packet (nothing is sent)",
                                 .min_args = 1,
                                 .max_args = 1,
                                 .run = tracePacket});
SLUICECTL_COMMAND(capture, {.words = {"capture"},
                            .synopsis = "PORT [--direction rx|tx|both] [--count N] [--snaplen N] -w FILE|-",
                            .help = "packets of PORT as pcap (- : stdout, e.g. | tcpdump -r -); Ctrl-C stops\n"
                                    "N packets (default 100, at most 100000); FILE must not exist yet",
                            .run = capturePort});

}  // namespace sluice::ctl
