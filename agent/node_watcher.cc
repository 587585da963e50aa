#include "agent/node_watcher.h"

#include <absl/strings/str_cat.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "common/log.h"

namespace sluice::agent {
namespace {

constexpr long kGone = 410;  // the resourceVersion asked for is older than the server keeps
// Lists started over at once after a 410 on a continue token; past this the
// server compacts faster than the list is read, and the next try waits the
// backoff like any other failure.
constexpr int kMaxListRestarts = 3;

// A continue token as a query value: the API server's are base64url, but
// nothing obliges a server to stay within the unreserved characters.
std::string urlEscaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string statusMessage(const HttpResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  return r.body.substr(0, 200);
}

}  // namespace

NodeWatcher::NodeWatcher(const KubeConfig& config, const WatchSettings& settings, NodeCache& cache,
                         std::atomic<bool>& stop)
    : settings_(settings),
      cache_(cache),
      stop_(stop),
      client_(config, &stop, settings.request_timeout, settings.max_body),
      backoff_(settings.backoff_initial, settings.backoff_cap) {}

void NodeWatcher::sleepFor(Backoff::Duration d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop_ && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
}

void NodeWatcher::failed(const std::string& what, const HttpResult& r) {
  std::string error;
  if (!r.error.empty()) {
    cache_.count(AgentCounter::k_connection_errors);
    error = absl::StrCat(what, ": ", r.error);
  } else {
    cache_.count(AgentCounter::k_http_errors);
    error = absl::StrCat(what, ": HTTP ", r.status, ": ", statusMessage(r));
  }
  if (stop_) return;
  logWarning("kubernetes API: ", error);
  cache_.setError(error);
  cache_.setSynced(false);
  need_backoff_ = true;
}

void NodeWatcher::run() {
  while (!stop_) {
    if (need_backoff_) {
      sleepFor(backoff_.next());
      need_backoff_ = false;
      if (stop_) break;
    }
    if (need_list_) {
      if (!list()) continue;
      need_list_ = false;
    }
    watch();
  }
}

bool NodeWatcher::list() {
  std::map<std::string, KubeNode> nodes;
  std::string rv, cont;
  int restarts = 0;
  // Read into `nodes` page by page; the cache is replaced only once the last
  // page is in, so a list that fails or stops half way never leaves the
  // table with part of the Nodes.
  while (!stop_) {
    std::string path = absl::StrCat("/api/v1/nodes?limit=", settings_.list_page_size);
    if (!cont.empty()) absl::StrAppend(&path, "&continue=", urlEscaped(cont));
    HttpResult r = client_.get(path);
    if (!r.ok()) {
      if (r.error.empty() && r.status == kGone && !cont.empty() && restarts < kMaxListRestarts) {
        // The list's version was compacted between two pages: the pages read
        // so far cannot be continued consistently. Start over from the first.
        logInfo("node list: continue token expired (410 Gone) after ", nodes.size(), " node(s): listing again");
        cont.clear();
        nodes.clear();
        ++restarts;
        cache_.count(AgentCounter::k_relists_gone);
        continue;
      }
      failed("list nodes", r);
      return false;
    }
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    if (!j.is_object() || !j.contains("items") || !j["items"].is_array() || !j.contains("metadata") ||
        !j["metadata"].is_object()) {
      failed("list nodes", HttpResult{r.status, "not a NodeList", "", });
      return false;
    }
    const nlohmann::json& meta = j["metadata"];
    rv = meta.contains("resourceVersion") && meta["resourceVersion"].is_string()
             ? meta["resourceVersion"].get<std::string>()
             : "";
    cont = meta.contains("continue") && meta["continue"].is_string() ? meta["continue"].get<std::string>() : "";
    for (const nlohmann::json& item : j["items"]) {
      ParsedNode p = parseNode(item);
      if (!p.node) {
        cache_.count(AgentCounter::k_malformed_events);
        if (cache_.firstTime(absl::StrCat("malformed\x1f", p.error, item.dump(-1, ' ', false,
                                                                                nlohmann::json::error_handler_t::replace))))
          logWarning("node list: an item skipped: ", p.error);
        continue;
      }
      cache_.noteProblems(*p.node);
      const std::string name = p.node->name;
      nodes[name] = std::move(*p.node);
    }
    if (cont.empty()) break;  // the last page
  }
  if (stop_) return false;
  if (rv.empty()) {
    failed("list nodes", HttpResult{200, "a NodeList without resourceVersion", ""});
    return false;
  }
  cache_.count(AgentCounter::k_lists);
  logInfo("listed ", nodes.size(), " node(s) at resourceVersion ", rv);
  resource_version_ = rv;
  cache_.replaceAll(std::move(nodes), rv);
  cache_.setError("");
  cache_.setSynced(true);
  backoff_.reset();
  return true;
}

void NodeWatcher::watch() {
  const std::string path = absl::StrCat("/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=",
                                        resource_version_, "&timeoutSeconds=", settings_.watch_timeout.count());
  bool gone = false;
  bool saw_data = false;
  std::function<void()> on_open = [&] {
    // Established: in sync again (after a lost connection, from the last
    // resourceVersion; had it expired, the server would have said 410).
    cache_.setError("");
    cache_.setSynced(true);
  };
  std::function<bool(std::string_view)> on_line = [&](std::string_view line) -> bool {
    saw_data = true;
    std::string error;
    std::optional<WatchEvent> e = parseWatchEvent(line, &error);
    if (!e) {
      cache_.count(AgentCounter::k_malformed_events);
      if (cache_.firstTime(absl::StrCat("malformed\x1f", error, "\x1f", std::string(line))))
        logWarning("watch: a line skipped: ", error);
      return true;
    }
    switch (e->type) {
      case WatchEvent::Type::kAdded:
      case WatchEvent::Type::kModified:
        cache_.count(e->type == WatchEvent::Type::kAdded ? AgentCounter::k_events_added
                                                         : AgentCounter::k_events_modified);
        cache_.noteProblems(*e->node);
        resource_version_ = e->resource_version.empty() ? resource_version_ : e->resource_version;
        cache_.upsert(std::move(*e->node), e->resource_version);
        return true;
      case WatchEvent::Type::kDeleted:
        cache_.count(AgentCounter::k_events_deleted);
        resource_version_ = e->resource_version.empty() ? resource_version_ : e->resource_version;
        cache_.erase(e->node->name, e->resource_version);
        return true;
      case WatchEvent::Type::kBookmark:
        cache_.count(AgentCounter::k_events_bookmark);
        resource_version_ = e->resource_version;
        cache_.setResourceVersion(e->resource_version);
        return true;
      case WatchEvent::Type::kError:
        cache_.count(AgentCounter::k_events_error);
        if (e->error_code == kGone) {
          gone = true;
        } else {
          logWarning("watch: ERROR event ", e->error_code, ": ", e->error_message);
          cache_.setError(absl::StrCat("watch: ERROR event ", e->error_code, ": ", e->error_message));
          need_backoff_ = true;
        }
        return false;
    }
    return true;
  };
  const auto started = std::chrono::steady_clock::now();
  // Silence longer than the server's own timeout plus a margin: the
  // connection is dead (a peer that vanished without a FIN).
  HttpResult r = client_.watch(path, on_open, on_line, settings_.watch_timeout + std::chrono::seconds(30));
  if (stop_) return;
  if (r.error.empty() && r.status == kGone) gone = true;
  if (gone) {
    logInfo("watch: resourceVersion ", resource_version_, " expired (410 Gone): listing again");
    cache_.count(AgentCounter::k_relists_gone);
    need_list_ = true;
    return;
  }
  if (!r.error.empty() || r.status != 200) {
    failed("watch nodes", r);
    return;
  }
  if (need_backoff_) return;  // an ERROR event other than 410
  // The server ended the watch (timeoutSeconds): normal, go on from where it
  // stopped. A server that ends watches at once is not hammered: such a
  // short watch waits the backoff; a longer one resets it.
  cache_.count(AgentCounter::k_watch_restarts);
  cache_.setSynced(true);
  cache_.setError("");
  if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1) && !saw_data) need_backoff_ = true;
  else backoff_.reset();
}

}  // namespace sluice::agent
