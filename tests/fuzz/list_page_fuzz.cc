// kube::DecodeListPage: one page of a list. A page that decodes keeps every
// item it can and accounts for every other one: items + bad items equal the
// elements the scanner finds, every kept item has a name, and one bad item
// never costs the page.
#include "fuzz_support.h"
#include "kube/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = fk::fuzz::AsText(data, size);
  auto page = fk::kube::DecodeListPage(body);
  if (!page.ok()) return 0;
  auto layout = fk::kube::ScanListItems(body);
  FUZZ_CHECK(layout.has_value());
  FUZZ_CHECK(page->items.size() + page->bad_items.size() == layout->items.size());
  for (const auto& item : page->items) {
    FUZZ_CHECK(!item.name.empty());
    FUZZ_CHECK(item.object != nullptr);
  }
  for (const auto& bad : page->bad_items) FUZZ_CHECK(!bad.reason.empty());
  return 0;
}
