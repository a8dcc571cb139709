// Label and field selectors, as the API server parses them from
// ?labelSelector= and ?fieldSelector=.
#pragma once

#include <boost/json/fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace fk::sim {

class Selector {
 public:
  // Parses "a=b,c!=d,e,!f,g in (x,y),h notin (z)"; nullopt if malformed.
  static std::optional<Selector> ParseLabels(const std::string& text);
  // Parses "metadata.name=x,metadata.namespace=y" (the fields kubectl uses).
  static std::optional<Selector> ParseFields(const std::string& text);

  bool Matches(const boost::json::value& object) const;
  bool empty() const { return requirements_.empty(); }

 private:
  enum class Op { kEquals, kNotEquals, kExists, kNotExists, kIn, kNotIn };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  bool fields_ = false;
  std::vector<Requirement> requirements_;
};

}  // namespace fk::sim
