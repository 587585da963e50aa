#include "dataplane/api/stats_format.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(StatsFormatTest, ShowsCyclesPerPacketBatchesAndEveryDropReason) {
  v1::GetStatsResponse s;
  s.set_tsc_hz(1'000'000'000);
  s.set_seconds_since_clear(2.0);
  v1::PmdStats* p = s.add_pmds();
  p->set_lcore(1);
  p->set_busy_cycles(250'000'000);
  p->set_idle_cycles(750'000'000);
  p->set_packets(1'000'000);
  p->set_rx_bursts(50'000);
  p->set_tx_batches(40'000);
  p->set_tx_batched_packets(1'000'000);
  p->set_tx_packets(990'000);
  v1::PortStats* port = s.add_ports();
  port->set_port_no(3);
  port->mutable_attachment()->set_container_id("0123456789abcdef");
  port->mutable_attachment()->set_ifname("net1");
  port->set_rx_packets(42);
  v1::DropCounter* d = s.add_drops();
  d->set_reason("ttl_exceeded");
  d->set_packets(7);
  std::string text = formatStats(s);
  EXPECT_NE(text.find("cycles per packet:               250.0"), std::string::npos) << text;
  EXPECT_NE(text.find("(1.000 Mpps)"), std::string::npos) << text;
  EXPECT_NE(text.find("(25.0 packets/batch)"), std::string::npos) << text;
  EXPECT_NE(text.find("(20.0 packets/burst)"), std::string::npos) << text;
  EXPECT_NE(text.find("0123456789ab/net1"), std::string::npos) << text;
  EXPECT_NE(text.find("ttl_exceeded"), std::string::npos) << text;
}

TEST(StatsFormatTest, ZeroPacketsDoNotDivideByZero) {
  v1::GetStatsResponse s;
  s.add_pmds();
  std::string text = formatStats(s);
  EXPECT_NE(text.find("cycles per packet:                 0.0"), std::string::npos) << text;
  EXPECT_NE(text.find("(no ports)"), std::string::npos);
}

TEST(StatsFormatTest, HealthSaysWhetherReady) {
  v1::HealthResponse h;
  h.set_ready(false);
  EXPECT_EQ(formatHealth(h).rfind("NOT READY", 0), 0u);
  h.set_ready(true);
  EXPECT_EQ(formatHealth(h).rfind("ready", 0), 0u);
}

}  // namespace
}  // namespace sluice
