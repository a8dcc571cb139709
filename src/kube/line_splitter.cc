#include "kube/line_splitter.h"

#include <algorithm>

namespace fk::kube {

LineSplitter::LineSplitter(size_t max_line, OnLine on_line)
    : max_line_(std::max<size_t>(max_line, 1)), on_line_(std::move(on_line)) {}

void LineSplitter::Feed(std::string_view data) {
  while (!data.empty()) {
    const size_t nl = data.find('\n');
    const std::string_view piece = data.substr(0, nl);
    if (!discarding_) {
      const size_t room = max_line_ - partial_.size();
      partial_.append(piece.substr(0, room));
      if (piece.size() > room) {  // over-long: deliver its head now, drop the rest
        Emit(/*truncated=*/true);
        discarding_ = true;
      }
    }
    if (nl == std::string_view::npos) return;
    if (discarding_) {
      discarding_ = false;
    } else {
      Emit(/*truncated=*/false);
    }
    data.remove_prefix(nl + 1);
  }
}

void LineSplitter::Finish() {
  if (!discarding_) Emit(/*truncated=*/false);
  discarding_ = false;
}

void LineSplitter::Emit(bool truncated) {
  std::string_view line = partial_;
  if (!truncated && !line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.empty()) on_line_(line, truncated);
  partial_.clear();
}

}  // namespace fk::kube
