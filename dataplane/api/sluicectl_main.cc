// sluicectl: the operator's CLI for a node's sluiced, over the same gRPC API
// the CNI plugin uses (so `kubectl exec ds/sluice -- sluicectl stats` works).
// Exit codes: 0 success, 1 the dataplane answered with an error or is not
// ready, 2 bad usage, 3 the dataplane could not be reached.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <boost/program_options.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <unistd.h>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "dataplane/api/config_format.h"
#include "dataplane/api/nodes_format.h"
#include "dataplane/api/observe_format.h"
#include "dataplane/api/pcap_writer.h"
#include "dataplane/api/stats_format.h"
#include "sluice/v1/dataplane.grpc.pb.h"
#include "sluice/v1/observe.grpc.pb.h"
#include "sluice/v1/overlay.grpc.pb.h"
#include "sluice/v1/sriov.grpc.pb.h"

namespace po = boost::program_options;
namespace v1 = sluice::v1;

namespace {

// Packets `capture` takes when no --count is given.
constexpr uint32_t kDefaultCaptureCount = 100;

int64_t nowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr char kUsage[] =
    "usage: sluicectl [--socket PATH] [--json] [--timeout MS] COMMAND\n"
    "commands:\n"
    "  stats              per-PMD cycles/packet, batches, per-port and per-reason counters\n"
    "  stats clear        reset the counters\n"
    "  ports              list ports\n"
    "  pmd                each PMD's load and the pod ports it polls (share of its packets, pinned or placed)\n"
    "  flows              list megaflows (match, actions, packets, bytes, idle time)\n"
    "  health             exit 0 if the dataplane is ready\n"
    "  port add --container-id ID --ifname NAME [--ip A.B.C.D] [--ipv6 ADDR] [--mac M] [--mode server|client]\n"
    "           [--namespace NS] [--pod NAME] [--socket-subdir DIR] [--devargs net_null,no-rx=1]\n"
    "           [--mtu 68..9216 (default: sluiced's port-mtu)]\n"
    "           [--no-source-validation]  (the pod may send with any source MAC and IP: a router)\n"
    "           [--routed-prefix CIDR...]  (routed to the pod, IPv4 or IPv6: a UPF's UE pool; repeatable)\n"
    "           [--pmd N]  (pin the port's rx queues to PMD N; default: the least busy PMD, where it stays)\n"
    "           [--queues N]  (queue pairs, 1..sluiced's max-queues-per-port; default 1)\n"
    "  vfs                SR-IOV VFs of the pools: PF, index, PCI address, netdev, holder\n"
    "  port del --container-id ID --ifname NAME\n"
    "  nodes              remote nodes (source, VTEP, CIDRs, next hop, age), node controller state\n"
    "  node add --name N --vtep IP --pod-cidr CIDR [--pod-cidr CIDR...] [--mac M]   (VTEP of the underlay's family; CIDRs IPv4 or IPv6)\n"
    "           [--routed-prefix CIDR...]  (prefixes its pods own, routed toward it as its pod CIDRs)\n"
    "  node del --name N\n"
    "  config get [KEY]   settings: value, live (changes now) or restart (at sluiced's next start), source\n"
    "  config set KEY VALUE  change a live setting while sluiced runs\n"
    "  trace PORT [--count N] [--src A] [--dst A] [--proto tcp|udp|icmp|N] [--sport N] [--dport N]\n"
    "                     the next N packets received on PORT: parse, tier, megaflow, actions, output\n"
    "  trace --packet 'in_port=P,src=A,dst=A,proto=udp,sport=N,dport=N,ttl=N' (or 'in_port=P,hex=FRAME')\n"
    "                     what the tables in force would do with that packet (nothing is sent)\n"
    "  capture PORT [--direction rx|tx|both] [--count N] [--snaplen N] -w FILE|-\n"
    "                     packets of PORT as pcap (- : stdout, e.g. | tcpdump -r -); Ctrl-C stops\n"
    "                     N packets (default 100, at most 100000); FILE must not exist yet\n";

struct Globals {
  std::string socket = "/var/run/sluice/sluice.sock";
  bool json = false;
  int timeout_ms = 5000;
};

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

int report(const grpc::Status& s, const Globals& g) {
  bool unreachable = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                     s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  if (unreachable)
    std::fprintf(stderr, "sluicectl: cannot reach sluiced at %s: %s\n", g.socket.c_str(), s.error_message().c_str());
  else
    std::fprintf(stderr, "sluicectl: %s: %s\n", codeName(s.error_code()), s.error_message().c_str());
  return unreachable ? 3 : 1;
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

// One channel to sluiced; a stub per service on it (the core's, and each
// module's).
struct Client {
  explicit Client(const Globals& g)
      : globals(g),
        channel(grpc::CreateChannel("unix:" + g.socket, grpc::InsecureChannelCredentials())),
        stub(v1::Dataplane::NewStub(channel)),
        remote_nodes(v1::RemoteNodes::NewStub(channel)),
        sriov(v1::Sriov::NewStub(channel)),
        observe(v1::Observe::NewStub(channel)) {}
  std::unique_ptr<grpc::ClientContext> context() const {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(globals.timeout_ms));
    return ctx;
  }
  // The stub of the service `Stub` belongs to (the argument only names it).
  v1::Dataplane::Stub* stubFor(v1::Dataplane::Stub*) const { return stub.get(); }
  v1::RemoteNodes::Stub* stubFor(v1::RemoteNodes::Stub*) const { return remote_nodes.get(); }
  v1::Sriov::Stub* stubFor(v1::Sriov::Stub*) const { return sriov.get(); }
  v1::Observe::Stub* stubFor(v1::Observe::Stub*) const { return observe.get(); }
  const Globals& globals;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Dataplane::Stub> stub;
  std::unique_ptr<v1::RemoteNodes::Stub> remote_nodes;
  std::unique_ptr<v1::Sriov::Stub> sriov;
  std::unique_ptr<v1::Observe::Stub> observe;
};

// One unary call: print the reply as JSON or through `human`, or report the error.
template <typename Stub, typename Request, typename Response, typename Human>
int call(Client& client, grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Request&, Response*),
         const Request& request, Human human) {
  Response resp;
  Stub* stub = client.stubFor(static_cast<Stub*>(nullptr));
  grpc::Status s = (stub->*rpc)(client.context().get(), request, &resp);
  if (!s.ok()) return report(s, client.globals);
  // Rendered even for --json: `human` may also record what the exit code needs.
  std::string text = human(resp);
  if (client.globals.json) printJson(resp);
  else std::fputs(text.c_str(), stdout);
  return 0;
}

// `flows`: the megaflows arrive in chunks (StreamFlows), so a table of any
// size fits the per-message limit; printed as one listing.
int listFlows(Client& client) {
  auto ctx = client.context();
  std::unique_ptr<grpc::ClientReader<v1::ListFlowsResponse>> reader =
      client.stub->StreamFlows(ctx.get(), v1::ListFlowsRequest{});
  v1::ListFlowsResponse all;
  v1::ListFlowsResponse chunk;
  while (reader->Read(&chunk)) all.mutable_flows()->MergeFrom(chunk.flows());
  grpc::Status s = reader->Finish();
  if (!s.ok()) return report(s, client.globals);
  if (client.globals.json) printJson(all);
  else std::fputs(sluice::formatFlows(all).c_str(), stdout);
  return 0;
}

int portAdd(Client& client, const std::vector<std::string>& args) {
  po::options_description desc("port add");
  std::string mode = "server";
  desc.add_options()("container-id", po::value<std::string>()->required(), "")(
      "ifname", po::value<std::string>()->required(), "")("ip", po::value<std::string>()->default_value(""), "")(
      "ipv6", po::value<std::string>()->default_value(""), "")(
      "mac", po::value<std::string>()->default_value(""), "")("mode", po::value<std::string>(&mode), "")(
      "namespace", po::value<std::string>()->default_value(""), "")("pod", po::value<std::string>()->default_value(""), "")(
      "socket-subdir", po::value<std::string>()->default_value(""), "")(
      "devargs", po::value<std::string>()->default_value(""), "")("mtu", po::value<uint32_t>()->default_value(0), "")(
      "no-source-validation", "")("routed-prefix", po::value<std::vector<std::string>>(), "")(
      "pmd", po::value<uint32_t>(), "")("queues", po::value<uint32_t>(), "");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  v1::AddPortRequest req;
  if (vm.count("pmd") != 0) req.set_pmd(vm["pmd"].as<uint32_t>());
  if (vm.count("queues") != 0) req.set_queues(vm["queues"].as<uint32_t>());
  req.mutable_attachment()->set_container_id(vm["container-id"].as<std::string>());
  req.mutable_attachment()->set_ifname(vm["ifname"].as<std::string>());
  // --ip, --ipv6 or both (an IPv6-only attachment gives --ipv6 alone).
  req.set_ip(vm["ip"].as<std::string>());
  req.set_ipv6(vm["ipv6"].as<std::string>());
  if (req.ip().empty() && req.ipv6().empty()) throw po::error("--ip or --ipv6 is required");
  req.set_mac(vm["mac"].as<std::string>());
  req.set_pod_namespace(vm["namespace"].as<std::string>());
  req.set_pod_name(vm["pod"].as<std::string>());
  req.set_socket_subdir(vm["socket-subdir"].as<std::string>());
  // --devargs: a DPDK vdev standing in for a pod (sluiced must allow it).
  req.set_devargs(vm["devargs"].as<std::string>());
  req.set_mtu(vm["mtu"].as<uint32_t>());  // 0: sluiced's port-mtu; sluiced checks the range
  req.set_type(req.devargs().empty() ? v1::PORT_TYPE_VHOST_USER : v1::PORT_TYPE_DPDK_VDEV);
  // A pod that forwards others' traffic (a router) sends with foreign sources.
  if (vm.count("no-source-validation") != 0) req.set_source_validation(false);
  // Prefixes routed to the pod (repeatable): its UE pools, its subnets.
  if (vm.count("routed-prefix") != 0)
    for (const std::string& c : vm["routed-prefix"].as<std::vector<std::string>>()) req.add_routed_prefixes(c);
  if (mode == "server") req.set_vhost_mode(v1::VHOST_MODE_SERVER);
  else if (mode == "client") req.set_vhost_mode(v1::VHOST_MODE_CLIENT);
  else throw po::error("--mode must be server or client");
  v1::AddPortResponse resp;
  grpc::Status s = client.stub->AddPort(client.context().get(), req, &resp);
  if (!s.ok()) return report(s, client.globals);
  if (client.globals.json) printJson(resp);
  else std::fputs((std::string(resp.created() ? "created" : "exists") + "\n" + sluice::formatPort(resp.port())).c_str(), stdout);
  return 0;
}

// Two reads (statistics, then ports): a port added between them shows with
// no packets, one removed is left out.
int showPmds(Client& client) {
  v1::GetStatsResponse stats;
  grpc::Status s = client.stub->GetStats(client.context().get(), v1::GetStatsRequest{}, &stats);
  if (!s.ok()) return report(s, client.globals);
  v1::ListPortsResponse ports;
  s = client.stub->ListPorts(client.context().get(), v1::ListPortsRequest{}, &ports);
  if (!s.ok()) return report(s, client.globals);
  if (client.globals.json) {
    // One document: {"stats": GetStatsResponse, "ports": ListPortsResponse}.
    std::fputs(("{\"stats\": " + toJson(stats) + ", \"ports\": " + toJson(ports) + "}\n").c_str(), stdout);
  } else {
    std::fputs(sluice::formatPmds(stats, ports).c_str(), stdout);
  }
  return 0;
}

int portDel(Client& client, const std::vector<std::string>& args) {
  po::options_description desc("port del");
  desc.add_options()("container-id", po::value<std::string>()->required(), "")(
      "ifname", po::value<std::string>()->required(), "");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  v1::DeletePortRequest req;
  req.mutable_attachment()->set_container_id(vm["container-id"].as<std::string>());
  req.mutable_attachment()->set_ifname(vm["ifname"].as<std::string>());
  v1::DeletePortResponse resp;
  grpc::Status s = client.stub->DeletePort(client.context().get(), req, &resp);
  if (!s.ok()) return report(s, client.globals);
  if (client.globals.json) printJson(resp);
  else std::puts(resp.deleted() ? "deleted" : "no such attachment (nothing to do)");
  return 0;
}

int nodeAdd(Client& client, const std::vector<std::string>& args) {
  po::options_description desc("node add");
  desc.add_options()("name", po::value<std::string>()->required(), "")("vtep", po::value<std::string>()->required(), "")(
      "pod-cidr", po::value<std::vector<std::string>>()->required(), "")(
      "mac", po::value<std::string>()->default_value(""), "")("routed-prefix", po::value<std::vector<std::string>>(), "");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  v1::AddNodeRequest req;
  if (vm.count("routed-prefix") != 0)
    for (const std::string& c : vm["routed-prefix"].as<std::vector<std::string>>())
      req.mutable_node()->add_routed_prefixes(c);
  req.mutable_node()->set_name(vm["name"].as<std::string>());
  req.mutable_node()->set_vtep(vm["vtep"].as<std::string>());
  for (const std::string& c : vm["pod-cidr"].as<std::vector<std::string>>()) req.mutable_node()->add_pod_cidrs(c);
  req.mutable_node()->set_mac(vm["mac"].as<std::string>());
  return call(client, &v1::RemoteNodes::Stub::AddNode, req, [](const v1::AddNodeResponse& r) {
    return std::string(r.created() ? "created\n" : "exists\n") + sluice::formatNode(r.node(), nowUnix());
  });
}

int nodeDel(Client& client, const std::vector<std::string>& args) {
  po::options_description desc("node del");
  desc.add_options()("name", po::value<std::string>()->required(), "");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  v1::DeleteNodeRequest req;
  req.set_name(vm["name"].as<std::string>());
  return call(client, &v1::RemoteNodes::Stub::DeleteNode, req, [](const v1::DeleteNodeResponse& r) {
    return std::string(r.deleted() ? "deleted\n" : "no such node (nothing to do)\n");
  });
}

// "--name VALUE" options after a command's positional words; anything else is bad usage.
std::map<std::string, std::string> options(const std::vector<std::string>& args, size_t from,
                                           const std::vector<std::string>& names) {
  std::map<std::string, std::string> out;
  for (size_t i = from; i < args.size(); i += 2) {
    if (std::find(names.begin(), names.end(), args[i]) == names.end() || i + 1 >= args.size())
      throw po::error("unexpected argument " + args[i]);
    out[args[i]] = args[i + 1];
  }
  return out;
}

uint32_t number(const std::string& name, const std::string& text) {
  size_t used = 0;
  unsigned long v = std::stoul(text, &used);
  if (used != text.size() || v > 0xffffffffUL) throw po::error(name + ": not a number: " + text);
  return static_cast<uint32_t>(v);
}

// `trace PORT ...` streams records until N; `trace --packet SPEC` asks once.
int trace(Client& client, const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "--packet") {
    v1::TracePacketRequest req;
    req.set_packet(args[1]);
    return call(client, &v1::Observe::Stub::TracePacket, req,
                [](const v1::TraceRecord& r) { return sluice::formatTraceRecord(r, 0); });
  }
  if (args.empty()) throw po::error("trace needs a PORT or --packet SPEC");
  v1::TraceRequest req;
  req.set_port_no(number("PORT", args[0]));
  auto o = options(args, 1, {"--count", "--src", "--dst", "--proto", "--sport", "--dport"});
  req.set_count(o.count("--count") ? number("--count", o["--count"]) : 1);
  req.mutable_filter()->set_src(o["--src"]);
  req.mutable_filter()->set_dst(o["--dst"]);
  req.mutable_filter()->set_proto(o["--proto"]);
  if (o.count("--sport")) req.mutable_filter()->set_sport(number("--sport", o["--sport"]));
  if (o.count("--dport")) req.mutable_filter()->set_dport(number("--dport", o["--dport"]));
  grpc::ClientContext ctx;  // no deadline: it waits for packets
  auto reader = client.observe->Trace(&ctx, req);
  v1::TraceRecord r;
  uint32_t n = 0;
  while (reader->Read(&r)) {
    if (client.globals.json) printJson(r), std::fputs("\n", stdout);
    else std::fputs(sluice::formatTraceRecord(r, ++n).c_str(), stdout);
    std::fflush(stdout);
  }
  grpc::Status s = reader->Finish();
  return s.ok() ? 0 : report(s, client.globals);
}

// `capture PORT ... -w FILE|-`: pcap, written as packets arrive.
int capture(Client& client, const std::vector<std::string>& args) {
  if (args.empty()) throw po::error("capture needs a PORT");
  v1::CaptureRequest req;
  req.set_port_no(number("PORT", args[0]));
  auto o = options(args, 1, {"--direction", "--count", "--snaplen", "-w"});
  if (!o.count("-w")) throw po::error("capture needs -w FILE (or -w - for stdout)");
  req.set_direction(o.count("--direction") ? o["--direction"] : "rx");
  // A bound by default: a forgotten capture stops by itself.
  req.set_count(o.count("--count") ? number("--count", o["--count"]) : kDefaultCaptureCount);
  req.set_snaplen(o.count("--snaplen") ? number("--snaplen", o["--snaplen"]) : 2048);
  std::FILE* out = stdout;
  if (o["-w"] != "-") {
    // A new file only, owner-only: run as root, following a symlink or
    // truncating an existing file would let whoever made that path choose
    // what a root-written capture overwrites.
    const int fd = ::open(o["-w"].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      const int err = errno;
      if (err == EEXIST || err == ELOOP)
        std::fprintf(stderr, "sluicectl: %s already exists (a file or a symlink): capture writes only a new file\n",
                     o["-w"].c_str());
      else
        std::fprintf(stderr, "sluicectl: cannot create %s: %s\n", o["-w"].c_str(), std::strerror(err));
      return 1;
    }
    out = ::fdopen(fd, "wb");
    if (out == nullptr) {
      std::fprintf(stderr, "sluicectl: cannot write %s: %s\n", o["-w"].c_str(), std::strerror(errno));
      ::close(fd);
      return 1;
    }
  }
  sluice::PcapWriter pcap(out, req.snaplen() == 0 || req.snaplen() > 2048 ? 2048 : req.snaplen());
  grpc::ClientContext ctx;  // no deadline: it waits for packets
  auto reader = client.observe->Capture(&ctx, req);
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
    return 1;
  }
  return s.ok() || s.error_code() == grpc::StatusCode::CANCELLED ? 0 : report(s, client.globals);
}

int dispatch(Client& client, const std::vector<std::string>& words) {
  const std::string& cmd = words[0];
  std::vector<std::string> rest(words.begin() + 1, words.end());
  if (cmd == "stats" && rest.empty())
    return call(client, &v1::Dataplane::Stub::GetStats, v1::GetStatsRequest{},
                [](const v1::GetStatsResponse& r) { return sluice::formatStats(r); });
  if (cmd == "stats" && rest == std::vector<std::string>{"clear"})
    return call(client, &v1::Dataplane::Stub::ClearStats, v1::ClearStatsRequest{},
                [](const v1::ClearStatsResponse&) { return std::string("statistics cleared\n"); });
  if (cmd == "flows" && rest.empty()) return listFlows(client);
  if (cmd == "trace") return trace(client, rest);
  if (cmd == "capture") return capture(client, rest);
  if (cmd == "vfs" && rest.empty())
    return call(client, &v1::Sriov::Stub::ListVfs, v1::ListVfsRequest{}, [](const v1::ListVfsResponse& r) {
      std::string out = "  PF               VF  PCI           NETDEV           HOLDER\n";
      for (const v1::Vf& vf : r.vfs()) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-15s %3u  %-12s  %-15s  %s\n", vf.pf().c_str(), vf.vf_index(),
                      vf.pci_address().c_str(), vf.netdev().empty() ? "-" : vf.netdev().c_str(),
                      vf.in_use() ? (vf.attachment().container_id() + "/" + vf.attachment().ifname()).c_str() : "(free)");
        out += line;
      }
      if (r.vfs().empty()) out += "  (no SR-IOV pools)\n";
      return out;
    });
  if (cmd == "ports" && rest.empty())
    return call(client, &v1::Dataplane::Stub::ListPorts, v1::ListPortsRequest{},
                [](const v1::ListPortsResponse& r) { return sluice::formatPorts(r); });
  if (cmd == "pmd" && rest.empty()) return showPmds(client);
  if (cmd == "health" && rest.empty()) {
    bool ready = false;
    int rc = call(client, &v1::Dataplane::Stub::Health, v1::HealthRequest{}, [&](const v1::HealthResponse& r) {
      ready = r.ready();
      return sluice::formatHealth(r);
    });
    return rc != 0 ? rc : (ready ? 0 : 1);
  }
  if (cmd == "nodes" && rest.empty())
    return call(client, &v1::RemoteNodes::Stub::ListNodes, v1::ListNodesRequest{},
                [](const v1::ListNodesResponse& r) { return sluice::formatNodes(r, nowUnix()); });
  if (cmd == "node" && !rest.empty() && rest[0] == "add")
    return nodeAdd(client, std::vector<std::string>(rest.begin() + 1, rest.end()));
  if (cmd == "node" && !rest.empty() && rest[0] == "del")
    return nodeDel(client, std::vector<std::string>(rest.begin() + 1, rest.end()));
  if (cmd == "config" && (rest.size() == 1 || rest.size() == 2) && rest[0] == "get") {
    v1::GetConfigRequest req;
    if (rest.size() == 2) req.set_key(rest[1]);
    return call(client, &v1::Dataplane::Stub::GetConfig, req,
                [](const v1::GetConfigResponse& r) { return sluice::formatConfig(r); });
  }
  if (cmd == "config" && rest.size() == 3 && rest[0] == "set") {
    v1::SetConfigRequest req;
    req.set_key(rest[1]);
    req.set_value(rest[2]);
    return call(client, &v1::Dataplane::Stub::SetConfig, req,
                [](const v1::SetConfigResponse& r) { return sluice::formatConfigSet(r); });
  }
  if (cmd == "port" && !rest.empty() && rest[0] == "add")
    return portAdd(client, std::vector<std::string>(rest.begin() + 1, rest.end()));
  if (cmd == "port" && !rest.empty() && rest[0] == "del")
    return portDel(client, std::vector<std::string>(rest.begin() + 1, rest.end()));
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Globals g;
  std::vector<std::string> words;
  try {
    int i = 1;
    for (; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw po::error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--socket") g.socket = value();
      else if (a.rfind("--socket=", 0) == 0) g.socket = a.substr(9);
      else if (a == "--json") g.json = true;
      else if (a == "--timeout") g.timeout_ms = std::stoi(value());
      else if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else break;
    }
    for (; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--json") g.json = true;  // also accepted after the command
      else words.push_back(a);
    }
    if (words.empty()) {
      std::fputs(kUsage, stderr);
      return 2;
    }
    Client client(g);
    return dispatch(client, words);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluicectl: %s\n%s", e.what(), kUsage);
    return 2;
  }
}
