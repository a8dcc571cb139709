#include "journal/read_only.h"

#include <filesystem>

namespace fk::journal {

namespace {

// In a `file:` URI only these three characters of a path mean something
// else (sqlite.org/uri.html); each becomes its %XX escape.
std::string UriPath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%')
      out += "%25";
    else if (c == '?')
      out += "%3F";
    else if (c == '#')
      out += "%23";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string ReadOnlyUri(const std::string& path) {
  std::error_code ec;
  const bool has_wal = std::filesystem::exists(path + "-wal", ec);
  return "file:" + UriPath(path) + (has_wal ? "?mode=ro" : "?mode=ro&immutable=1");
}

}  // namespace fk::journal
