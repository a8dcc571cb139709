#include "sim/selector.h"

#include <algorithm>
#include <boost/json.hpp>

namespace fk::sim {
namespace json = boost::json;
namespace {

std::string Trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> SplitTerms(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty() || !out.empty()) out.push_back(Trim(cur));
  return out;
}

std::optional<std::string> StringAt(const json::value& v, const std::vector<std::string>& path) {
  const json::value* cur = &v;
  for (const auto& p : path) {
    if (!cur->is_object()) return std::nullopt;
    cur = cur->get_object().if_contains(p);
    if (!cur) return std::nullopt;
  }
  if (!cur->is_string()) return std::nullopt;
  return std::string(cur->get_string());
}

}  // namespace

std::optional<Selector> Selector::ParseLabels(const std::string& text) {
  Selector s;
  for (const std::string& term : SplitTerms(text)) {
    if (term.empty()) return std::nullopt;
    Requirement r;
    size_t pos;
    if (term[0] == '!') {
      r = {Trim(term.substr(1)), Op::kNotExists, {}};
    } else if ((pos = term.find(" notin ")) != std::string::npos || (pos = term.find(" in ")) != std::string::npos) {
      const bool notin = term.compare(pos, 7, " notin ") == 0;
      r.key = Trim(term.substr(0, pos));
      r.op = notin ? Op::kNotIn : Op::kIn;
      std::string set = Trim(term.substr(pos + (notin ? 7 : 4)));
      if (set.size() < 2 || set.front() != '(' || set.back() != ')') return std::nullopt;
      for (auto& v : SplitTerms(set.substr(1, set.size() - 2))) r.values.push_back(v);
    } else if ((pos = term.find("!=")) != std::string::npos) {
      r = {Trim(term.substr(0, pos)), Op::kNotEquals, {Trim(term.substr(pos + 2))}};
    } else if ((pos = term.find("==")) != std::string::npos) {
      r = {Trim(term.substr(0, pos)), Op::kEquals, {Trim(term.substr(pos + 2))}};
    } else if ((pos = term.find('=')) != std::string::npos) {
      r = {Trim(term.substr(0, pos)), Op::kEquals, {Trim(term.substr(pos + 1))}};
    } else {
      r = {term, Op::kExists, {}};
    }
    if (r.key.empty() || r.key.find_first_of(" ()!=") != std::string::npos) return std::nullopt;
    s.requirements_.push_back(std::move(r));
  }
  return s;
}

std::optional<Selector> Selector::ParseFields(const std::string& text) {
  auto s = ParseLabels(text);
  if (!s) return std::nullopt;
  for (const auto& r : s->requirements_) {
    if ((r.key != "metadata.name" && r.key != "metadata.namespace") ||
        (r.op != Op::kEquals && r.op != Op::kNotEquals)) {
      return std::nullopt;
    }
  }
  s->fields_ = true;
  return s;
}

bool Selector::Matches(const json::value& object) const {
  for (const auto& r : requirements_) {
    std::optional<std::string> v;
    if (fields_) {
      v = StringAt(object, {"metadata", r.key.substr(9)});
    } else {
      v = StringAt(object, {"metadata", "labels", r.key});
    }
    const bool in = v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        if (!in) return false;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        if (in) return false;
        break;
      case Op::kExists:
        if (!v) return false;
        break;
      case Op::kNotExists:
        if (v) return false;
        break;
    }
  }
  return true;
}

}  // namespace fk::sim
