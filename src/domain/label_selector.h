// Label selectors as the API server parses ?labelSelector= (apimachinery's
// labels.Parse): equality-based (a=b, a==b, a!=b), set-based (a in (x,y),
// a notin (x), a, !a) and a>N / a<N, terms joined by commas. Shared by the
// `run --selector` validation and the simulator, so both accept exactly the
// same language.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace fk::domain {

struct LabelRequirement {
  enum class Op { kEquals, kNotEquals, kExists, kNotExists, kIn, kNotIn, kGreater, kLess };
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;
};

struct LabelSelector {
  std::vector<LabelRequirement> requirements;  // all must hold; none: everything matches
  // `value_of(key)`: the object's value for a key, nullopt when it has none.
  bool Matches(const std::function<std::optional<std::string>(const std::string&)>& value_of) const;
};

// `validate`: keys must be qualified names and values label values, as for
// labels; false accepts any token (field selectors name fields, not labels).
// The error says what is wrong and where.
Result<LabelSelector> ParseLabelSelector(std::string_view text, bool validate = true);

}  // namespace fk::domain
