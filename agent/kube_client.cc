#include "agent/kube_client.h"

#include <absl/strings/str_cat.h>
#include <curl/curl.h>

#include <fstream>
#include <sstream>

#include "agent/line_splitter.h"
#include "common/log.h"

namespace sluice::agent {
namespace {

// What one transfer's callbacks share.
struct Transfer {
  CURL* curl = nullptr;
  const std::atomic<bool>* stop = nullptr;
  const std::function<void()>* on_open = nullptr;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  LineSplitter splitter;
  std::string body;
  size_t max_body = 0;
  bool ended_by_caller = false;  // on_line said stop: not an error
  bool line_too_long = false;
  bool body_too_long = false;
};

size_t onData(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (t->on_line == nullptr || status != 200) {
    // Kept whole or not at all: a cut body would parse as something else
    // (or fail as if the server had sent garbage).
    if (len > t->max_body - t->body.size()) {
      t->body_too_long = true;
      return 0;  // curl ends the transfer (CURLE_WRITE_ERROR)
    }
    t->body.append(data, len);
    return len;
  }
  if (!t->splitter.feed(std::string_view(data, len), *t->on_line)) {
    if (t->splitter.pending().size() > LineSplitter::kDefaultMaxLine) t->line_too_long = true;
    else t->ended_by_caller = true;
    return 0;  // curl ends the transfer (CURLE_WRITE_ERROR)
  }
  return len;
}

// The blank line after the last header: the status is final here (curl
// also passes the headers of an interim 100 Continue, whose status is not 200).
size_t onHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (t->on_open != nullptr && (std::string_view(data, len) == "\r\n" || std::string_view(data, len) == "\n")) {
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200) {
      (*t->on_open)();
      t->on_open = nullptr;
    }
  }
  return len;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->stop != nullptr && t->stop->load(std::memory_order_relaxed) ? 1 : 0;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

KubeClient::KubeClient(KubeConfig config, const std::atomic<bool>* stop, std::chrono::seconds request_timeout,
                       size_t max_body)
    : config_(std::move(config)),
      stop_(stop),
      request_timeout_(request_timeout),
      max_body_(max_body),
      curl_(curl_easy_init()) {}

KubeClient::~KubeClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

std::string KubeClient::bearerToken() {
  if (config_.token_file.empty()) return config_.token;
  // The kubelet rotates projected service-account tokens by replacing the
  // file; read it again whenever it looks different.
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(config_.token_file, ec);
  const uintmax_t size = ec ? 0 : std::filesystem::file_size(config_.token_file, ec);
  if (!ec && (token_.empty() || mtime != token_mtime_ || size != token_size_)) {
    std::string t = readFile(config_.token_file);
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
    if (!t.empty()) {
      if (!token_.empty()) logInfo("service-account token re-read from ", config_.token_file);
      token_ = std::move(t);
      token_mtime_ = mtime;
      token_size_ = size;
    }
  }
  return token_;
}

HttpResult KubeClient::get(const std::string& path) {
  return perform("GET", path, nullptr, "", nullptr, nullptr, request_timeout_);
}

HttpResult KubeClient::patch(const std::string& path, const std::string& body, const std::string& content_type) {
  return perform("PATCH", path, &body, content_type, nullptr, nullptr, request_timeout_);
}

HttpResult KubeClient::watch(const std::string& path, const std::function<void()>& on_open,
                             const std::function<bool(std::string_view)>& on_line, std::chrono::seconds idle_limit) {
  return perform("GET", path, nullptr, "", &on_open, &on_line, idle_limit);
}

HttpResult KubeClient::perform(const std::string& method, const std::string& path, const std::string* body,
                               const std::string& content_type, const std::function<void()>* on_open,
                               const std::function<bool(std::string_view)>* on_line, std::chrono::seconds limit) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  Transfer t;
  t.curl = c;
  t.stop = stop_;
  t.on_open = on_open;
  t.on_line = on_line;
  t.max_body = max_body_;
  const std::string url = config_.server + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  if (on_line == nullptr) {
    curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(limit.count()));
  } else {
    // A watch lasts as long as the server keeps it; only silence ends it here.
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(limit.count()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, onData);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);

  curl_blob ca{};
  if (!config_.ca_pem.empty()) {
    ca.data = config_.ca_pem.data();
    ca.len = config_.ca_pem.size();
    ca.flags = CURL_BLOB_NOCOPY;
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
  } else if (!config_.ca_file.empty()) {
    curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  }
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  curl_blob cert{}, key{};
  if (!config_.client_cert_pem.empty()) {
    cert = {config_.client_cert_pem.data(), config_.client_cert_pem.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!config_.client_cert_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  }
  if (!config_.client_key_pem.empty()) {
    key = {config_.client_key_pem.data(), config_.client_key_pem.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!config_.client_key_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  }

  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  const std::string token = bearerToken();
  if (!token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  if (body != nullptr) {
    headers = curl_slist_append(headers, ("Content-Type: " + content_type).c_str());
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);

  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);

  HttpResult r;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  r.body = std::move(t.body);
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && t.ended_by_caller)) return r;
  if (t.body_too_long) {
    r.body.clear();
    r.error = absl::StrCat("a response body larger than ", max_body_, " bytes (not read)");
  } else if (t.line_too_long) {
    r.error = "a watch event longer than the line limit";
  } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
    r.error = "stopped";
  } else {
    r.error = absl::StrCat(curl_easy_strerror(rc), error[0] != 0 ? ": " : "", error);
  }
  return r;
}

}  // namespace sluice::agent
