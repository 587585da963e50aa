// The core's commands over sluice.v1.Dataplane: counters, ports, PMDs,
// megaflows, readiness and settings.
#include <string>

#include "dataplane/api/config_format.h"
#include "dataplane/api/stats_format.h"
#include "dataplane/sluicectl/client.h"
#include "dataplane/sluicectl/command.h"
#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice::ctl {
namespace {

namespace v1 = sluice::v1;

int showStats(Client& client, const Args&) {
  return call(client, &v1::Dataplane::Stub::GetStats, v1::GetStatsRequest{},
              [](const v1::GetStatsResponse& r) { return sluice::formatStats(r); });
}

int clearStats(Client& client, const Args&) {
  return call(client, &v1::Dataplane::Stub::ClearStats, v1::ClearStatsRequest{},
              [](const v1::ClearStatsResponse&) { return std::string("statistics cleared\n"); });
}

int listPorts(Client& client, const Args&) {
  return call(client, &v1::Dataplane::Stub::ListPorts, v1::ListPortsRequest{},
              [](const v1::ListPortsResponse& r) { return sluice::formatPorts(r); });
}

// Two reads (statistics, then ports): a port added between them shows with
// no packets, one removed is left out.
int showPmds(Client& client, const Args&) {
  auto stub = client.stub<v1::Dataplane::Stub>();
  v1::GetStatsResponse stats;
  grpc::Status s = stub.GetStats(client.context().get(), v1::GetStatsRequest{}, &stats);
  if (!s.ok()) return report(s, client.globals());
  v1::ListPortsResponse ports;
  s = stub.ListPorts(client.context().get(), v1::ListPortsRequest{}, &ports);
  if (!s.ok()) return report(s, client.globals());
  if (client.globals().json) {
    // One document: {"stats": GetStatsResponse, "ports": ListPortsResponse}.
    std::fputs(("{\"stats\": " + toJson(stats) + ", \"ports\": " + toJson(ports) + "}\n").c_str(), stdout);
  } else {
    std::fputs(sluice::formatPmds(stats, ports).c_str(), stdout);
  }
  return 0;
}

// The megaflows arrive in chunks (StreamFlows), so a table of any size fits
// the per-message limit; printed as one listing.
int listFlows(Client& client, const Args&) {
  auto stub = client.stub<v1::Dataplane::Stub>();
  auto ctx = client.context();
  std::unique_ptr<grpc::ClientReader<v1::ListFlowsResponse>> reader = stub.StreamFlows(ctx.get(), v1::ListFlowsRequest{});
  v1::ListFlowsResponse all;
  v1::ListFlowsResponse chunk;
  while (reader->Read(&chunk)) all.mutable_flows()->MergeFrom(chunk.flows());
  grpc::Status s = reader->Finish();
  if (!s.ok()) return report(s, client.globals());
  if (client.globals().json) printJson(all);
  else std::fputs(sluice::formatFlows(all).c_str(), stdout);
  return 0;
}

int checkHealth(Client& client, const Args&) {
  bool ready = false;
  int rc = call(client, &v1::Dataplane::Stub::Health, v1::HealthRequest{}, [&](const v1::HealthResponse& r) {
    ready = r.ready();
    return sluice::formatHealth(r);
  });
  return rc != 0 ? rc : (ready ? 0 : kExitError);
}

int getConfig(Client& client, const Args& args) {
  v1::GetConfigRequest req;
  if (args.size() == 1) req.set_key(args[0]);
  return call(client, &v1::Dataplane::Stub::GetConfig, req,
              [](const v1::GetConfigResponse& r) { return sluice::formatConfig(r); });
}

int setConfig(Client& client, const Args& args) {
  v1::SetConfigRequest req;
  req.set_key(args[0]);
  req.set_value(args[1]);
  return call(client, &v1::Dataplane::Stub::SetConfig, req,
              [](const v1::SetConfigResponse& r) { return sluice::formatConfigSet(r); });
}

}  // namespace

SLUICECTL_COMMAND(stats, {.words = {"stats"},
                          .help = "per-PMD cycles/packet, batches, per-port and per-reason counters",
                          .max_args = 0,
                          .run = showStats});
SLUICECTL_COMMAND(stats_clear, {.words = {"stats", "clear"}, .help = "reset the counters", .max_args = 0, .run = clearStats});
SLUICECTL_COMMAND(ports, {.words = {"ports"}, .help = "list ports", .max_args = 0, .run = listPorts});
SLUICECTL_COMMAND(pmd, {.words = {"pmd"},
                        .help = "each PMD's load and the pod ports it polls (share of its packets, pinned or placed)",
                        .max_args = 0,
                        .run = showPmds});
SLUICECTL_COMMAND(flows, {.words = {"flows"},
                          .help = "list megaflows (match, actions, packets, bytes, idle time)",
                          .max_args = 0,
                          .run = listFlows});
SLUICECTL_COMMAND(health, {.words = {"health"}, .help = "exit 0 if the dataplane is ready", .max_args = 0, .run = checkHealth});
SLUICECTL_COMMAND(config_get, {.words = {"config", "get"},
                               .synopsis = "[KEY]",
                               .help = "settings: value, live (changes now) or restart (at sluiced's next start), source",
                               .max_args = 1,
                               .run = getConfig});
SLUICECTL_COMMAND(config_set, {.words = {"config", "set"},
                               .synopsis = "KEY VALUE",
                               .help = "change a live setting while sluiced runs",
                               .min_args = 2,
                               .max_args = 2,
                               .run = setConfig});

}  // namespace sluice::ctl
