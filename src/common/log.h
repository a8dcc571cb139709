// Structured log records for every layer: a level, a message that says what
// happened, and ordered key=value fields that say to what (namespace,
// sandbox, seq...), so an operator filters on fields instead of parsing
// sentences. A record is built and emitted in one expression:
//
//   log::Warn("fail-closed: suspended sandbox").Namespace(ns).Sandbox(name).Seq(33);
//
// The record goes out when the expression ends, and costs nothing past the
// level check when its level is off. Records carry the fields of every
// log::Scope alive on the emitting thread (a reconcile's controller and id).
// The process's logger (spdlog, set up by cli/logging) writes them as JSON or
// logfmt; every value is escaped (EscapeForLog) and bearer tokens redacted.
// No spdlog or fmt here: this header is included everywhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/status.h"

namespace fk::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };
enum class Format { kText, kJson };

// The field names shared by all layers: queries and alerts rely on them.
namespace key {
inline constexpr std::string_view kNamespace = "namespace";
inline constexpr std::string_view kSandbox = "sandbox";
inline constexpr std::string_view kUid = "uid";
inline constexpr std::string_view kReason = "reason";
inline constexpr std::string_view kSeq = "seq";
inline constexpr std::string_view kFenceFrom = "fence_from";  // the fence generation admitted
inline constexpr std::string_view kFenceTo = "fence_to";      // the fence generation observed
inline constexpr std::string_view kError = "error";
inline constexpr std::string_view kController = "controller";
inline constexpr std::string_view kReconcileId = "reconcile_id";
}  // namespace key

struct Field {
  std::string key;
  std::variant<std::string, int64_t, bool> value;  // numbers stay numbers in JSON
  bool operator==(const Field&) const = default;
};

struct Record {
  Level level = Level::kInfo;
  std::string msg;
  std::vector<Field> fields;
  // The value of `key` as written (numbers in decimal); nullopt if absent.
  std::optional<std::string> Get(std::string_view key) const;
};

// Whether a record at `level` would be written now.
bool Enabled(Level level);

// One record under construction; emitted when it is destroyed (at the end of
// the full expression that made it). A field set twice keeps both.
class Entry {
 public:
  Entry(Level level, std::string_view msg);
  ~Entry();
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

  Entry& Str(std::string_view key, std::string_view value);
  Entry& Int(std::string_view key, int64_t value);
  Entry& Bool(std::string_view key, bool value);
  Entry& Namespace(std::string_view v) { return Str(key::kNamespace, v); }
  Entry& Sandbox(std::string_view v) { return Str(key::kSandbox, v); }
  Entry& Uid(std::string_view v) { return Str(key::kUid, v); }
  Entry& Reason(std::string_view v) { return Str(key::kReason, v); }
  Entry& Seq(int64_t v) { return Int(key::kSeq, v); }
  Entry& Error(std::string_view v) { return Str(key::kError, v); }
  Entry& Error(const Status& s) { return Str(key::kError, s.ToString()); }
  // Absent values are left out rather than written as a placeholder.
  Entry& NonEmpty(std::string_view key, std::string_view value) {
    return value.empty() ? *this : Str(key, value);
  }
  Entry& Int(std::string_view key, std::optional<int64_t> value) {
    return value ? Int(key, *value) : *this;
  }

 private:
  bool enabled_;
  Record record_;
};

inline Entry Trace(std::string_view msg) { return Entry(Level::kTrace, msg); }
inline Entry Debug(std::string_view msg) { return Entry(Level::kDebug, msg); }
inline Entry Info(std::string_view msg) { return Entry(Level::kInfo, msg); }
inline Entry Warn(std::string_view msg) { return Entry(Level::kWarn, msg); }
inline Entry Error(std::string_view msg) { return Entry(Level::kError, msg); }

// Fields every record emitted on this thread carries while the Scope lives
// (nested scopes add to each other). A record's own field of the same key wins.
class Scope {
 public:
  explicit Scope(std::vector<Field> fields);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  size_t size_before_;
};

// A new reconcile id: short, unique within the process ("r1f", "r20"...).
std::string NewReconcileId();

// One reconcile pass of `controller` for namespace/name: the records of the
// pass carry controller, reconcile_id, namespace and sandbox.
class ReconcileScope {
 public:
  ReconcileScope(std::string_view controller, std::string_view ns, std::string_view name);
  const std::string& id() const { return id_; }

 private:
  std::string id_;
  Scope scope_;
};

// The names used in records and accepted by --log-level: trace, debug, info,
// warn, error, critical, off.
const char* ToString(Level level);
std::optional<Level> ParseLevel(std::string_view text);

// The message and the fields as logfmt, "msg key=value ...": how a record
// reads in a sink that knows nothing of fields.
std::string MessageWithFields(const Record& record);

// One line (with its "\n") for `record` at `ts`: JSON with ts, level, msg and
// one key per field; or logfmt, ts=… level=… msg="…" key=value...
std::string FormatLine(Format format, const Record& record,
                       std::chrono::system_clock::time_point ts);

// For code no exception may leave (destructors): an error record about `what`,
// or a plain line on stderr if even that fails.
void ErrorNoThrow(std::string_view what, std::string_view error) noexcept;

// Runs `body` where no exception may escape (a destructor): one that does is
// reported (ErrorNoThrow) and goes no further, rather than ending the process.
template <typename Body>
void RunNoThrow(std::string_view what, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
  } catch (const std::exception& e) {
    ErrorNoThrow(what, e.what());
  } catch (...) {
    ErrorNoThrow(what, "unknown exception");
  }
}

// The process logger: records at `level` and above go to `out` as `format`.
void Install(Format format, Level level, std::FILE* out);

// Records emitted while a Capture lives, in order, from any thread, instead
// of the process logger's output (for tests).
class Capture {
 public:
  explicit Capture(Level level = Level::kInfo);
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::vector<Record> records() const;
  // Records at `level` whose msg starts with `prefix`.
  std::vector<Record> Matching(Level level, std::string_view prefix = "") const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One log line's worth of text, printable: C0 controls and DEL as \n, \r,
// \t, \e or \xHH, C1 controls (U+0080-U+009F) as \u0080.., bytes that are
// not valid UTF-8 as \xHH, and the backslash itself as \\ so every escape is
// unambiguous. Valid printable UTF-8 (é, 中) is kept as it is.
std::string EscapeForLog(std::string_view text);

// `text` with the credential after each "Bearer " (any case) replaced by
// "[redacted]": an error message that quotes a request never leaks a token.
std::string RedactSecrets(std::string_view text);

}  // namespace fk::log
