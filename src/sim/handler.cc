// The simulator's request handling without HTTP (see handler.h): target
// parsing, routing, discovery documents, the /sim/... control endpoints,
// fault replies and the resource verbs.
#include "sim/handler.h"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/patch.h"
#include "sim/store.h"
#include "sim/table.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

ApiReply Json(int status, const json::value& v) { return {status, json::serialize(v)}; }
ApiReply Fail(const ApiFailure& f) { return {f.code, f.ToJson()}; }
ApiReply Fail(int code, const std::string& reason, const std::string& message) {
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

}  // namespace

std::string Target::Query(const std::string& k) const {
  auto it = query.find(k);
  return it == query.end() ? "" : it->second;
}

bool Target::Has(const std::string& k) const { return query.count(k) > 0; }

bool Target::Flag(const std::string& k) const {
  if (!Has(k)) return false;
  std::string v = Query(k);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v != "0" && v != "false";
}

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
        t.query[PercentDecode(kv.substr(0, eq))] =
            eq == std::string_view::npos ? "" : PercentDecode(kv.substr(eq + 1));
      }
      p = amp + 1;
    }
  }
  return t;
}

namespace {

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

// "group/version", built in place (these run in loops over every kind).
std::string GroupVersion(const std::string& group, const std::string& version) {
  std::string gv = group;
  gv += '/';
  gv += version;
  return gv;
}

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
      if (!seen) versions.push_back({{"groupVersion", GroupVersion(group, v)}, {"version", v}});
    }
    for (const auto& v : k.versions) {
      if (preferred.empty() && sim.Serves(k, v)) preferred = v;
    }
  }
  return json::object{
      {"name", group},
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

std::optional<json::value> ResourceList(const Simulator& sim, const std::string& group,
                                        const std::string& version) {
  json::array resources;
  for (const auto& k : Kinds()) {
    if (k.group != group || !sim.Serves(k, version)) continue;
    json::array short_names;
    for (const auto& s : k.short_names) short_names.push_back(json::string(s));
    json::object r{
        {"name", k.plural},
        {"singularName", k.singular},
        {"namespaced", k.namespaced},
        {"kind", k.kind},
        {"verbs", json::array{"create", "delete", "get", "list", "patch", "update", "watch"}}};
    if (!short_names.empty()) r["shortNames"] = short_names;
    resources.push_back(r);
    if (k.status_subresource) {
      resources.push_back({{"name", k.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", k.namespaced},
                           {"kind", k.kind},
                           {"verbs", json::array{"get", "patch", "update"}}});
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

std::optional<json::value> OpenApiV3Group(const Simulator& sim, const std::string& group,
                                          const std::string& version) {
  json::object paths;
  for (const auto& k : Kinds()) {
    if (k.group != group || !sim.Serves(k, version)) continue;
    const std::string prefix =
        group.empty() ? "/api/" + version : "/apis/" + GroupVersion(group, version);
    const std::string path =
        prefix + (k.namespaced ? "/namespaces/{namespace}/" : "/") + k.plural + "/{name}";
    paths[path] = {{"patch",
                    {{"x-kubernetes-group-version-kind",
                      {{"group", group}, {"version", version}, {"kind", k.kind}}},
                     {"parameters", json::array{{{"name", "fieldValidation"},
                                                 {"in", "query"},
                                                 {"schema", {{"type", "string"}}}}}},
                     {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  if (paths.empty()) return std::nullopt;
  return json::object{{"openapi", "3.0.0"},
                      {"info", {{"title", "fencekeeper simulator"}, {"version", "v1"}}},
                      {"paths", paths}};
}

json::value VersionInfo() {
  return json::object{{"major", "1"},
                      {"minor", "32"},
                      {"gitVersion", "v1.32.0-fencekeeper-sim"},
                      {"gitCommit", "0000000000000000000000000000000000000000"},
                      {"gitTreeState", "clean"},
                      {"buildDate", "2026-11-29T00:00:00Z"},
                      {"goVersion", "go1.23"},
                      {"compiler", "gc"},
                      {"platform", "linux/amd64"}};
}

std::string VerbFor(const std::string& method, const Route& r, const Target& t) {
  if (method == "GET") return r.name.empty() ? (t.Flag("watch") ? "watch" : "list") : "get";
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "unknown";
}

ApiReply Discovery(const Simulator& sim, const Target& t, const std::string& address,
                   bool* handled) {
  *handled = true;
  const auto& s = t.segments;
  if (s.size() == 1 && s[0] == "api") return Json(200, ApiVersions(address));
  if (s.size() == 1 && s[0] == "apis") return Json(200, GroupList(sim));
  if (s.size() == 2 && s[0] == "api" && s[1] == "v1")
    return Json(200, *ResourceList(sim, "", "v1"));
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
ApiReply Control(Simulator& sim, const ApiRequest& req, const Target& t, bool* handled) {
  *handled = t.segments.size() == 2 && t.segments[0] == "sim";
  if (!*handled) return {};
  const std::string& what = t.segments[1];
  if (what == "drop-watches" && req.method == "POST") {
    sim.DropWatches();
    return Json(200, json::object{{"dropped", true}});
  }
  if (what == "expire-history" && req.method == "POST") {
    sim.ExpireHistory();
    return Json(200, json::object{{"expired", true}});
  }
  if (what == "faults" && req.method == "POST") {
    boost::system::error_code ec;
    json::value v = json::parse(req.body, ec);
    if (ec || !v.is_object()) return Fail(400, "BadRequest", "a fault is a JSON object");
    FaultRule f;
    const auto& o = v.as_object();
    if (auto* x = o.if_contains("verb")) f.verb = x->as_string();
    if (auto* x = o.if_contains("resource")) f.resource = x->as_string();
    if (auto* x = o.if_contains("status")) f.status = static_cast<int>(x->to_number<int64_t>());
    if (auto* x = o.if_contains("retryAfterSeconds"))
      f.retry_after_seconds = static_cast<int>(x->to_number<int64_t>());
    if (auto* x = o.if_contains("plainText")) f.plain_text = x->as_bool();
    if (auto* x = o.if_contains("count")) f.count = static_cast<int>(x->to_number<int64_t>());
    sim.AddFault(f);
    return Json(200, json::object{{"added", true}});
  }
  if (what == "requests" && req.method == "GET") {
    json::object counts;
    for (const char* verb : {"get", "list", "watch", "create", "update", "patch", "delete"}) {
      counts[verb] = sim.RequestCount(verb, t.Query("resource").empty() ? "*" : t.Query("resource"),
                                      t.Query("name").empty() ? "*" : t.Query("name"));
    }
    return Json(200, counts);
  }
  return Fail(404, "NotFound", "unknown simulator control endpoint");
}

ApiReply FaultResponse(const FaultRule& f) {
  ApiReply r;
  r.status = f.status;
  r.retry_after_seconds = f.retry_after_seconds;
  if (!f.body.empty()) {
    r.body = f.body;
    return r;
  }
  if (f.plain_text) {
    r.content_type = "text/plain; charset=utf-8";
    r.body =
        f.status == 429 ? "Too many requests, please try again later.\n" : "injected failure\n";
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

// A continue token: opaque to clients; here the list's resourceVersion and
// the key of the last item served ("rv/ns/name", names hold no '/'), in hex.
std::string EncodeContinue(int64_t rv, const std::string& ns, const std::string& name) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  std::string key = std::to_string(rv);
  key += '/';
  key += ns;
  key += '/';
  key += name;
  for (unsigned char c : key) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

struct ContinuePoint {
  int64_t rv = 0;
  std::string ns, name;
};

std::optional<ContinuePoint> DecodeContinue(const std::string& token) {
  if (token.size() % 2) return std::nullopt;
  std::string raw;
  for (size_t i = 0; i < token.size(); i += 2) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(token.data() + i, token.data() + i + 2, value, 16);
    if (ec != std::errc() || p != token.data() + i + 2) return std::nullopt;
    raw += static_cast<char>(value);
  }
  const size_t a = raw.find('/'), b = raw.find('/', a == std::string::npos ? a : a + 1);
  if (b == std::string::npos) return std::nullopt;
  auto rv = kube::ParseDigits(raw.substr(0, a));
  if (!rv) return std::nullopt;
  return ContinuePoint{*rv, raw.substr(a + 1, b - a - 1), raw.substr(b + 1)};
}

// limit/continue as the API server serves them: pages in key order, every
// page at the first page's resourceVersion, and a token older than the
// retained history is 410 Expired. (Later pages show the objects' current
// state, not the snapshot's; a watch from the list's resourceVersion replays
// whatever changed, so a client ends up consistent either way.)
std::optional<ApiReply> Paginate(const Store& store, const Target& t, ListOutcome* l,
                                 std::string* next_token) {
  const std::string token = t.Query("continue");
  std::sort(l->items.begin(), l->items.end(), [](const json::value& a, const json::value& b) {
    return std::pair(kube::MetadataString(a, "namespace"), kube::MetadataString(a, "name")) <
           std::pair(kube::MetadataString(b, "namespace"), kube::MetadataString(b, "name"));
  });
  if (!token.empty()) {
    auto point = DecodeContinue(token);
    if (!point) return Fail(400, "BadRequest", "continue key is not valid");
    if (point->rv < store.CompactedResourceVersion()) {
      return Fail(410, "Expired",
                  "The provided continue parameter is too old to display a consistent list "
                  "result. You can start a new list without the continue parameter, or use the "
                  "continue value from the response to get the rest of the results.");
    }
    l->resource_version = point->rv;
    std::erase_if(l->items, [&](const json::value& item) {
      return std::pair(kube::MetadataString(item, "namespace"),
                       kube::MetadataString(item, "name")) <= std::pair(point->ns, point->name);
    });
  }
  const auto limit = kube::ParseDigits(t.Query("limit"));
  if (limit && *limit > 0 && l->items.size() > static_cast<size_t>(*limit)) {
    l->items.resize(static_cast<size_t>(*limit));
    const json::value& last = l->items.back();
    *next_token = EncodeContinue(l->resource_version, kube::MetadataString(last, "namespace"),
                                 kube::MetadataString(last, "name"));
  }
  return std::nullopt;
}

std::optional<ApiReply> ParseBody(const std::string& body, json::value* out) {
  boost::system::error_code ec;
  *out = json::parse(body, ec);
  if (ec) return Fail(400, "BadRequest", "the request body is not valid JSON: " + ec.message());
  return std::nullopt;
}

// A store outcome as the client sees it: the object in the requested version.
ApiReply ReplyWith(const Outcome& o, const Route& r, int ok_status = 200) {
  if (!o.ok()) return Fail(*o.failure);
  return Json(ok_status, Simulator::ToVersion(*r.kind, o.object, r.version));
}

ApiReply GetOne(Simulator& sim, const Route& r, bool table) {
  Outcome o = sim.store().Get(*r.kind, r.ns, r.name);
  if (!table) return ReplyWith(o, r);
  if (!o.ok()) return Fail(*o.failure);
  return Json(200, Table(*r.kind, {Simulator::ToVersion(*r.kind, o.object, r.version)},
                         kube::MetadataString(o.object, "resourceVersion"), sim.clock().Now()));
}

// A stale list the scenario queued replaces the store's answer (filtered the same way).
void ApplyStaleList(Simulator& sim, const Route& r, const Selector& labels, const Selector& fields,
                    ListOutcome& l) {
  auto stale = sim.TakeStaleList(*r.kind);
  if (!stale) return;
  l.items.clear();
  for (auto& item : stale->items) {
    if ((r.ns.empty() || kube::MetadataString(item, "namespace") == r.ns) && labels.Matches(item) &&
        fields.Matches(item)) {
      l.items.push_back(std::move(item));
    }
  }
  l.resource_version = stale->resource_version;
}

ApiReply ListReply(Simulator& sim, const Route& r, ListOutcome& l, const std::string& next_token,
                   bool table) {
  const ResourceKind& kind = *r.kind;
  for (auto& item : l.items) item = Simulator::ToVersion(kind, std::move(item), r.version);
  if (table) {
    json::value tab = Table(kind, l.items, std::to_string(l.resource_version), sim.clock().Now());
    if (!next_token.empty()) tab.as_object()["metadata"].as_object()["continue"] = next_token;
    return Json(200, tab);
  }
  json::array items(l.items.begin(), l.items.end());
  json::object meta{{"resourceVersion", std::to_string(l.resource_version)}};
  if (!next_token.empty()) meta["continue"] = next_token;
  return Json(200, json::object{{"kind", kind.kind + "List"},
                                {"apiVersion", kind.ApiVersion(r.version)},
                                {"metadata", std::move(meta)},
                                {"items", items}});
}

ApiReply ListAll(Simulator& sim, const Target& t, const Route& r, bool table) {
  if (t.Has("sendInitialEvents")) {
    return Fail(422, "Invalid",
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
                "sendInitialEvents is forbidden for list");
  }
  auto labels = Selector::ParseLabels(t.Query("labelSelector"));
  auto fields = Selector::ParseFields(t.Query("fieldSelector"), r.kind);
  if (!labels || !fields)
    return Fail(400, "BadRequest", "unable to parse the label or field selector");
  ListOutcome l = sim.store().List(*r.kind, r.ns, *labels, *fields);
  if (t.Query("continue").empty()) ApplyStaleList(sim, r, *labels, *fields, l);
  std::string next_token;
  if (auto bad = Paginate(sim.store(), t, &l, &next_token)) return *bad;
  return ListReply(sim, r, l, next_token, table);
}

ApiReply CreateOne(Simulator& sim, const ApiRequest& req, const Route& r) {
  if (!r.name.empty() || r.status)
    return Fail(405, "MethodNotAllowed", "POST goes to a collection");
  json::value body;
  if (auto bad = ParseBody(req.body, &body)) return *bad;
  return ReplyWith(sim.store().Create(*r.kind, r.ns,
                                      Simulator::FromVersion(*r.kind, std::move(body), r.version)),
                   r, 201);
}

ApiReply UpdateOne(Simulator& sim, const ApiRequest& req, const Route& r) {
  json::value body;
  if (auto bad = ParseBody(req.body, &body)) return *bad;
  return ReplyWith(
      sim.store().Update(*r.kind, r.ns, r.name,
                         Simulator::FromVersion(*r.kind, std::move(body), r.version), r.status),
      r);
}

ApiReply DeleteOne(Simulator& sim, const ApiRequest& req, const Route& r) {
  std::optional<std::string> pre_rv, pre_uid;
  if (!req.body.empty()) {
    boost::system::error_code ec;
    json::value opts = json::parse(req.body, ec);
    if (!ec && opts.is_object()) {
      if (auto* p = opts.as_object().if_contains("preconditions"); p && p->is_object()) {
        if (auto* v = p->as_object().if_contains("resourceVersion"); v && v->is_string())
          pre_rv = std::string(v->as_string());
        if (auto* v = p->as_object().if_contains("uid"); v && v->is_string())
          pre_uid = std::string(v->as_string());
      }
    }
  }
  const ResourceKind& kind = *r.kind;
  Outcome o = sim.store().Delete(kind, r.ns, r.name, pre_rv, pre_uid);
  if (!o.ok() || !kind.custom) return ReplyWith(o, r);
  return Json(200, json::object{{"kind", "Status"},
                                {"apiVersion", "v1"},
                                {"metadata", json::object{}},
                                {"status", "Success"},
                                {"details",
                                 {{"name", r.name},
                                  {"group", kind.group},
                                  {"kind", kind.plural},
                                  {"uid", o.object.at("metadata").at("uid")}}}});
}

// The patch media type this server takes for `kind`, or "" (415).
std::string PatchType(const std::string& content_type, const ResourceKind& kind) {
  std::string type = content_type.substr(0, content_type.find(';'));
  // Simplification: apply is a merge patch of the body, without
  // managedFields; the body must be JSON.
  if (type == "application/apply-patch+yaml") return type;
  if (type == "application/strategic-merge-patch+json")
    return kind.custom ? "" : type;  // CRDs do not support strategic merge
  if (type == "application/merge-patch+json" || type == "application/json-patch+json") return type;
  return "";
}

ApiReply PatchOne(Simulator& sim, const ApiRequest& req, const Target& t, const Route& r) {
  const std::string type = PatchType(req.content_type, *r.kind);
  if (type == "application/apply-patch+yaml" && t.Query("fieldManager").empty()) {
    return Fail(422, "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                "required for apply patch");
  }
  if (type.empty()) {
    return Fail(415, "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, "
                "application/apply-patch+yaml");
  }
  json::value patch;
  if (auto bad = ParseBody(req.body, &patch)) return *bad;
  const bool json_patch = type == "application/json-patch+json";
  if (!json_patch && !patch.is_object())
    return Fail(400, "BadRequest", "a merge patch must be a JSON object");
  const ResourceKind& kind = *r.kind;
  auto apply = [&](json::value& obj) -> std::optional<ApiFailure> {
    json::value view = Simulator::ToVersion(kind, obj, r.version);
    if (json_patch) {
      if (const auto err = ApplyJsonPatch(view, patch))
        return ApiFailure{err->http_status, err->http_status == 422 ? "Invalid" : "BadRequest",
                          err->message, r.name, &kind};
    } else {
      view = MergePatch(std::move(view), patch);
    }
    obj = Simulator::FromVersion(kind, std::move(view), r.version);
    return std::nullopt;
  };
  return ReplyWith(sim.store().Mutate(kind, r.ns, r.name, apply, r.status), r);
}

// A list as a PartialObjectMetadataList (`Accept:
// application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`): each item
// only its metadata, the list's metadata (continue included) as it was.
ApiReply MetadataOnly(ApiReply list) {
  if (list.status != 200) return list;
  json::value v = json::parse(list.body);
  json::object& o = v.as_object();
  for (json::value& item : o["items"].as_array()) {
    json::value meta = item.as_object()["metadata"];
    item = json::object{{"apiVersion", "meta.k8s.io/v1"},
                        {"kind", "PartialObjectMetadata"},
                        {"metadata", std::move(meta)}};
  }
  o["apiVersion"] = "meta.k8s.io/v1";
  o["kind"] = "PartialObjectMetadataList";
  return Json(200, v);
}

bool WantsMetadataList(std::string_view accept) {
  return accept.find("as=PartialObjectMetadataList") != std::string_view::npos &&
         accept.find("g=meta.k8s.io") != std::string_view::npos;
}

ApiReply Resource(Simulator& sim, const ApiRequest& req, const Target& t, const Route& r,
                  const std::string& verb) {
  const bool table = WantsTable(req.accept) && HasPrinterColumns(*r.kind);
  if (verb == "get") return GetOne(sim, r, table);
  if (verb == "list" && WantsMetadataList(req.accept))
    return MetadataOnly(ListAll(sim, t, r, false));
  if (verb == "list") return ListAll(sim, t, r, table);
  if (verb == "create") return CreateOne(sim, req, r);
  if (verb == "update") return UpdateOne(sim, req, r);
  if (verb == "delete") return DeleteOne(sim, req, r);
  if (verb == "patch") return PatchOne(sim, req, t, r);
  return Fail(405, "MethodNotAllowed",
              "the server does not allow this method on the requested resource");
}

// Everything after authentication and latency. `serve_watches`: whether the
// caller streams watches (then they come back as a WatchCall).
std::variant<ApiReply, WatchCall> Answer(Simulator& sim, const ApiRequest& req,
                                         const std::string& address, bool serve_watches) {
  Target t = ParseTarget(req.target);
  bool handled = false;
  ApiReply control = Control(sim, req, t, &handled);
  if (handled) return control;

  std::optional<Route> route = ResolveRoute(sim, t.segments);
  if (!route) {
    ApiReply d = Discovery(sim, t, address, &handled);
    if (!handled) d = Fail(404, "NotFound", "the server could not find the requested resource");
    return d;
  }
  const std::string verb = VerbFor(req.method, *route, t);
  if (verb == "watch" && !serve_watches) {
    return Fail(400, "BadRequest",
                "watch is not served in-process: watches stream, only sim::Server serves them");
  }
  sim.CountRequest(verb, route->kind->plural, route->name);
  if (auto fault = sim.TakeFault(verb, route->kind->plural)) return FaultResponse(*fault);
  if (verb == "watch") return WatchCall{std::move(t), std::move(*route)};
  return Resource(sim, req, t, *route, verb);
}

}  // namespace

ApiReply HandleRequest(Simulator& sim, const ApiRequest& request,
                       const std::string& server_address) {
  return std::get<ApiReply>(Answer(sim, request, server_address, false));
}

std::variant<ApiReply, WatchCall> Dispatch(Simulator& sim, const ApiRequest& request,
                                           const std::string& server_address) {
  return Answer(sim, request, server_address, true);
}

ApiReply FailureReply(int code, const std::string& reason, const std::string& message) {
  return Fail(code, reason, message);
}

}  // namespace fk::sim
