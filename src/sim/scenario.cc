// Scenario files: YAML read into sim::Scenario (sim/scenario.h). What a
// scenario becomes in the simulator is scenario_apply.cc's job.
#include "sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <boost/json.hpp>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/duration.h"
#include "sim/builtin_scenarios.h"
#include "sim/scenario_objects.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

json::value ScalarToJson(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return json::value(s);  // quoted: always a string
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return i;
  if (s.find_first_not_of("0123456789.-+eE") == std::string::npos) {
    try {
      size_t used = 0;
      double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (...) {
    }
  }
  return json::value(s);
}

// Aliases make a YAML document a graph: an alias inside its own anchor is a
// cycle, and aliases of aliases expand exponentially ("billion laughs").
// Converting it to a JSON tree is bounded so that such a file is an error,
// not a stack overflow or a hang (both found by fuzzing). yaml-cpp itself
// refuses documents nested deeper than 2,000 levels without aliases.
constexpr int kMaxDepth = 2000;
constexpr size_t kMaxNodes = 1'000'000;
constexpr int kMaxFenceGeneration = 1000;  // a scenario applies one policy edit per generation

constexpr int kMaxGenerated = 1'000'000;

// "sb-" 7 -> "sb-00007": names sort in creation order.
std::string GeneratedName(const std::string& prefix, int i) {
  std::string digits = std::to_string(i);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  return prefix + digits;
}

struct Budget {
  size_t nodes = 0;
};

json::value NodeToJson(const YAML::Node& n, Budget& budget, int depth = 0) {
  if (depth > kMaxDepth) {
    throw YAML::Exception(n.Mark(),
                          "nested deeper than 2000 levels (an alias inside its own anchor?)");
  }
  if (++budget.nodes > kMaxNodes) {
    throw YAML::Exception(n.Mark(), "expands to more than 1000000 nodes (aliases of aliases?)");
  }
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json::object o;
      for (const auto& kv : n)
        o[kv.first.as<std::string>()] = NodeToJson(kv.second, budget, depth + 1);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json::array a;
      for (const auto& item : n) a.push_back(NodeToJson(item, budget, depth + 1));
      return a;
    }
    case YAML::NodeType::Scalar:
      return ScalarToJson(n);
    default:
      return nullptr;
  }
}

class Reader {
 public:
  Reader(std::string source) : source_(std::move(source)) {}
  Status Error(const std::string& where, const std::string& what) const {
    return Status::InvalidArgument("scenario " + source_ + ": " + where + ": " + what);
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

}  // namespace

Result<json::value> YamlToJson(const std::string& yaml_text) {
  try {
    Budget budget;
    return NodeToJson(YAML::Load(yaml_text), budget);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("invalid YAML: ") + e.what());
  }
}

namespace {

// The parsers below run inside ParseScenario's try: yaml-cpp's conversion
// errors (YAML::Exception) are reported there, with the source name.

Status ParseOptions(const YAML::Node& v, const Reader& r, SimOptions& options) {
  for (const auto& o : v) {
    const std::string ok = o.first.as<std::string>();
    if (ok == "latency" || ok == "bookmarkInterval" || ok == "dropWatchesEvery" ||
        ok == "expireHistoryEvery" || ok == "openshellFlowStep") {
      auto d = ParseDuration(o.second.as<std::string>());
      if (!d) return r.Error("options." + ok, "not a duration like 250ms or 2s");
      (ok == "latency"             ? options.latency
       : ok == "bookmarkInterval"  ? options.bookmark_interval
       : ok == "dropWatchesEvery"  ? options.drop_watches_every
       : ok == "openshellFlowStep" ? options.openshell_flow_step
                                   : options.expire_history_every) = *d;
    } else if (ok == "dropWatchAfterEvents") {
      options.drop_watch_after_events = o.second.as<int>();
    } else if (ok == "historyLimit") {
      options.history_limit = o.second.as<size_t>();
    } else if (ok == "emulateAgentSandbox") {
      options.emulate_agent_sandbox = o.second.as<bool>();
    } else {
      return r.Error("options", "unknown option '" + ok + "'");
    }
  }
  return Status::Ok();
}

Status ParseFault(const YAML::Node& f, const Reader& r, FaultRule& rule) {
  for (const auto& fk : f) {
    const std::string k = fk.first.as<std::string>();
    if (k == "verb")
      rule.verb = fk.second.as<std::string>();
    else if (k == "resource")
      rule.resource = fk.second.as<std::string>();
    else if (k == "status")
      rule.status = fk.second.as<int>();
    else if (k == "retryAfterSeconds")
      rule.retry_after_seconds = fk.second.as<int>();
    else if (k == "plainText")
      rule.plain_text = fk.second.as<bool>();
    else if (k == "count")
      rule.count = fk.second.as<int>();
    else
      return r.Error("faults", "unknown field '" + k + "'");
  }
  return Status::Ok();
}

Status ParseFaults(const YAML::Node& v, const Reader& r, std::vector<FaultRule>& faults) {
  if (!v.IsSequence()) return r.Error("faults", "must be a list");
  for (const auto& f : v) {
    FaultRule rule;
    if (Status s = ParseFault(f, r, rule); !s.ok()) return s;
    faults.push_back(rule);
  }
  return Status::Ok();
}

Status ParseFence(const YAML::Node& f, const Reader& r, ScenarioNamespace& ns) {
  if (f.IsScalar()) {
    ns.fence = f.as<bool>();
  } else {
    if (f["boundaryPort"]) ns.boundary_port = f["boundaryPort"].as<int>();
    if (f["generation"]) ns.fence_generation = f["generation"].as<int>();
  }
  // Each generation past 1 is one policy edit when the scenario is
  // applied, and the altered spec uses boundaryPort + 1.
  if (ns.boundary_port < 1 || ns.boundary_port > 65535)
    return r.Error("namespaces." + ns.name, "fence.boundaryPort must be a port, 1 to 65535");
  if (ns.fence_generation < 1 || ns.fence_generation > kMaxFenceGeneration)
    return r.Error("namespaces." + ns.name, "fence.generation must be 1 to 1000");
  return Status::Ok();
}

// `warmPair`: a pair id, or true for one derived from the name (false: none).
Status ParseWarmPair(const YAML::Node& v, const Reader& r, const std::string& where,
                     ScenarioSandbox& sb) {
  if (bool flag = false; YAML::convert<bool>::decode(v, flag)) {
    sb.warm_pair_id = flag ? DerivedWarmPairId(sb.name) : "";
    return Status::Ok();
  }
  sb.warm_pair_id = v.as<std::string>();
  if (!IsWarmPairId(sb.warm_pair_id))
    return r.Error(where, "warmPair must be 24 lowercase hex digits (a pair id) or true");
  return Status::Ok();
}

// One field of a `sandboxes` entry other than its name. An unknown one is an
// error: a misspelt warmPair or spare would quietly make another sandbox.
Status ParseSandboxField(const std::string& k, const YAML::Node& v, const Reader& r,
                         const std::string& where, ScenarioSandbox& sb) {
  if (k == "mode") {
    const std::string mode = v.as<std::string>();
    if (mode != "Running" && mode != "Suspended")
      return r.Error(where, "mode must be Running or Suspended");
    sb.running = mode == "Running";
  } else if (k == "admittedFenceGeneration") {
    sb.admitted_fence_generation = v.as<int64_t>();
  } else if (k == "pods") {
    sb.pods = v.as<bool>();
  } else if (k == "sandboxId") {
    sb.sandbox_id = v.as<std::string>();
  } else if (k == "podLabels") {
    if (!v.IsMap()) return r.Error(where, "podLabels must be a mapping of labels");
    for (const auto& l : v) sb.pod_labels[l.first.as<std::string>()] = l.second.as<std::string>();
  } else if (k == "warmPair") {
    return ParseWarmPair(v, r, where, sb);
  } else if (k == "spare") {
    sb.spare = v.as<bool>();
  } else if (k == "warmPool") {
    sb.warm_pool = v.as<std::string>();
  } else if (k != "name") {
    return r.Error(where, "unknown field '" + k + "'");
  }
  return Status::Ok();
}

Status ParseSandbox(const YAML::Node& s, const Reader& r, ScenarioNamespace& ns) {
  ScenarioSandbox sb;
  if (!s.IsMap() || !s["name"])
    return r.Error("namespaces." + ns.name, "every sandbox needs a name");
  sb.name = s["name"].as<std::string>();
  const std::string where = ns.name + "/" + sb.name;
  for (const auto& f : s) {
    if (Status st = ParseSandboxField(f.first.as<std::string>(), f.second, r, where, sb); !st.ok())
      return st;
  }
  const bool pair = !sb.warm_pair_id.empty();
  if ((sb.spare || s["warmPool"]) && !pair)
    return r.Error(where, "spare and warmPool are for warm-pool pairs (warmPair)");
  if (sb.spare && s["sandboxId"])
    return r.Error(where, "a spare has no sandboxId: it is unassigned");
  if (sb.spare && !sb.running)
    return r.Error(where, "a spare is Running: OpenShell retires spares, it never suspends them");
  ns.sandboxes.push_back(std::move(sb));
  return Status::Ok();
}

// `networkPolicies`: each entry's name and spec make a NetworkPolicy of the namespace.
Status ParseNetworkPolicies(const YAML::Node& v, const Reader& r, ScenarioNamespace& ns) {
  const std::string where = "namespaces." + ns.name + ".networkPolicies";
  if (!v.IsSequence()) return r.Error(where, "must be a list");
  Budget budget;
  for (const auto& p : v) {
    if (!p.IsMap() || !p["name"]) return r.Error(where, "every policy needs a name");
    for (const auto& f : p) {
      const std::string k = f.first.as<std::string>();
      if (k != "name" && k != "spec") return r.Error(where, "unknown field '" + k + "'");
    }
    json::value spec = p["spec"] ? NodeToJson(p["spec"], budget) : json::object{};
    if (!spec.is_object()) return r.Error(where, "a policy's spec must be a mapping");
    ns.network_policies.push_back(NetworkPolicyObject(ns.name, p["name"].as<std::string>(), spec));
  }
  return Status::Ok();
}

Status ParseNamespace(const YAML::Node& n, const Reader& r, ScenarioNamespace& ns) {
  if (!n["name"]) return r.Error("namespaces", "every namespace needs a name");
  ns.name = n["name"].as<std::string>();
  if (n["fence"]) {
    if (Status s = ParseFence(n["fence"], r, ns); !s.ok()) return s;
  }
  if (n["podBytes"]) ns.pod_bytes = n["podBytes"].as<size_t>();
  if (const YAML::Node& g = n["generate"]) {
    const int count = g["count"] ? g["count"].as<int>() : 0;
    if (count < 0 || count > kMaxGenerated)
      return r.Error("namespaces." + ns.name, "generate.count must be 0 to 1000000");
    const std::string prefix = g["prefix"] ? g["prefix"].as<std::string>() : "sb-";
    for (int i = 0; i < count; ++i) {
      ScenarioSandbox sb;
      sb.name = GeneratedName(prefix, i);
      ns.sandboxes.push_back(sb);
    }
  }
  for (const auto& s : n["sandboxes"]) {
    if (Status st = ParseSandbox(s, r, ns); !st.ok()) return st;
  }
  if (n["networkPolicies"]) return ParseNetworkPolicies(n["networkPolicies"], r, ns);
  return Status::Ok();
}

Status ParseTopLevelKey(const std::string& key, const YAML::Node& v, const Reader& r,
                        Scenario& sc) {
  if (key == "options") return ParseOptions(v, r, sc.options);
  if (key == "faults") return ParseFaults(v, r, sc.faults);
  if (key == "namespaces") {
    if (!v.IsSequence()) return r.Error("namespaces", "must be a list");
    for (const auto& n : v) {
      ScenarioNamespace ns;
      if (Status s = ParseNamespace(n, r, ns); !s.ok()) return s;
      sc.namespaces.push_back(std::move(ns));
    }
    return Status::Ok();
  }
  if (key == "objects") {
    if (!v.IsSequence()) return r.Error("objects", "must be a list");
    Budget budget;
    for (const auto& o : v) sc.objects.push_back(NodeToJson(o, budget));
    return Status::Ok();
  }
  return r.Error("top level", "unknown key '" + key + "'");
}

}  // namespace

ScenarioNamespace::ScenarioNamespace() = default;
ScenarioNamespace::~ScenarioNamespace() = default;
ScenarioNamespace::ScenarioNamespace(const ScenarioNamespace&) = default;
ScenarioNamespace::ScenarioNamespace(ScenarioNamespace&&) noexcept = default;
ScenarioNamespace& ScenarioNamespace::operator=(const ScenarioNamespace&) = default;
ScenarioNamespace& ScenarioNamespace::operator=(ScenarioNamespace&&) noexcept = default;

Scenario::Scenario() = default;
Scenario::~Scenario() = default;
Scenario::Scenario(const Scenario&) = default;
Scenario::Scenario(Scenario&&) noexcept = default;
Scenario& Scenario::operator=(const Scenario&) = default;
Scenario& Scenario::operator=(Scenario&&) noexcept = default;

Result<Scenario> ParseScenario(const std::string& yaml_text, const std::string& source_name) {
  Reader r(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return r.Error("YAML", e.what());
  }
  Scenario sc;
  if (!root || root.IsNull()) return sc;
  if (!root.IsMap()) return r.Error("top level", "must be a mapping");
  try {
    for (const auto& kv : root) {
      if (Status s = ParseTopLevelKey(kv.first.as<std::string>(), kv.second, r, sc); !s.ok())
        return s;
    }
  } catch (const YAML::Exception& e) {
    return r.Error("YAML", e.what());
  }
  return sc;
}

Result<Scenario> ParseScenarioFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    for (const auto& b : BuiltinScenarios()) {
      if (b.name == path) return ParseScenario(b.yaml, "built-in " + b.name);
    }
  }
  std::ifstream in(path);
  if (!in) {
    std::string names;
    for (const auto& b : BuiltinScenarios()) names += (names.empty() ? "" : ", ") + b.name;
    return Status::NotFound("cannot read scenario file '" + path +
                            "' (built-in scenarios: " + names + ")");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path);
}

}  // namespace fk::sim
