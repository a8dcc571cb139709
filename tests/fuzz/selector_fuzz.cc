// sim::Selector: label and field selectors as the simulated API server reads
// them from a query. Neither grammar contains the other: label selectors
// validate keys and values as apimachinery does (a field value such as
// `metadata.namespace=`gents` is not a label value) and have set-based
// terms fields lack. An accepted selector can be matched against any object,
// and an empty one matches everything.
#include <boost/json.hpp>
#include <string>

#include "fuzz_support.h"
#include "sim/selector.h"

namespace {

const boost::json::value& Objects(size_t i) {
  static const boost::json::value kObjects[] = {
      boost::json::parse(R"({"metadata":{"name":"sb-1","namespace":"agents",
          "labels":{"openshell.ai/sandbox-id":"abc","app":"x","":""}}})"),
      boost::json::parse(R"({"metadata":{"name":7,"labels":["not","a","map"]}})"),
      boost::json::parse(R"([1,2,3])"),
  };
  return kObjects[i % 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fk::fuzz::AsText(data, size));
  const auto labels = fk::sim::Selector::ParseLabels(text);
  const auto fields = fk::sim::Selector::ParseFields(text);
  for (size_t i = 0; i < 3; ++i) {
    if (labels) {
      const bool m = labels->Matches(Objects(i));
      FUZZ_CHECK(!labels->empty() || m);  // the empty selector matches everything
    }
    if (fields) {
      const bool m = fields->Matches(Objects(i));
      FUZZ_CHECK(!fields->empty() || m);
    }
  }
  return 0;
}
