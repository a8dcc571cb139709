// A pod's labels as the caches keep them: immutable and interned, so equal
// sets share one copy (the workload pod's labels and its sandbox's template
// labels are usually the same set; a template's user labels are the same
// for many sandboxes). A handle is 8 bytes; an empty set costs nothing.
//
// A value equal to the name of the object the labels are on (its owner) is
// kept as a reference to that name, not as text: every workload pod carries
// its own sandbox's id (openshell.ai/boundary-pair, openshell.ai/sandbox-id),
// which is usually the pod's name, so without this no two pods' sets were
// equal and each paid a copy (about 150 bytes a sandbox at 10,000). With it
// they are one copy. A set is read with the same owner it was made with; the
// owner's name is in the cache's key, so nothing is lost: every label is
// given back exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fk {

class LabelSet {
 public:
  using Items = std::vector<std::pair<std::string, std::string>>;

  LabelSet() = default;
  // The set of `items`; a repeated key keeps its last value. `owner`: the
  // name of the object that carries them ("" = none): values equal to it are
  // kept as references to it.
  static LabelSet Of(Items items, std::string_view owner);
  LabelSet(const LabelSet& other);
  LabelSet(LabelSet&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  LabelSet& operator=(const LabelSet& other);
  LabelSet& operator=(LabelSet&& other) noexcept;
  ~LabelSet();

  // Read with the owner the set was made with.
  std::optional<std::string> Get(std::string_view key, std::string_view owner) const;
  Items items(std::string_view owner) const;
  bool empty() const { return rep_ == nullptr; }
  // Equal sets are one interned copy, so equality is identity.
  bool operator==(const LabelSet& other) const { return rep_ == other.rep_; }

  // How many distinct sets are alive (tests, memory accounting).
  static size_t InternedCount();

  struct Rep;

 private:
  explicit LabelSet(Rep* rep) : rep_(rep) {}
  Rep* rep_ = nullptr;
};

}  // namespace fk
