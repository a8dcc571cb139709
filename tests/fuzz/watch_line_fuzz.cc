// A watch stream's framing and decoding: the bytes, cut into chunks where the
// input says, go through kube::LineSplitter (bounded lines) and every line
// through kube::DecodeWatchLine, as the transport and the informer do.
// Chunking never changes the lines; no line exceeds the bound; a decoded
// change (ADDED, MODIFIED, DELETED) with an object has a name; an undecodable one says why.
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "kube/json.h"
#include "kube/line_splitter.h"

namespace {

constexpr size_t kMaxLine = 4096;

std::vector<std::string> Split(std::string_view stream, size_t chunk) {
  std::vector<std::string> lines;
  fk::kube::LineSplitter splitter(kMaxLine, [&](std::string_view line, bool) {
    FUZZ_CHECK(!line.empty() && line.size() <= kMaxLine);
    lines.emplace_back(line);
  });
  for (size_t i = 0; i < stream.size(); i += chunk) splitter.Feed(stream.substr(i, chunk));
  splitter.Finish();
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view stream = fk::fuzz::AsText(data, size);
  uint8_t chunk = 0;
  if (!fk::fuzz::TakeSelector(&stream, &chunk)) return 0;
  const std::vector<std::string> lines = Split(stream, chunk % 64 + 1);
  FUZZ_CHECK(lines == Split(stream, stream.size() + 1));  // one chunk: the same lines
  for (const std::string& line : lines) {
    auto event = fk::kube::DecodeWatchLine(line);
    if (!event.ok()) continue;
    const bool change =
        event->type == "ADDED" || event->type == "MODIFIED" || event->type == "DELETED";
    if (event->object && change) FUZZ_CHECK(!event->object->name.empty());
    if (event->bad) FUZZ_CHECK(!event->bad->reason.empty());
  }
  return 0;
}
