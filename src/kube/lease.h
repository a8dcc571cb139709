// A coordination.k8s.io/v1 Lease as leader election reads and writes it
// (reconciler/leader.h): typed accessors over the object as the API server
// returned it, so that a PUT sends back every field it came with —
// metadata.resourceVersion included, so of two candidates writing the same
// Lease one wins — changed only where the elector changes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace boost::json {
class value;
}

namespace fk::kube {

class Lease {
 public:
  // A Lease held by `identity` from `now` (RFC 3339 micro time).
  static Lease New(const std::string& ns, const std::string& name, const std::string& identity,
                   const std::string& now, int64_t duration_s);
  // A Lease as read; an error when the body is not a JSON object. A missing
  // or malformed spec reads as an empty one.
  static Result<Lease> Parse(std::string_view body);
  // Moved, never copied: a copy would share (and change) the same object.
  Lease(Lease&&) noexcept = default;
  Lease& operator=(Lease&&) noexcept = default;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  std::string holder() const;  // "" when nobody holds it
  // spec.leaseDurationSeconds, or `fallback` when absent or not an integer.
  int64_t duration_seconds(int64_t fallback) const;
  // The spec as one string: what changed since the last read is a change of it.
  std::string SpecRecord() const;
  // The whole object, to send.
  std::string Body() const;

  // `identity` holds it, renewed `now`; a change of holder is one more
  // transition (and a new acquireTime).
  void Claim(const std::string& identity, const std::string& now, int64_t duration_s);
  // Nobody holds it, and it lapses in a second: the next candidate need not
  // wait out our lease duration.
  void Release(const std::string& now);

 private:
  explicit Lease(std::shared_ptr<boost::json::value> object);
  std::shared_ptr<boost::json::value> object_;  // an object with an object "spec"
};

}  // namespace fk::kube
