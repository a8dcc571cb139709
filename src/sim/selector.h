// Label and field selectors, as the API server parses them from
// ?labelSelector= and ?fieldSelector=.
#pragma once

#include <boost/json/fwd.hpp>
#include <optional>
#include <string>

#include "domain/label_selector.h"
#include "sim/resources.h"

namespace fk::sim {

class Selector {
 public:
  // Parses "a=b,c!=d,e,!f,g in (x,y),h notin (z)" as the API server does
  // (domain::ParseLabelSelector); nullopt if malformed.
  static std::optional<Selector> ParseLabels(const std::string& text);
  // Parses "metadata.name=x,metadata.namespace=y" (the fields kubectl uses);
  // for Events (`kind` either Event API) also the fields sim/event_views.h
  // lists, such as involvedObject.uid, as `kubectl describe` sends them.
  static std::optional<Selector> ParseFields(const std::string& text,
                                             const ResourceKind* kind = nullptr);

  bool Matches(const boost::json::value& object) const;
  bool empty() const { return selector_.requirements.empty(); }

 private:
  bool fields_ = false;
  bool event_fields_ = false;
  domain::LabelSelector selector_;
};

}  // namespace fk::sim
