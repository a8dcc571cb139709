// A pod's labels as the caches keep them: immutable and interned, so equal
// sets share one copy (the workload pod's labels and its sandbox's template
// labels are usually the same set; a template's user labels are the same
// for many sandboxes). A handle is 8 bytes; an empty set costs nothing.
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
  // The set of `items`; a repeated key keeps its last value.
  static LabelSet Of(Items items);
  LabelSet(const LabelSet& other);
  LabelSet(LabelSet&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  LabelSet& operator=(const LabelSet& other);
  LabelSet& operator=(LabelSet&& other) noexcept;
  ~LabelSet();

  std::optional<std::string> Get(std::string_view key) const;
  Items items() const;
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
