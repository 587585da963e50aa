// `port add` and `port del`: a pod's port through sluice.v1.Dataplane, as the
// CNI plugin adds and removes it.
#include <string>

#include "dataplane/api/stats_format.h"
#include "dataplane/sluicectl/client.h"
#include "dataplane/sluicectl/command.h"
#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice::ctl {
namespace {

namespace po = boost::program_options;
namespace v1 = sluice::v1;

int addPort(Client& client, const Args& args) {
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
  po::variables_map vm = parseOptions(args, desc);
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
  return call(client, &v1::Dataplane::Stub::AddPort, req, [](const v1::AddPortResponse& r) {
    return std::string(r.created() ? "created" : "exists") + "\n" + sluice::formatPort(r.port());
  });
}

int deletePort(Client& client, const Args& args) {
  po::options_description desc("port del");
  desc.add_options()("container-id", po::value<std::string>()->required(), "")(
      "ifname", po::value<std::string>()->required(), "");
  po::variables_map vm = parseOptions(args, desc);
  v1::DeletePortRequest req;
  req.mutable_attachment()->set_container_id(vm["container-id"].as<std::string>());
  req.mutable_attachment()->set_ifname(vm["ifname"].as<std::string>());
  return call(client, &v1::Dataplane::Stub::DeletePort, req, [](const v1::DeletePortResponse& r) {
    return std::string(r.deleted() ? "deleted\n" : "no such attachment (nothing to do)\n");
  });
}

}  // namespace

SLUICECTL_COMMAND(port_add,
                  {.words = {"port", "add"},
                   .synopsis = "--container-id ID --ifname NAME [--ip A.B.C.D] [--ipv6 ADDR] [--mac M] [--mode server|client]\n"
                               "[--namespace NS] [--pod NAME] [--socket-subdir DIR] [--devargs net_null,no-rx=1]\n"
                               "[--mtu 68..9216 (default: sluiced's port-mtu)]\n"
                               "[--no-source-validation]  (the pod may send with any source MAC and IP: a router)\n"
                               "[--routed-prefix CIDR...]  (routed to the pod, IPv4 or IPv6: a UPF's UE pool; repeatable)\n"
                               "[--pmd N]  (pin the port's rx queues to PMD N; default: the least busy PMD, where it stays)\n"
                               "[--queues N]  (queue pairs, 1..sluiced's max-queues-per-port; default 1)",
                   .help = "attach a pod: a vhost-user port (or, with --devargs, a DPDK vdev)",
                   .run = addPort});
SLUICECTL_COMMAND(port_del, {.words = {"port", "del"},
                             .synopsis = "--container-id ID --ifname NAME",
                             .help = "detach a pod's port",
                             .run = deletePort});

}  // namespace sluice::ctl
