// Status and Result<T>: errors that a caller handles are values, as in
// LevelDB. Exceptions thrown by libraries (SQLiteCpp, Boost.JSON) are caught at
// the layer boundary and turned into a Status there.
#pragma once

#include <cassert>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fk {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // the caller passed something malformed
  kNotFound,         // a file or object that should exist does not (or is gone: HTTP 410)
  kRefused,          // not ours to touch: a foreign or newer journal; a request the server refused
  kCorruption,       // stored data does not parse or contradicts itself
  kIOError,          // the disk or the OS failed (full disk, permissions, I/O error)
  kBusy,             // another writer holds a lock longer than we wait
  kCancelled,        // abandoned on request: a cancel fired or the process is stopping
  kUnavailable,      // a peer (the API server) did not answer as asked; retrying may succeed
  kInternal,         // a bug: an invariant did not hold
  kConflict,         // another writer changed it first (HTTP 409): re-read and decide again
};

const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Refused(std::string m) { return {Code::kRefused, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {Code::kIOError, std::move(m)}; }
  static Status Busy(std::string m) { return {Code::kBusy, std::move(m)}; }
  static Status Cancelled(std::string m) { return {Code::kCancelled, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
  // A code known only at run time (e.g. mapped from another error's kind).
  static Status Of(Code code, std::string m) { return {code, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "Refused: journal /x is not a fencekeeper journal (application_id 0)".
  std::string ToString() const;

  // What a layer attaches for its callers to branch on beyond the code (the
  // API client's kube::ApiError: the HTTP code, the Kubernetes reason,
  // Retry-After), so one error value carries it up, not a second error type
  // beside Status. Shared by copies; read it with a dynamic_cast.
  class Detail {
   public:
    virtual ~Detail() = default;
  };
  Status WithDetail(std::shared_ptr<const Detail> detail) && {
    detail_ = std::move(detail);
    return std::move(*this);
  }
  const Detail* detail() const { return detail_.get(); }
  // "context: message", the code and the detail kept.
  Status WithContext(std::string_view context) const {
    Status s = *this;
    s.message_ = std::string(context) + ": " + message_;
    return s;
  }

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
  std::shared_ptr<const Detail> detail_;
};

// A value or the Status explaining why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "a Result holding a Status must hold an error");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace fk
