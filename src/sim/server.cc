// The simulator's HTTP server: Beast over Asio coroutines on one io thread.
// One coroutine per connection; a watch turns its connection into a chunked
// stream of newline-delimited JSON events until it times out, is dropped by a
// fault, or the client goes away.
#include "sim/server.h"

#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <charconv>
#include <deque>
#include <fstream>
#include <map>
#include <thread>

#include "kube/json_fields.h"
#include "sim/patch.h"

namespace fk::sim {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Request = http::request<http::string_body>;

namespace {

constexpr auto kUse = net::use_awaitable;

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  int retry_after = 0;
};

Response Json(int status, const json::value& v) { return {status, json::serialize(v)}; }
Response Fail(const ApiFailure& f) { return {f.code, f.ToJson()}; }
Response Fail(int code, const std::string& reason, const std::string& message) {
  return Fail(ApiFailure{code, reason, message, "", nullptr});
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Target {
  std::vector<std::string> segments;
  std::map<std::string, std::string> query;
  std::string Query(const std::string& k) const {
    auto it = query.find(k);
    return it == query.end() ? "" : it->second;
  }
  bool Flag(const std::string& k) const {
    const std::string v = Query(k);
    return v == "1" || v == "true";
  }
};

Target ParseTarget(std::string_view target) {
  Target t;
  const size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    if (next > pos) t.segments.push_back(PercentDecode(path.substr(pos, next - pos)));
    pos = next + 1;
  }
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    size_t p = 0;
    while (p < query.size()) {
      size_t amp = query.find('&', p);
      if (amp == std::string_view::npos) amp = query.size();
      std::string_view kv = query.substr(p, amp - p);
      const size_t eq = kv.find('=');
      if (!kv.empty()) {
        t.query[PercentDecode(kv.substr(0, eq))] = eq == std::string_view::npos ? "" : PercentDecode(kv.substr(eq + 1));
      }
      p = amp + 1;
    }
  }
  return t;
}

// A resource request resolved from the URL.
struct Route {
  const ResourceKind* kind = nullptr;
  std::string version;
  std::string ns;
  std::string name;
  bool status = false;
};

std::optional<Route> ResolveRoute(const Simulator& sim, const std::vector<std::string>& s) {
  std::string group, version;
  size_t i;
  if (s.size() >= 3 && s[0] == "api" && s[1] == "v1") {
    version = "v1";
    i = 2;
  } else if (s.size() >= 4 && s[0] == "apis") {
    group = s[1];
    version = s[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> rest(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
  Route r;
  r.version = version;
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status") {
    r.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) return std::nullopt;
  r.kind = FindKind(group, rest[0]);
  if (!r.kind || !sim.Serves(*r.kind, version)) return std::nullopt;
  if (rest.size() >= 2) r.name = rest[1];
  if (rest.size() == 3) {
    if (rest[2] != "status" || !r.kind->status_subresource) return std::nullopt;
    r.status = true;
  }
  if (r.kind->namespaced == false && !r.ns.empty()) return std::nullopt;
  return r;
}

// ---- discovery ----------------------------------------------------------------

json::value ApiVersions(const std::string& address) {
  return json::object{{"kind", "APIVersions"},
                      {"versions", json::array{"v1"}},
                      {"serverAddressByClientCIDRs",
                       json::array{{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", address}}}}};
}

json::value GroupJson(const Simulator& sim, const std::string& group) {
  json::array versions;
  std::string preferred;
  for (const auto& k : Kinds()) {
    if (k.group != group) continue;
    for (const auto& v : k.versions) {
      if (!sim.Serves(k, v)) continue;
      bool seen = false;
      for (const auto& e : versions) seen |= e.at("version") == json::value(v);
      if (!seen) versions.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
    }
    for (const auto& v : k.versions) {
      if (preferred.empty() && sim.Serves(k, v)) preferred = v;
    }
  }
  return json::object{{"name", group},
                      {"versions", versions},
                      {"preferredVersion", {{"groupVersion", group + "/" + preferred}, {"version", preferred}}}};
}

json::value GroupList(const Simulator& sim) {
  json::array groups;
  std::vector<std::string> seen;
  for (const auto& k : Kinds()) {
    if (k.group.empty() || std::find(seen.begin(), seen.end(), k.group) != seen.end()) continue;
    seen.push_back(k.group);
    groups.push_back(GroupJson(sim, k.group));
  }
  return json::object{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<json::value> ResourceList(const Simulator& sim, const std::string& group, const std::string& version) {
  json::array resources;
  for (const auto& k : Kinds()) {
    if (k.group != group || !sim.Serves(k, version)) continue;
    json::array short_names;
    for (const auto& s : k.short_names) short_names.push_back(json::string(s));
    json::object r{{"name", k.plural},
                   {"singularName", k.singular},
                   {"namespaced", k.namespaced},
                   {"kind", k.kind},
                   {"verbs", json::array{"create", "delete", "get", "list", "patch", "update", "watch"}}};
    if (!short_names.empty()) r["shortNames"] = short_names;
    resources.push_back(r);
    if (k.status_subresource) {
      resources.push_back({{"name", k.plural + "/status"}, {"singularName", ""}, {"namespaced", k.namespaced},
                           {"kind", k.kind}, {"verbs", json::array{"get", "patch", "update"}}});
    }
  }
  if (resources.empty()) return std::nullopt;
  return json::object{{"kind", "APIResourceList"},
                      {"apiVersion", "v1"},
                      {"groupVersion", group.empty() ? version : group + "/" + version},
                      {"resources", resources}};
}

// OpenAPI v3: just enough for kubectl to see that every kind supports
// server-side field validation (the fieldValidation query parameter on PATCH),
// so it sends fieldValidation=Strict instead of validating against a schema.
json::value OpenApiV3Root(const Simulator& sim) {
  json::object paths;
  std::vector<std::string> seen;
  for (const auto& k : Kinds()) {
    for (const auto& v : k.versions) {
      if (!sim.Serves(k, v)) continue;
      const std::string gv = k.group.empty() ? "api/" + v : "apis/" + k.group + "/" + v;
      if (std::find(seen.begin(), seen.end(), gv) != seen.end()) continue;
      seen.push_back(gv);
      paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv}};
    }
  }
  return json::object{{"paths", paths}};
}

std::optional<json::value> OpenApiV3Group(const Simulator& sim, const std::string& group, const std::string& version) {
  json::object paths;
  for (const auto& k : Kinds()) {
    if (k.group != group || !sim.Serves(k, version)) continue;
    const std::string prefix = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    const std::string path = prefix + (k.namespaced ? "/namespaces/{namespace}/" : "/") + k.plural + "/{name}";
    paths[path] = {{"patch",
                    {{"x-kubernetes-group-version-kind", {{"group", group}, {"version", version}, {"kind", k.kind}}},
                     {"parameters", json::array{{{"name", "fieldValidation"}, {"in", "query"},
                                                 {"schema", {{"type", "string"}}}}}},
                     {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  if (paths.empty()) return std::nullopt;
  return json::object{{"openapi", "3.0.0"},
                      {"info", {{"title", "fencekeeper simulator"}, {"version", "v1"}}},
                      {"paths", paths}};
}

json::value VersionInfo() {
  return json::object{{"major", "1"}, {"minor", "32"}, {"gitVersion", "v1.32.0-fencekeeper-sim"},
                      {"gitCommit", "0000000000000000000000000000000000000000"}, {"gitTreeState", "clean"},
                      {"buildDate", "2026-11-29T00:00:00Z"}, {"goVersion", "go1.23"}, {"compiler", "gc"},
                      {"platform", "linux/amd64"}};
}

std::string VerbFor(const http::verb method, const Route& r, const Target& t) {
  switch (method) {
    case http::verb::get: return r.name.empty() ? (t.Flag("watch") ? "watch" : "list") : "get";
    case http::verb::post: return "create";
    case http::verb::put: return "update";
    case http::verb::patch: return "patch";
    case http::verb::delete_: return "delete";
    default: return "unknown";
  }
}

bool MatchesSelectors(const json::value& obj, const Selector& labels, const Selector& fields) {
  return labels.Matches(obj) && fields.Matches(obj);
}

// The event line a watcher sees for a stored event, or "" if the event is
// invisible through its selectors. An object that moves out of the selection
// is seen as DELETED, one that moves in as ADDED, like the real API server.
std::string EventLine(const StoredEvent& e, const Route& r, const Selector& labels, const Selector& fields) {
  std::string type = e.type;
  const bool now_in = MatchesSelectors(e.object, labels, fields);
  if (e.type == "MODIFIED") {
    const bool was_in = MatchesSelectors(e.previous, labels, fields);
    if (!now_in && !was_in) return {};
    if (!was_in) type = "ADDED";
    if (!now_in) type = "DELETED";
  } else if (!now_in) {
    return {};
  }
  json::object line{{"type", type}, {"object", Simulator::ToVersion(*r.kind, e.object, r.version)}};
  return json::serialize(line) + "\n";
}

// Runs its function when the scope ends, also when a coroutine frame is
// destroyed without resuming (server shutdown).
struct Cleanup {
  std::function<void()> fn;
  ~Cleanup() {
    if (fn) fn();
  }
};

struct WatchState : std::enable_shared_from_this<WatchState> {
  explicit WatchState(net::any_io_executor ex) : timer(ex) {}
  std::mutex mu;
  std::deque<std::string> lines;
  net::steady_timer timer;

  void Push(std::string line) {
    {
      std::lock_guard lock(mu);
      lines.push_back(std::move(line));
    }
    Wake();
  }
  void Wake() {
    net::post(timer.get_executor(), [self = shared_from_this()] { self->timer.cancel(); });
  }
  std::deque<std::string> Take() {
    std::lock_guard lock(mu);
    return std::exchange(lines, {});
  }
};

}  // namespace

struct Server::Impl {
  Impl(Simulator& s, ServerOptions o) : sim(s), options(std::move(o)), acceptor(io) {}

  Simulator& sim;
  ServerOptions options;
  net::io_context io;
  tcp::acceptor acceptor;
  std::unique_ptr<ssl::context> tls;
  std::thread thread;
  uint16_t port = 0;
  mutable std::mutex mu;
  std::map<std::string, int> auth_counts;
  std::optional<std::string> token;

  void CountAuth(const std::string& m) {
    std::lock_guard lock(mu);
    ++auth_counts[m];
  }

  // ---- request handling ------------------------------------------------------

  // "token", "certificate" or "none" when allowed; "" when not.
  std::string Authenticate(const Request& req, bool cert_ok) {
    std::optional<std::string> want;
    {
      std::lock_guard lock(mu);
      want = token;
    }
    const bool auth_required = want.has_value() || !options.client_ca_pem.empty();
    auto it = req.find(http::field::authorization);
    if (want && it != req.end() && it->value() == "Bearer " + *want) return "token";
    if (cert_ok) return "certificate";
    return auth_required ? "" : "none";
  }

  Response Discovery(const Target& t, bool* handled) {
    *handled = true;
    const auto& s = t.segments;
    const std::string address = options.host + ":" + std::to_string(port);
    if (s.size() == 1 && s[0] == "api") return Json(200, ApiVersions(address));
    if (s.size() == 1 && s[0] == "apis") return Json(200, GroupList(sim));
    if (s.size() == 2 && s[0] == "api" && s[1] == "v1") return Json(200, *ResourceList(sim, "", "v1"));
    if (s.size() == 2 && s[0] == "apis") {
      for (const auto& k : Kinds()) {
        if (k.group == s[1]) {
          json::value g = GroupJson(sim, s[1]);
          g.as_object()["kind"] = "APIGroup";
          g.as_object()["apiVersion"] = "v1";
          return Json(200, g);
        }
      }
      return Fail(404, "NotFound", "the server could not find the requested resource");
    }
    if (s.size() == 3 && s[0] == "apis") {
      if (auto list = ResourceList(sim, s[1], s[2])) return Json(200, *list);
      return Fail(404, "NotFound", "the server could not find the requested resource");
    }
    if (s.size() == 1 && s[0] == "version") return Json(200, VersionInfo());
    if (s.size() == 1 && (s[0] == "healthz" || s[0] == "readyz" || s[0] == "livez")) {
      return {200, "ok", "text/plain"};
    }
    if (s.size() == 2 && s[0] == "openapi" && s[1] == "v2") {
      return Json(200, json::object{{"swagger", "2.0"},
                                    {"info", {{"title", "fencekeeper simulator"}, {"version", "v1"}}},
                                    {"paths", json::object{}},
                                    {"definitions", json::object{}}});
    }
    if (s.size() == 2 && s[0] == "openapi" && s[1] == "v3") return Json(200, OpenApiV3Root(sim));
    if (s.size() >= 4 && s[0] == "openapi" && s[1] == "v3") {
      std::optional<json::value> doc;
      if (s.size() == 4 && s[2] == "api") doc = OpenApiV3Group(sim, "", s[3]);
      if (s.size() == 5 && s[2] == "apis") doc = OpenApiV3Group(sim, s[3], s[4]);
      if (doc) return Json(200, *doc);
      return Fail(404, "NotFound", "the server could not find the requested resource");
    }
    *handled = false;
    return {};
  }

  // /sim/... : control endpoints for tests that run the simulator out of process.
  Response Control(const Request& req, const Target& t, bool* handled) {
    *handled = t.segments.size() == 2 && t.segments[0] == "sim";
    if (!*handled) return {};
    const std::string& what = t.segments[1];
    if (what == "drop-watches" && req.method() == http::verb::post) {
      sim.DropWatches();
      return Json(200, json::object{{"dropped", true}});
    }
    if (what == "expire-history" && req.method() == http::verb::post) {
      sim.ExpireHistory();
      return Json(200, json::object{{"expired", true}});
    }
    if (what == "faults" && req.method() == http::verb::post) {
      boost::system::error_code ec;
      json::value v = json::parse(req.body(), ec);
      if (ec || !v.is_object()) return Fail(400, "BadRequest", "a fault is a JSON object");
      FaultRule f;
      const auto& o = v.as_object();
      if (auto* x = o.if_contains("verb")) f.verb = x->as_string();
      if (auto* x = o.if_contains("resource")) f.resource = x->as_string();
      if (auto* x = o.if_contains("status")) f.status = static_cast<int>(x->to_number<int64_t>());
      if (auto* x = o.if_contains("retryAfterSeconds")) f.retry_after_seconds = static_cast<int>(x->to_number<int64_t>());
      if (auto* x = o.if_contains("plainText")) f.plain_text = x->as_bool();
      if (auto* x = o.if_contains("count")) f.count = static_cast<int>(x->to_number<int64_t>());
      sim.AddFault(f);
      return Json(200, json::object{{"added", true}});
    }
    if (what == "requests" && req.method() == http::verb::get) {
      json::object counts;
      for (const char* verb : {"get", "list", "watch", "create", "update", "patch", "delete"}) {
        counts[verb] = sim.RequestCount(verb, t.Query("resource").empty() ? "*" : t.Query("resource"));
      }
      return Json(200, counts);
    }
    return Fail(404, "NotFound", "unknown simulator control endpoint");
  }

  Response FaultResponse(const FaultRule& f) {
    Response r;
    r.status = f.status;
    r.retry_after = f.retry_after_seconds;
    if (!f.body.empty()) {
      r.body = f.body;
      return r;
    }
    if (f.plain_text) {
      r.content_type = "text/plain; charset=utf-8";
      r.body = f.status == 429 ? "Too many requests, please try again later.\n" : "injected failure\n";
      return r;
    }
    std::string reason = "InternalError";
    if (f.status == 429) reason = "TooManyRequests";
    if (f.status == 503) reason = "ServiceUnavailable";
    if (f.status == 504) reason = "Timeout";
    if (f.status == 409) reason = "Conflict";
    if (f.status == 410) reason = "Expired";
    if (f.status == 403) reason = "Forbidden";
    r.body = ApiFailure{f.status, reason, "injected fault: " + reason, "", nullptr}.ToJson();
    return r;
  }

  Response Resource(const Request& req, const Target& t, const Route& r, const std::string& verb) {
    Store& store = sim.store();
    const ResourceKind& kind = *r.kind;
    auto parse_body = [&](json::value* out) -> std::optional<Response> {
      boost::system::error_code ec;
      *out = json::parse(req.body(), ec);
      if (ec) return Fail(400, "BadRequest", "the request body is not valid JSON: " + ec.message());
      return std::nullopt;
    };
    auto reply = [&](const Outcome& o, int ok_status = 200) {
      if (!o.ok()) return Fail(*o.failure);
      return Json(ok_status, Simulator::ToVersion(kind, o.object, r.version));
    };

    if (verb == "get") return reply(store.Get(kind, r.ns, r.name));
    if (verb == "list") {
      if (!t.Query("sendInitialEvents").empty()) {
        return Fail(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
      }
      auto labels = Selector::ParseLabels(t.Query("labelSelector"));
      auto fields = Selector::ParseFields(t.Query("fieldSelector"));
      if (!labels || !fields) return Fail(400, "BadRequest", "unable to parse the label or field selector");
      ListOutcome l = store.List(kind, r.ns, *labels, *fields);
      if (auto stale = sim.TakeStaleList(kind)) {
        l.items.clear();
        for (auto& item : stale->items) {
          if ((r.ns.empty() || kube::MetadataString(item, "namespace") == r.ns) && labels->Matches(item) && fields->Matches(item)) {
            l.items.push_back(std::move(item));
          }
        }
        l.resource_version = stale->resource_version;
      }
      json::array items;
      for (auto& item : l.items) items.push_back(Simulator::ToVersion(kind, std::move(item), r.version));
      return Json(200, json::object{{"kind", kind.kind + "List"},
                                    {"apiVersion", kind.ApiVersion(r.version)},
                                    {"metadata", {{"resourceVersion", std::to_string(l.resource_version)}}},
                                    {"items", items}});
    }
    if (verb == "create") {
      if (!r.name.empty() || r.status) return Fail(405, "MethodNotAllowed", "POST goes to a collection");
      json::value body;
      if (auto bad = parse_body(&body)) return *bad;
      return reply(store.Create(kind, r.ns, Simulator::FromVersion(kind, std::move(body), r.version)), 201);
    }
    if (verb == "update") {
      json::value body;
      if (auto bad = parse_body(&body)) return *bad;
      return reply(store.Update(kind, r.ns, r.name, Simulator::FromVersion(kind, std::move(body), r.version), r.status));
    }
    if (verb == "delete") {
      std::optional<std::string> pre_rv, pre_uid;
      if (!req.body().empty()) {
        boost::system::error_code ec;
        json::value opts = json::parse(req.body(), ec);
        if (!ec && opts.is_object()) {
          if (auto* p = opts.as_object().if_contains("preconditions"); p && p->is_object()) {
            if (auto* v = p->as_object().if_contains("resourceVersion"); v && v->is_string()) pre_rv = std::string(v->as_string());
            if (auto* v = p->as_object().if_contains("uid"); v && v->is_string()) pre_uid = std::string(v->as_string());
          }
        }
      }
      Outcome o = store.Delete(kind, r.ns, r.name, pre_rv, pre_uid);
      if (!o.ok() || !kind.custom) return reply(o);
      return Json(200, json::object{{"kind", "Status"},
                                    {"apiVersion", "v1"},
                                    {"metadata", json::object{}},
                                    {"status", "Success"},
                                    {"details", {{"name", r.name}, {"group", kind.group}, {"kind", kind.plural},
                                                 {"uid", o.object.at("metadata").at("uid")}}}});
    }
    if (verb == "patch") {
      std::string type(req[http::field::content_type]);
      type = type.substr(0, type.find(';'));
      json::value patch;
      if (type == "application/apply-patch+yaml") {
        if (t.Query("fieldManager").empty()) {
          return Fail(422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch");
        }
        // Simplification (see reference B.7): apply is a merge patch of the
        // body, without managedFields; the body must be JSON.
      } else if (type == "application/strategic-merge-patch+json" && kind.custom) {
        type.clear();  // CRDs do not support strategic merge: 415 below
      } else if (type != "application/merge-patch+json" && type != "application/json-patch+json" &&
                 type != "application/strategic-merge-patch+json") {
        type.clear();
      }
      if (type.empty()) {
        return Fail(415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: "
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
      }
      if (auto bad = parse_body(&patch)) return *bad;
      const bool json_patch = type == "application/json-patch+json";
      if (!json_patch && !patch.is_object()) return Fail(400, "BadRequest", "a merge patch must be a JSON object");
      std::optional<JsonPatchError> patch_error;
      Outcome o = store.Mutate(kind, r.ns, r.name, [&](json::value& obj) -> std::optional<ApiFailure> {
        json::value view = Simulator::ToVersion(kind, obj, r.version);
        if (json_patch) {
          JsonPatchError err;
          if (!ApplyJsonPatch(view, patch, &err)) {
            patch_error = err;
            return ApiFailure{err.http_status, err.http_status == 422 ? "Invalid" : "BadRequest", err.message, r.name, &kind};
          }
        } else {
          view = MergePatch(std::move(view), patch);
        }
        obj = Simulator::FromVersion(kind, std::move(view), r.version);
        return std::nullopt;
      }, r.status);
      return reply(o);
    }
    return Fail(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
  }

  // ---- connections -------------------------------------------------------------

  template <class Stream>
  net::awaitable<bool> Write(Stream& stream, const Request& req, const Response& r) {
    http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::server, "fencekeeper-sim");
    res.set(http::field::content_type, r.content_type);
    if (r.retry_after > 0) res.set(http::field::retry_after, std::to_string(r.retry_after));
    res.keep_alive(req.keep_alive());
    res.body() = r.body;
    res.prepare_payload();
    boost::system::error_code ec;
    co_await http::async_write(stream, res, net::redirect_error(kUse, ec));
    co_return !ec && req.keep_alive();
  }

  template <class Stream>
  net::awaitable<void> Watch(Stream& stream, const Request& req, const Target& t, const Route& r) {
    auto labels = Selector::ParseLabels(t.Query("labelSelector"));
    auto fields = Selector::ParseFields(t.Query("fieldSelector"));
    if (!labels || !fields) {
      co_await Write(stream, req, Fail(400, "BadRequest", "unable to parse the label or field selector"));
      co_return;
    }
    if (!t.Query("sendInitialEvents").empty() || !t.Query("resourceVersionMatch").empty()) {
      // As a server with the WatchList feature gate off: client-go falls back to list+watch.
      co_await Write(stream, req,
                     Fail(422, "Invalid",
                          "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"));
      co_return;
    }
    std::optional<int64_t> from_rv;
    if (const std::string rv = t.Query("resourceVersion"); !rv.empty()) {
      int64_t parsed = 0;
      auto [p, perr] = std::from_chars(rv.data(), rv.data() + rv.size(), parsed);
      if (perr != std::errc() || p != rv.data() + rv.size() || parsed < 0) {
        co_await Write(stream, req, Fail(400, "BadRequest", "invalid resourceVersion '" + rv + "'"));
        co_return;
      }
      from_rv = parsed;
    }
    const bool bookmarks = t.Flag("allowWatchBookmarks");
    int timeout_seconds = 1800;
    if (const std::string ts = t.Query("timeoutSeconds"); !ts.empty()) timeout_seconds = std::max(1, std::atoi(ts.c_str()));

    auto state = std::make_shared<WatchState>(co_await net::this_coro::executor);
    const Route route = r;
    const Selector ls = *labels, fs = *fields;
    const uint64_t epoch = sim.watch_epoch();
    const uint64_t waker = sim.AddWatchStream(
        [weak = std::weak_ptr<WatchState>(state)] {
          if (auto s = weak.lock()) s->Wake();
        },
        [weak = std::weak_ptr<WatchState>(state)](std::string raw) {
          if (auto s = weak.lock()) s->Push(std::move(raw));
        });
    Store::WatchStart start = sim.store().Watch(*r.kind, r.ns, from_rv, [state, route, ls, fs](const StoredEvent& e) {
      std::string line = EventLine(e, route, ls, fs);
      if (!line.empty()) state->Push(std::move(line));
    });
    Cleanup unregister{[this, waker, id = start.failure ? 0 : start.id] {
      sim.RemoveWatchStream(waker);
      if (id) sim.store().Unwatch(id);
    }};

    http::response<http::empty_body> res{http::status::ok, req.version()};
    res.set(http::field::server, "fencekeeper-sim");
    res.set(http::field::content_type, "application/json");
    res.chunked(true);
    res.keep_alive(false);
    http::response_serializer<http::empty_body> sr{res};
    boost::system::error_code ec;
    co_await http::async_write_header(stream, sr, net::redirect_error(kUse, ec));

    if (start.failure) {
      // Errors after the resourceVersion parsed travel as one ERROR event.
      const std::string line = json::serialize(json::object{
          {"type", "ERROR"}, {"object", json::parse(start.failure->ToJson())}}) + "\n";
      if (!ec) co_await net::async_write(stream, http::make_chunk(net::buffer(line)), net::redirect_error(kUse, ec));
    } else {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
      auto next_bookmark = std::chrono::steady_clock::now() + sim.options().bookmark_interval;
      int sent = 0;
      const int drop_after = sim.options().drop_watch_after_events;
      while (!ec) {
        const int64_t bookmark_rv = sim.store().CurrentResourceVersion();  // read before draining
        for (std::string& line : state->Take()) {
          co_await net::async_write(stream, http::make_chunk(net::buffer(line)), net::redirect_error(kUse, ec));
          if (ec) break;
          ++sent;
        }
        if (ec || sim.watch_epoch() != epoch || (drop_after > 0 && sent >= drop_after)) break;
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) break;
        if (bookmarks && now >= next_bookmark) {
          const std::string line = json::serialize(json::object{
              {"type", "BOOKMARK"},
              {"object", {{"kind", r.kind->kind}, {"apiVersion", r.kind->ApiVersion(r.version)},
                          {"metadata", {{"resourceVersion", std::to_string(bookmark_rv)}}}}}}) + "\n";
          co_await net::async_write(stream, http::make_chunk(net::buffer(line)), net::redirect_error(kUse, ec));
          next_bookmark = now + sim.options().bookmark_interval;
          continue;
        }
        state->timer.expires_at(bookmarks ? std::min(deadline, next_bookmark) : deadline);
        boost::system::error_code wait_ec;
        co_await state->timer.async_wait(net::redirect_error(kUse, wait_ec));
      }
    }
    if (!ec) co_await net::async_write(stream, http::make_chunk_last(), net::redirect_error(kUse, ec));
  }

  // Serves one request; returns whether the connection stays open.
  template <class Stream>
  net::awaitable<bool> Serve(Stream& stream, const Request& req, bool cert_ok) {
    const Target t = ParseTarget(req.target());
    const std::string auth = Authenticate(req, cert_ok);
    CountAuth(auth.empty() ? "rejected" : auth);
    if (auth.empty()) co_return co_await Write(stream, req, Fail(401, "Unauthorized", "Unauthorized"));

    if (sim.options().latency.count() > 0) {
      net::steady_timer delay(co_await net::this_coro::executor, sim.options().latency);
      boost::system::error_code ec;
      co_await delay.async_wait(net::redirect_error(kUse, ec));
    }
    bool handled = false;
    Response control = Control(req, t, &handled);
    if (handled) co_return co_await Write(stream, req, control);

    const std::optional<Route> route = ResolveRoute(sim, t.segments);
    if (!route) {
      Response d = Discovery(t, &handled);
      if (!handled) d = Fail(404, "NotFound", "the server could not find the requested resource");
      co_return co_await Write(stream, req, d);
    }
    const std::string verb = VerbFor(req.method(), *route, t);
    sim.CountRequest(verb, route->kind->plural, route->name);
    if (auto fault = sim.TakeFault(verb, route->kind->plural)) {
      co_return co_await Write(stream, req, FaultResponse(*fault));
    }
    if (verb == "watch") {
      co_await Watch(stream, req, t, *route);
      co_return false;
    }
    co_return co_await Write(stream, req, Resource(req, t, *route, verb));
  }

  template <class Stream>
  net::awaitable<void> Session(Stream stream, bool cert_ok) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64 * 1024 * 1024);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(300));
      boost::system::error_code ec;
      co_await http::async_read(stream, buffer, parser, net::redirect_error(kUse, ec));
      if (ec) break;
      beast::get_lowest_layer(stream).expires_never();
      Request req = parser.release();
      if (!co_await Serve(stream, req, cert_ok)) break;
    }
    boost::system::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  net::awaitable<void> Accept() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(kUse, ec));
      if (ec) co_return;
      if (!tls) {
        net::co_spawn(io, Session(beast::tcp_stream(std::move(socket)), false), net::detached);
        continue;
      }
      net::co_spawn(io, [this, s = std::move(socket)]() mutable -> net::awaitable<void> {
        beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(s)), *tls);
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
        boost::system::error_code hec;
        co_await stream.async_handshake(ssl::stream_base::server, net::redirect_error(kUse, hec));
        if (hec) co_return;
        bool cert_ok = false;
        if (X509* peer = SSL_get1_peer_certificate(stream.native_handle())) {
          cert_ok = SSL_get_verify_result(stream.native_handle()) == X509_V_OK;
          X509_free(peer);
        }
        co_await Session(std::move(stream), cert_ok);
      }, net::detached);
    }
  }
};

Server::Server(Simulator& sim, ServerOptions options) : impl_(std::make_unique<Impl>(sim, std::move(options))) {
  impl_->token = impl_->options.bearer_token;
}

Server::~Server() { Stop(); }

Status Server::Start() {
  Impl& s = *impl_;
  try {
    if (!s.options.tls_cert_pem.empty()) {
      s.tls = std::make_unique<ssl::context>(ssl::context::tls_server);
      s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3);
      s.tls->use_certificate_chain(net::buffer(s.options.tls_cert_pem));
      s.tls->use_private_key(net::buffer(s.options.tls_key_pem), ssl::context::pem);
      if (!s.options.client_ca_pem.empty()) {
        s.tls->add_certificate_authority(net::buffer(s.options.client_ca_pem));
        s.tls->set_verify_mode(ssl::verify_peer);  // a certificate is optional; tokens still work
      }
    }
    tcp::endpoint ep(net::ip::make_address(s.options.host), s.options.port);
    s.acceptor.open(ep.protocol());
    s.acceptor.set_option(net::socket_base::reuse_address(true));
    s.acceptor.bind(ep);
    s.acceptor.listen();
    s.port = s.acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    return Status::IOError("simulator cannot listen on " + s.options.host + ":" +
                           std::to_string(s.options.port) + ": " + e.what());
  }
  net::co_spawn(s.io, s.Accept(), net::detached);
  s.thread = std::thread([&s] { s.io.run(); });
  return Status::Ok();
}

void Server::Stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  net::post(s.io, [&s] {
    boost::system::error_code ec;
    s.acceptor.close(ec);
  });
  s.io.stop();
  s.thread.join();
}

uint16_t Server::port() const { return impl_->port; }

std::string Server::url() const {
  return std::string(impl_->tls ? "https://" : "http://") + impl_->options.host + ":" + std::to_string(impl_->port);
}

void Server::SetBearerToken(std::string token) {
  std::lock_guard lock(impl_->mu);
  impl_->token = std::move(token);
}

int Server::AuthCount(const std::string& method) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->auth_counts.find(method);
  return it == impl_->auth_counts.end() ? 0 : it->second;
}

Status WriteKubeconfig(const std::string& path, const std::string& server_url) {
  std::ofstream out(path);
  if (!out) return Status::IOError("cannot write kubeconfig '" + path + "'");
  out << "apiVersion: v1\nkind: Config\n"
      << "clusters:\n- name: fencekeeper-sim\n  cluster:\n    server: " << server_url << "\n"
      << "users:\n- name: fencekeeper-sim\n  user: {}\n"
      << "contexts:\n- name: fencekeeper-sim\n  context:\n    cluster: fencekeeper-sim\n    user: fencekeeper-sim\n"
      << "current-context: fencekeeper-sim\n";
  return out ? Status::Ok() : Status::IOError("cannot write kubeconfig '" + path + "'");
}

}  // namespace fk::sim
