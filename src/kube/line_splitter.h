// Splits a watch stream's bytes, as they arrive in arbitrary chunks, into
// newline-delimited lines ("\r\n" too; empty lines are keep-alives and are
// dropped). Memory is bounded by max_line: a line longer than that is
// delivered cut to max_line bytes, flagged, and the rest of it is discarded
// up to its newline. The cut line cannot decode, so the informer counts it as
// a bad object and salvages what identity its first bytes hold (the event
// type and metadata come first in the API server's encoding): one oversized
// event stays local instead of growing a buffer without end.
//
// Each byte is looked at once however the stream is chunked.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace fk::kube {

class LineSplitter {
 public:
  // `truncated`: the line was longer than max_line and is cut.
  using OnLine = std::function<void(std::string_view line, bool truncated)>;

  LineSplitter(size_t max_line, OnLine on_line);

  void Feed(std::string_view data);
  // The stream ended: an unfinished last line is delivered as it is.
  void Finish();
  bool empty() const { return partial_.empty() && !discarding_; }

 private:
  void Emit(bool truncated);

  const size_t max_line_;
  OnLine on_line_;
  std::string partial_;      // the unfinished line, at most max_line_ bytes
  bool discarding_ = false;  // inside an over-long line, after delivering its head
};

}  // namespace fk::kube
