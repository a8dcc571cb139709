#include "kube/network_policy.h"

#include <algorithm>
#include <boost/json.hpp>
#include <string>
#include <vector>

#include "kube/json.h"
#include "kube/json_fields.h"

namespace fk::kube {
namespace json = boost::json;
using domain::LabelRequirement;

namespace {

// A policy spec nested deeper than this is not ours (the intended one is 7
// levels deep), and Normalize below recurses: deeper means not intact.
constexpr int kMaxPolicySpecDepth = 32;

// Normalization for comparing policy specs: an empty list or a null equals an
// absent field (the API server and kubectl drop or keep them freely), a port
// without a protocol is TCP (the server's default), and policyTypes is a set.
json::value Normalize(const json::value& v, std::string_view key = {}) {
  if (v.is_object()) {
    json::object out;
    for (const auto& [k, child] : v.get_object()) {
      if (child.is_null() || (child.is_array() && child.get_array().empty())) continue;
      out[k] = Normalize(child, k);
    }
    if (key == "ports" || out.contains("port")) {
      if (!out.contains("protocol")) out["protocol"] = "TCP";
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const auto& child : v.get_array()) out.push_back(Normalize(child, key));
    if (key == "policyTypes") {
      std::vector<std::string> types;
      for (const auto& t : out)
        types.push_back(t.is_string() ? std::string(t.get_string()) : json::serialize(t));
      std::sort(types.begin(), types.end());
      out.clear();
      for (auto& t : types) out.push_back(json::string(t));
    }
    return out;
  }
  if (v.is_uint64() && v.get_uint64() <= INT64_MAX) return static_cast<int64_t>(v.get_uint64());
  return v;
}

json::object RoleSelector(const char* role) {
  return json::object{{"matchLabels", {{"openshell.ai/boundary-role", role}}}};
}

// The workload fence's one ingress rule: from supervisor pods of the
// namespace, on TCP to the boundary port.
json::object FenceIngressRule(int boundary_port) {
  return json::object{
      {"from", json::array{json::object{{"podSelector", RoleSelector("supervisor")}}}},
      {"ports", json::array{json::object{{"protocol", "TCP"}, {"port", boundary_port}}}}};
}

json::value IntendedSpec(PolicyRole role, int boundary_port) {
  if (role == PolicyRole::kWorkload) {
    return json::object{{"podSelector", RoleSelector("workload")},
                        {"policyTypes", json::array{"Ingress", "Egress"}},
                        {"ingress", json::array{FenceIngressRule(boundary_port)}},
                        {"egress", json::array{}}};
  }
  return json::object{{"podSelector", RoleSelector("supervisor")},
                      {"policyTypes", json::array{"Egress"}},
                      {"egress", json::array{json::object{}}}};
}

std::optional<domain::PolicyTypes> ListedTypes(const json::value* types) {
  if (!types || !types->is_array() || types->get_array().empty()) return std::nullopt;
  domain::PolicyTypes out;
  for (const json::value& t : types->get_array()) {
    if (t == "Ingress") out.ingress = true;
    if (t == "Egress") out.egress = true;
  }
  return out;
}

// A rule list: absent, null or empty has no rules; anything but a list is
// taken to have one (fail closed).
bool HasRules(const json::value* rules) {
  if (!rules || rules->is_null()) return false;
  return !rules->is_array() || !rules->get_array().empty();
}

bool HasForeignIngressRule(const json::value* ingress, int boundary_port) {
  if (!HasRules(ingress)) return false;
  if (!ingress->is_array()) return true;
  const json::value own = Normalize(FenceIngressRule(boundary_port));
  return std::any_of(ingress->get_array().begin(), ingress->get_array().end(),
                     [&](const json::value& rule) {
                       return DeeperThan(rule, kMaxPolicySpecDepth) || Normalize(rule) != own;
                     });
}

std::optional<LabelRequirement> ReadExpression(const json::value& e) {
  const json::object* o = e.is_object() ? &e.get_object() : nullptr;
  const auto key = StringField(o, "key");
  const auto op = StringField(o, "operator");
  if (!key || key->empty() || !op) return std::nullopt;
  LabelRequirement r{*key, LabelRequirement::Op::kExists, {}};
  if (const json::value* values = o->if_contains("values"); values && !values->is_null()) {
    if (!values->is_array()) return std::nullopt;
    for (const json::value& v : values->get_array()) {
      if (!v.is_string()) return std::nullopt;
      r.values.emplace_back(v.get_string());
    }
  }
  using Op = LabelRequirement::Op;
  const bool needs_values = *op == "In" || *op == "NotIn";
  if (*op == "In")
    r.op = Op::kIn;
  else if (*op == "NotIn")
    r.op = Op::kNotIn;
  else if (*op == "Exists")
    r.op = Op::kExists;
  else if (*op == "DoesNotExist")
    r.op = Op::kNotExists;
  else
    return std::nullopt;  // the API server accepts no other operator
  if (needs_values == r.values.empty()) return std::nullopt;
  return r;
}

}  // namespace

bool SpecIntact(const json::value& spec, PolicyRole role, int boundary_port) {
  return !DeeperThan(spec, kMaxPolicySpecDepth) &&
         Normalize(spec) == Normalize(IntendedSpec(role, boundary_port));
}

std::optional<domain::LabelSelector> ReadLabelSelector(const json::object& selector) {
  domain::LabelSelector out;
  if (const json::value* labels = selector.if_contains("matchLabels");
      labels && !labels->is_null()) {
    if (!labels->is_object()) return std::nullopt;
    for (const auto& [k, v] : labels->get_object()) {
      if (!v.is_string()) return std::nullopt;
      out.requirements.push_back(
          {std::string(k), LabelRequirement::Op::kEquals, {std::string(v.get_string())}});
    }
  }
  if (const json::value* exprs = selector.if_contains("matchExpressions");
      exprs && !exprs->is_null()) {
    if (!exprs->is_array()) return std::nullopt;
    for (const json::value& e : exprs->get_array()) {
      auto r = ReadExpression(e);
      if (!r) return std::nullopt;
      out.requirements.push_back(std::move(*r));
    }
  }
  return out;
}

domain::NetworkPolicyRules ReadPolicyRules(const json::value* spec, int boundary_port) {
  domain::NetworkPolicyRules r;
  const json::object* s = spec && spec->is_object() ? &spec->get_object() : nullptr;
  if (!s) return r;  // selects every pod, allows nothing
  if (const json::value* sel = s->if_contains("podSelector"); sel && !sel->is_null()) {
    auto parsed = sel->is_object() ? ReadLabelSelector(sel->get_object()) : std::nullopt;
    r.selector_readable = parsed.has_value();
    if (parsed) r.pod_selector = std::move(*parsed);
  }
  const json::value* egress = s->if_contains("egress");
  r.has_egress_rule = HasRules(egress);
  r.types =
      domain::DefaultedPolicyTypes(ListedTypes(s->if_contains("policyTypes")), r.has_egress_rule);
  r.has_foreign_ingress_rule = HasForeignIngressRule(s->if_contains("ingress"), boundary_port);
  return r;
}

}  // namespace fk::kube
