#include "kube/lease.h"

#include <boost/json.hpp>

#include "kube/json.h"
#include "kube/json_fields.h"

namespace fk::kube {
namespace json = boost::json;
namespace {

// Parse and New leave an object "spec" in every Lease.
json::object& Spec(json::value& lease) { return lease.as_object()["spec"].as_object(); }

}  // namespace

Lease::Lease(std::shared_ptr<json::value> object) : object_(std::move(object)) {}

Lease Lease::New(const std::string& ns, const std::string& name, const std::string& identity,
                 const std::string& now, int64_t duration_s) {
  return Lease(
      std::make_shared<json::value>(json::object{{"apiVersion", "coordination.k8s.io/v1"},
                                                 {"kind", "Lease"},
                                                 {"metadata", {{"name", name}, {"namespace", ns}}},
                                                 {"spec",
                                                  {{"holderIdentity", identity},
                                                   {"leaseDurationSeconds", duration_s},
                                                   {"acquireTime", now},
                                                   {"renewTime", now},
                                                   {"leaseTransitions", 0}}}}));
}

Result<Lease> Lease::Parse(std::string_view body) {
  auto parsed = ParseJson(body, "Lease");
  if (!parsed.ok()) return parsed.status();
  if (!(*parsed)->is_object()) return Status::InvalidArgument("a Lease is not a JSON object");
  json::value& spec = (*parsed)->as_object()["spec"];
  if (!spec.is_object()) spec = json::object{};
  return Lease(std::move(*parsed));
}

std::string Lease::holder() const {
  return StringField(&Spec(*object_), "holderIdentity").value_or("");
}

int64_t Lease::duration_seconds(int64_t fallback) const {
  const json::value* v = Spec(*object_).if_contains("leaseDurationSeconds");
  return v && v->is_int64() ? v->as_int64() : fallback;
}

std::string Lease::SpecRecord() const { return json::serialize(Spec(*object_)); }

std::string Lease::Body() const { return json::serialize(*object_); }

void Lease::Claim(const std::string& identity, const std::string& now, int64_t duration_s) {
  json::object& spec = Spec(*object_);
  if (holder() != identity) {
    const json::value* t = spec.if_contains("leaseTransitions");
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = (t && t->is_int64() ? t->as_int64() : 0) + 1;
  }
  spec["holderIdentity"] = identity;
  spec["leaseDurationSeconds"] = duration_s;
  spec["renewTime"] = now;
}

void Lease::Release(const std::string& now) {
  json::object& spec = Spec(*object_);
  spec["holderIdentity"] = "";
  spec["leaseDurationSeconds"] = 1;
  spec["renewTime"] = now;
  spec["acquireTime"] = now;
}

}  // namespace fk::kube
