// Records in, through spdlog: spdlog keeps the level, the default logger and
// the flushing; the record's fields travel beside the message (a
// thread-local pointer, read by our sinks during the synchronous call), so a
// sink that knows no fields still gets a readable "msg key=value" line.
#include "common/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace fk::log {
namespace {

thread_local std::vector<Field> t_scope_fields;
thread_local const Record* t_in_flight = nullptr;  // the record being written on this thread

// Level and spdlog's levels list the same seven in the same order.
spdlog::level::level_enum ToSpdlog(Level level) {
  static constexpr spdlog::level::level_enum kLevels[] = {
      spdlog::level::trace, spdlog::level::debug,    spdlog::level::info, spdlog::level::warn,
      spdlog::level::err,   spdlog::level::critical, spdlog::level::off};
  return kLevels[static_cast<size_t>(level)];
}

Level FromSpdlog(spdlog::level::level_enum level) {
  static constexpr Level kLevels[] = {Level::kTrace, Level::kDebug,    Level::kInfo, Level::kWarn,
                                      Level::kError, Level::kCritical, Level::kOff};
  const auto i = static_cast<size_t>(level);
  return i < std::size(kLevels) ? kLevels[i] : Level::kOff;
}

bool HasField(const Record& r, std::string_view key) {
  return std::any_of(r.fields.begin(), r.fields.end(),
                     [&](const Field& f) { return f.key == key; });
}

void Emit(Record& record) {
  for (const Field& f : t_scope_fields)
    if (!HasField(record, f.key)) record.fields.push_back(f);
  const std::string plain = MessageWithFields(record);
  t_in_flight = &record;
  spdlog::default_logger_raw()->log(ToSpdlog(record.level), spdlog::string_view_t(plain));
  t_in_flight = nullptr;
}

// The record being written, or one made of a plain spdlog message.
Record CurrentRecord(const spdlog::details::log_msg& msg) {
  if (t_in_flight) return *t_in_flight;
  return Record{FromSpdlog(msg.level), std::string(msg.payload.data(), msg.payload.size()), {}};
}

// JSON or logfmt lines to a FILE.
class LineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  LineSink(Format format, std::FILE* out) : format_(format), out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string line = FormatLine(format_, CurrentRecord(msg), msg.time);
    std::fwrite(line.data(), 1, line.size(), out_);
  }
  void flush_() override { std::fflush(out_); }

 private:
  Format format_;
  std::FILE* out_;
};

// Keeps the records, for Capture.
class RecordSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<Record> records() const {
    std::lock_guard lock(records_mu_);
    return records_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::lock_guard lock(records_mu_);
    records_.push_back(CurrentRecord(msg));
  }
  void flush_() override {}

 private:
  mutable std::mutex records_mu_;
  std::vector<Record> records_;
};

}  // namespace

bool Enabled(Level level) { return spdlog::default_logger_raw()->should_log(ToSpdlog(level)); }

Entry::Entry(Level level, std::string_view msg) : enabled_(Enabled(level)) {
  if (!enabled_) return;
  record_.level = level;
  record_.msg = std::string(msg);
}

Entry::~Entry() {
  if (enabled_) Emit(record_);
}

Entry& Entry::Str(std::string_view key, std::string_view value) {
  if (enabled_) record_.fields.push_back({std::string(key), std::string(value)});
  return *this;
}

Entry& Entry::Int(std::string_view key, int64_t value) {
  if (enabled_) record_.fields.push_back({std::string(key), value});
  return *this;
}

Entry& Entry::Bool(std::string_view key, bool value) {
  if (enabled_) record_.fields.push_back({std::string(key), value});
  return *this;
}

void ErrorNoThrow(std::string_view what, std::string_view error) noexcept {
  try {
    Error(what).Error(error);
  } catch (...) {
    // Out of memory, or the sink failed: stderr still takes a plain line.
    std::fprintf(stderr, "error: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
                 static_cast<int>(error.size()), error.data());
  }
}

Scope::Scope(std::vector<Field> fields) : size_before_(t_scope_fields.size()) {
  for (Field& f : fields) t_scope_fields.push_back(std::move(f));
}

Scope::~Scope() { t_scope_fields.resize(size_before_); }

std::string NewReconcileId() {
  static std::atomic<uint64_t> next{1};
  char buf[24];
  std::snprintf(buf, sizeof buf, "r%llx", static_cast<unsigned long long>(next++));
  return buf;
}

ReconcileScope::ReconcileScope(std::string_view controller, std::string_view ns,
                               std::string_view name)
    : id_(NewReconcileId()),
      scope_({{std::string(key::kController), std::string(controller)},
              {std::string(key::kReconcileId), id_},
              {std::string(key::kNamespace), std::string(ns)},
              {std::string(key::kSandbox), std::string(name)}}) {}

const char* ToString(Level level) {
  static constexpr const char* kNames[] = {"trace", "debug",    "info", "warn",
                                           "error", "critical", "off"};
  return kNames[static_cast<int>(level)];
}

std::optional<Level> ParseLevel(std::string_view text) {
  for (Level l : {Level::kTrace, Level::kDebug, Level::kInfo, Level::kWarn, Level::kError,
                  Level::kCritical, Level::kOff})
    if (text == ToString(l)) return l;
  if (text == "warning") return Level::kWarn;
  return std::nullopt;
}

void Install(Format format, Level level, std::FILE* out) {
  auto logger =
      std::make_shared<spdlog::logger>("fencekeeper", std::make_shared<LineSink>(format, out));
  logger->set_level(ToSpdlog(level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

struct Capture::State {
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  std::shared_ptr<RecordSink> sink = std::make_shared<RecordSink>();
};

Capture::Capture(Level level) : state_(new State) {
  auto logger = std::make_shared<spdlog::logger>("capture", state_->sink);
  logger->set_level(ToSpdlog(level));
  spdlog::set_default_logger(logger);
}

Capture::~Capture() { spdlog::set_default_logger(state_->previous); }

std::vector<Record> Capture::records() const { return state_->sink->records(); }

std::vector<Record> Capture::Matching(Level level, std::string_view prefix) const {
  std::vector<Record> out;
  for (Record& r : records())
    if (r.level == level && r.msg.rfind(prefix, 0) == 0) out.push_back(std::move(r));
  return out;
}

}  // namespace fk::log
