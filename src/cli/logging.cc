#include "cli/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <cstdio>
#include <mutex>

#include "common/clock.h"

namespace fk::cli {
namespace {

// One JSON object per line; the message is escaped by Boost.JSON, so any
// text a log line carries stays valid JSON.
class JsonStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    boost::json::object line{{"time", FormatRfc3339(msg.time)},
                             {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                                                   spdlog::level::to_string_view(msg.level).size())},
                             {"msg", std::string(msg.payload.data(), msg.payload.size())}};
    const std::string text = boost::json::serialize(line) + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

Status SetUpLogging(const std::string& format, const std::string& level) {
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return Status::InvalidArgument("--log-level must be trace, debug, info, warn or error, not '" + level + "'");
  }
  std::shared_ptr<spdlog::logger> logger;
  if (format == "json") {
    logger = std::make_shared<spdlog::logger>("fencekeeper", std::make_shared<JsonStderrSink>());
  } else if (format == "text") {
    logger = std::make_shared<spdlog::logger>("fencekeeper", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  } else {
    return Status::InvalidArgument("--log-format must be text or json, not '" + format + "'");
  }
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace fk::cli
