#include "domain/dns_names.h"

namespace fk::domain {
namespace {

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool Alnum(char c) { return LowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])? with no length bound.
bool LabelShape(std::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  for (char c : s)
    if (!LowerAlnum(c) && c != '-') return false;
  return true;
}

}  // namespace

bool IsDns1123Label(std::string_view s) { return s.size() <= 63 && LabelShape(s); }

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (size_t start = 0;;) {
    const size_t dot = s.find('.', start);
    if (!LabelShape(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsLabelValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !Alnum(s.front()) || !Alnum(s.back())) return false;
  for (char c : s)
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool IsQualifiedName(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return !s.empty() && IsLabelValue(s);
  const std::string_view name = s.substr(slash + 1);
  return IsDns1123Subdomain(s.substr(0, slash)) && !name.empty() && IsLabelValue(name);
}

}  // namespace fk::domain
