// Command-line check used by the packaging tests (main thread only): parses
// each sluiced config file the chart renders with sluiced's own parser
// (parseSluicedConfig, as `sluiced --config FILE` would) and reports whether
// sluiced would start with it, which keys it would ignore as not yet known,
// and the settings that matter to the chart (cores, ports, CIDR).
// Usage: sluiced_config_check FILE...; exit 1 if any file is rejected.
//        sluiced_config_check --keys: every key, "KEY live" or "KEY restart"
//        (config_keys.def), for the chart's split of live and restart-only
//        settings.
#include <cstdio>
#include <string>

#include "dataplane/config/config.h"
#include "dataplane/config/config_keys.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE... | --keys\n", argv[0]);
    return 2;
  }
  if (std::string(argv[1]) == "--keys") {
    for (const sluice::ConfigKey& key : sluice::configKeys())
      std::printf("%s %s\n", key.name, sluice::isLive(key) ? "live" : "restart");
    return 0;
  }
  int rejected = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = "--config";
    const char* args[] = {"sluiced", flag.c_str(), argv[i]};
    absl::StatusOr<sluice::SluicedConfig> c = sluice::parseSluicedConfig(3, args);
    if (!c.ok()) {
      ++rejected;
      std::printf("REJECTED %s: %s\n", argv[i], std::string(c.status().message()).c_str());
      continue;
    }
    std::string ignored;
    for (const std::string& k : c->ignored_keys) ignored += (ignored.empty() ? "" : ",") + k;
    std::printf("accepted %s: pod-cidr %s, %zu PMD cores, main core %u, max-ports %u, ignored [%s]\n", argv[i],
                c->pod_cidr.toString().c_str(), c->pmd_cores.size(), c->main_core,
                static_cast<unsigned>(c->max_ports), ignored.c_str());
  }
  return rejected == 0 ? 0 : 1;
}
