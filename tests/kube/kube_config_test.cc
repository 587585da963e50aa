#include "agent/kube_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sluice::agent {
namespace {

namespace fs = std::filesystem;

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice-kubeconfig-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(KubeConfigTest, ReadsTheCurrentContext) {
  const std::string path = write("config", R"(apiVersion: v1
kind: Config
current-context: b
clusters:
- name: one
  cluster: {server: "https://10.0.0.1:6443/", certificate-authority: ca.crt}
- name: two
  cluster:
    server: https://[fd00::1]:443
    certificate-authority-data: aGVsbG8=
users:
- name: u1
  user: {token: abc}
- name: u2
  user:
    tokenFile: /var/run/token
    client-certificate-data: Y2VydA==
    client-key: key.pem
contexts:
- name: a
  context: {cluster: one, user: u1}
- name: b
  context: {cluster: two, user: u2}
)");
  auto c = kubeconfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->ca_pem, "hello");
  EXPECT_EQ(c->token_file, "/var/run/token");
  EXPECT_EQ(c->client_cert_pem, "cert");
  EXPECT_EQ(c->client_key_file, (dir_ / "key.pem").string());
  c = kubeconfigFile(path, "a");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_file, (dir_ / "ca.crt").string());
  EXPECT_EQ(c->token, "abc");
}

TEST_F(KubeConfigTest, RefusesWhatItCannotUse) {
  EXPECT_FALSE(kubeconfigFile((dir_ / "missing").string()).ok());
  EXPECT_FALSE(kubeconfigFile(write("bad", "{[")).ok());
  EXPECT_FALSE(kubeconfigFile(write("noctx", "clusters: []\n")).ok());
  EXPECT_FALSE(kubeconfigFile(write("http", R"(current-context: a
clusters: [{name: c, cluster: {server: "http://x"}}]
contexts: [{name: a, context: {cluster: c}}]
)")).ok());
  EXPECT_FALSE(kubeconfigFile(write("exec", R"(current-context: a
clusters: [{name: c, cluster: {server: "https://x"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: a, context: {cluster: c, user: u}}]
)")).ok());
}

TEST_F(KubeConfigTest, InCluster) {
  EXPECT_FALSE(inClusterConfig({}, dir_.string()).ok());
  std::map<std::string, std::string> env = {{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}};
  EXPECT_FALSE(inClusterConfig(env, dir_.string()).ok());  // no token
  write("token", "t\n");
  auto c = inClusterConfig(env, dir_.string());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->token_file, (dir_ / "token").string());
  EXPECT_EQ(c->ca_file, (dir_ / "ca.crt").string());
}

}  // namespace
}  // namespace sluice::agent
