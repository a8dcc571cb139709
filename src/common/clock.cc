#include "common/clock.h"

#include <cstdio>
#include <ctime>

namespace fk {

SystemClock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

std::string FormatRfc3339(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  long millis = static_cast<long>(ms % 1000);
  if (millis < 0) {  // times before the epoch round toward the past
    millis += 1000;
    secs -= 1;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

std::string FormatMicroTime(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  int64_t us = duration_cast<microseconds>(t.time_since_epoch()).count() % 1000000;
  if (us < 0) us += 1000000;
  char frac[8];
  std::snprintf(frac, sizeof frac, "%06lld", static_cast<long long>(us));
  return FormatRfc3339(t).substr(0, 19) + "." + frac + "Z";
}

}  // namespace fk
