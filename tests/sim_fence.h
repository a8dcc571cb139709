// The effective fence and spares read straight off the server's JSON, for
// the simulation's invariants (tests/simulation_test.cc): which other
// NetworkPolicies select a workload and widen what it may reach
// (docs/design.md#the-effective-fence), and which sandboxes are spares
// (unassigned warm-pool pairs, row 1b). Written apart from
// domain/effective_fence.*, kube/network_policy.* and kube/objects.*, so a bug
// there is not shared by the check that is to catch it. Only what the
// simulation's actors write needs to be read exactly; anything else reads as
// what fails closed (a selector that cannot be read selects).
#pragma once

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fk::simulation::oracle {
namespace json = boost::json;

using Labels = std::map<std::string, std::string>;

// The member `key` of `v` when `v` is an object that has it.
inline const json::value* Get(const json::value* v, const char* key) {
  return v && v->is_object() ? v->as_object().if_contains(key) : nullptr;
}
inline const json::object* Field(const json::value* v, const char* key) {
  const json::value* f = Get(v, key);
  return f && f->is_object() ? &f->as_object() : nullptr;
}
inline const json::array* ArrayField(const json::value* v, const char* key) {
  const json::value* f = Get(v, key);
  return f && f->is_array() ? &f->as_array() : nullptr;
}
inline std::optional<std::string> StringOf(const json::value* v, const char* key) {
  const json::value* f = Get(v, key);
  if (!f || !f->is_string()) return std::nullopt;
  return std::string(f->as_string());
}

inline Labels LabelsOf(const json::value* labels) {
  Labels out;
  if (!labels || !labels->is_object()) return out;
  for (const auto& [k, v] : labels->as_object())
    if (v.is_string()) out[std::string(k)] = std::string(v.as_string());
  return out;
}

// A pod's metadata.labels.
inline Labels PodLabels(const json::value& pod) {
  return LabelsOf(Get(Get(&pod, "metadata"), "labels"));
}

// What a sandbox's workload pod will carry while it has none: the template's
// labels and openshell.ai/boundary-role=workload, which OpenShell forces.
inline Labels TemplateLabels(const json::value& sandbox) {
  Labels out = LabelsOf(Get(Get(Get(Get(&sandbox, "spec"), "podTemplate"), "metadata"), "labels"));
  out["openshell.ai/boundary-role"] = "workload";
  return out;
}

// metav1.LabelSelector over a label map: matchLabels all equal, and every
// matchExpression (In: present with a listed value; NotIn: absent or not a
// listed value; Exists; DoesNotExist). An empty selector selects every pod.
inline bool Selects(const json::value* selector, const Labels& labels) {
  if (!selector || selector->is_null()) return true;
  if (!selector->is_object()) return true;  // unreadable: fail closed
  if (const json::object* match = Field(selector, "matchLabels")) {
    for (const auto& [k, v] : *match) {
      auto it = labels.find(std::string(k));
      if (!v.is_string() || it == labels.end() || it->second != v.as_string()) return false;
    }
  }
  if (const json::array* exprs = ArrayField(selector, "matchExpressions")) {
    for (const json::value& e : *exprs) {
      const auto key = StringOf(&e, "key");
      const auto op = StringOf(&e, "operator");
      if (!key || !op) return true;  // unreadable: fail closed
      std::vector<std::string> values;
      if (const json::array* vs = ArrayField(&e, "values"))
        for (const json::value& v : *vs)
          if (v.is_string()) values.emplace_back(v.as_string());
      auto it = labels.find(*key);
      const bool listed =
          it != labels.end() && std::find(values.begin(), values.end(), it->second) != values.end();
      if (*op == "In" && !listed) return false;
      if (*op == "NotIn" && listed) return false;
      if (*op == "Exists" && it == labels.end()) return false;
      if (*op == "DoesNotExist" && it != labels.end()) return false;
      if (*op != "In" && *op != "NotIn" && *op != "Exists" && *op != "DoesNotExist") return true;
    }
  }
  return true;
}

// The workload fence's own ingress rule: from pods labelled
// openshell.ai/boundary-role=supervisor, TCP (or no protocol) on `port`.
inline bool IsFencesOwnRule(const json::value& rule, int port) {
  if (!rule.is_object() || rule.as_object().size() != 2) return false;
  const json::array* from = ArrayField(&rule, "from");
  const json::array* ports = ArrayField(&rule, "ports");
  if (!from || !ports || from->size() != 1 || ports->size() != 1) return false;
  const json::value supervisors = json::object{
      {"podSelector", {{"matchLabels", {{"openshell.ai/boundary-role", "supervisor"}}}}}};
  if ((*from)[0] != supervisors) return false;
  const json::value& p = (*ports)[0];
  if (!p.is_object()) return false;
  const json::value* number = p.as_object().if_contains("port");
  const auto protocol = StringOf(&p, "protocol");
  const size_t keys = p.as_object().size();
  return number && number->is_int64() && number->as_int64() == port &&
         (protocol ? *protocol == "TCP" && keys == 2 : keys == 1);
}

struct Widening {
  bool egress = false;
  bool ingress = false;
};

// What a policy opens beyond the fence: egress when it isolates egress and
// has an egress rule; ingress when it isolates ingress and has a rule other
// than the fence's own. An absent or empty policyTypes is Ingress, plus
// Egress when there are egress rules.
inline Widening WidensOf(const json::value& policy, int port) {
  const json::value* spec = Get(&policy, "spec");
  const json::array* egress = ArrayField(spec, "egress");
  const json::array* ingress = ArrayField(spec, "ingress");
  const json::array* types = ArrayField(spec, "policyTypes");
  bool isolates_ingress = false, isolates_egress = false;
  if (types && !types->empty()) {
    for (const json::value& t : *types) {
      isolates_ingress |= t == "Ingress";
      isolates_egress |= t == "Egress";
    }
  } else {
    isolates_ingress = true;
    isolates_egress = egress && !egress->empty();
  }
  Widening w;
  w.egress = isolates_egress && egress && !egress->empty();
  if (isolates_ingress && ingress) {
    w.ingress = std::any_of(ingress->begin(), ingress->end(),
                            [&](const json::value& rule) { return !IsFencesOwnRule(rule, port); });
  }
  return w;
}

// One policy, other than the workload fence, that selects a workload and
// widens what it may reach.
struct Bypass {
  std::string name, uid;
  int64_t generation = 0;
  Widening widens;
};

// The bypasses among `list` (a NetworkPolicyList) of a workload labelled
// `labels`, sorted by name.
inline std::vector<Bypass> Bypasses(const json::value& list, const Labels& labels, int port) {
  std::vector<Bypass> out;
  const json::array* items = ArrayField(&list, "items");
  if (!items) return out;
  for (const json::value& p : *items) {
    const json::value* meta = Get(&p, "metadata");
    const std::string name = StringOf(meta, "name").value_or("");
    if (name == "openshell-sandbox-workloads") continue;
    if (!Selects(Get(Get(&p, "spec"), "podSelector"), labels)) continue;
    const Widening w = WidensOf(p, port);
    if (!w.egress && !w.ingress) continue;
    const json::value* gen = Get(meta, "generation");
    out.push_back({name, StringOf(meta, "uid").value_or(""),
                   gen && gen->is_int64() ? gen->as_int64() : 0, w});
  }
  std::sort(out.begin(), out.end(),
            [](const Bypass& a, const Bypass& b) { return a.name < b.name; });
  return out;
}

// An unassigned warm-pool pair (reference B.3): labelled
// openshell.ai/warm-pool, and its sandbox id (the annotation when present,
// even empty, else the label) absent or empty.
inline bool IsSpare(const json::value& sandbox) {
  const json::value* meta = Get(&sandbox, "metadata");
  const json::value* labels = Get(meta, "labels");
  if (!Get(labels, "openshell.ai/warm-pool")) return false;
  const json::value* annotations = Get(meta, "annotations");
  std::optional<std::string> id = Get(annotations, "openshell.ai/sandbox-id")
                                      ? StringOf(annotations, "openshell.ai/sandbox-id")
                                      : StringOf(labels, "openshell.ai/sandbox-id");
  return !id || id->empty();
}

}  // namespace fk::simulation::oracle
