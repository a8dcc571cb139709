#include "cli/logging.h"

#include <chrono>
#include <ostream>

namespace fk::cli {

std::optional<log::Format> ParseLogFormat(const std::string& format) {
  if (format == "text") return log::Format::kText;
  if (format == "json") return log::Format::kJson;
  return std::nullopt;
}

Status SetUpLogging(const std::string& format, const std::string& level, std::FILE* out) {
  const auto lvl = log::ParseLevel(level);
  if (!lvl) {
    return Status::InvalidArgument("--log-level must be trace, debug, info, warn or error, not '" +
                                   level + "'");
  }
  const auto fmt = ParseLogFormat(format);
  if (!fmt)
    return Status::InvalidArgument("--log-format must be text or json, not '" + format + "'");
  log::Install(*fmt, *lvl, out);
  return Status::Ok();
}

void ReportFatal(std::ostream& err, log::Format format, std::string_view what,
                 std::string_view error) {
  log::Record record{log::Level::kError, std::string(what), {}};
  record.fields.push_back({std::string(log::key::kError), std::string(error)});
  err << log::FormatLine(format, record, std::chrono::system_clock::now()) << std::flush;
}

}  // namespace fk::cli
