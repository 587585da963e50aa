// The overlay's sluicectl commands, over sluice.v1.RemoteNodes: the remote
// nodes, added and removed by hand as the node controller does.
#include <string>

#include "dataplane/api/nodes_format.h"
#include "dataplane/sluicectl/client.h"
#include "dataplane/sluicectl/command.h"
#include "sluice/v1/overlay.grpc.pb.h"

namespace sluice::ctl {
namespace {

namespace po = boost::program_options;

int listNodes(Client& client, const Args&) {
  return call(client, &v1::RemoteNodes::Stub::ListNodes, v1::ListNodesRequest{},
              [](const v1::ListNodesResponse& r) { return sluice::formatNodes(r, nowUnix()); });
}

int addNode(Client& client, const Args& args) {
  po::options_description desc("node add");
  desc.add_options()("name", po::value<std::string>()->required(), "")("vtep", po::value<std::string>()->required(), "")(
      "pod-cidr", po::value<std::vector<std::string>>()->required(), "")(
      "mac", po::value<std::string>()->default_value(""), "")("routed-prefix", po::value<std::vector<std::string>>(), "");
  po::variables_map vm = parseOptions(args, desc);
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

int deleteNode(Client& client, const Args& args) {
  po::options_description desc("node del");
  desc.add_options()("name", po::value<std::string>()->required(), "");
  po::variables_map vm = parseOptions(args, desc);
  v1::DeleteNodeRequest req;
  req.set_name(vm["name"].as<std::string>());
  return call(client, &v1::RemoteNodes::Stub::DeleteNode, req, [](const v1::DeleteNodeResponse& r) {
    return std::string(r.deleted() ? "deleted\n" : "no such node (nothing to do)\n");
  });
}

}  // namespace

SLUICECTL_COMMAND(node_list, {.words = {"nodes"},
                              .help = "remote nodes (source, VTEP, CIDRs, next hop, age), node controller state",
                              .max_args = 0,
                              .run = listNodes});
SLUICECTL_COMMAND(node_add, {.words = {"node", "add"},
                             .synopsis = "--name N --vtep IP --pod-cidr CIDR [--pod-cidr CIDR...] [--mac M]\n"
                                         "[--routed-prefix CIDR...]  (prefixes its pods own, routed toward it as its pod CIDRs)",
                             .help = "add a remote node (VTEP of the underlay's family; CIDRs IPv4 or IPv6)",
                             .run = addNode});
SLUICECTL_COMMAND(node_del, {.words = {"node", "del"}, .synopsis = "--name N", .help = "remove a remote node", .run = deleteNode});

}  // namespace sluice::ctl
