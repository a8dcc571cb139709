#include "common/status.h"

namespace fk {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "Invalid argument";
    case Code::kNotFound:
      return "Not found";
    case Code::kRefused:
      return "Refused";
    case Code::kCorruption:
      return "Corruption";
    case Code::kIOError:
      return "I/O error";
    case Code::kBusy:
      return "Busy";
    case Code::kCancelled:
      return "Cancelled";
    case Code::kUnavailable:
      return "Unavailable";
    case Code::kInternal:
      return "Internal error";
    case Code::kConflict:
      return "Conflict";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace fk
