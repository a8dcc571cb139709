#include "domain/label_selector.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "domain/dns_names.h"

namespace fk::domain {
namespace {
using Op = LabelRequirement::Op;

bool Special(char c) {
  return c == '!' || c == '=' || c == '<' || c == '>' || c == '(' || c == ')' || c == ',';
}
bool Space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// apimachinery's lexer: identifiers are runs of anything but blanks and the
// special characters; operators are those characters (= == != ! < > ( ) ,).
class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  // The next token without consuming it; "" at the end.
  std::string_view Peek() {
    const size_t save = pos_;
    std::string_view t = Next();
    pos_ = save;
    return t;
  }
  std::string_view Next() {
    while (pos_ < s_.size() && Space(s_[pos_])) ++pos_;
    if (pos_ >= s_.size()) return {};
    const size_t start = pos_;
    if (Special(s_[pos_])) {
      ++pos_;
      const bool two =
          pos_ < s_.size() && s_[pos_] == '=' && (s_[start] == '=' || s_[start] == '!');
      if (two) ++pos_;
      return s_.substr(start, pos_ - start);
    }
    while (pos_ < s_.size() && !Space(s_[pos_]) && !Special(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

bool Identifier(std::string_view t) { return !t.empty() && !Special(t.front()); }
bool IsInteger(std::string_view t) {
  int64_t v;
  const char* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, v);
  return !t.empty() && ec == std::errc() && p == end;
}

Status Error(std::string_view text, size_t pos, const std::string& what) {
  return Status::InvalidArgument(what + " at position " + std::to_string(pos) + " of '" +
                                 std::string(text) + "'");
}

// One value after = == != < >: an identifier, or none (a=, meaning empty).
std::optional<std::string> ExactValue(Lexer& lex) {
  const std::string_view t = lex.Peek();
  if (t.empty() || t == ",") return std::string();
  if (!Identifier(t)) return std::nullopt;
  return std::string(lex.Next());
}

// "( v1, v2 )"; a value may be empty ("(a,)"), the set may not be.
std::optional<std::vector<std::string>> ValueSet(Lexer& lex) {
  if (lex.Next() != "(") return std::nullopt;
  std::vector<std::string> values;
  for (;;) {
    std::string_view t = lex.Peek();
    std::string v;
    if (Identifier(t)) v = std::string(lex.Next());
    values.push_back(v);
    t = lex.Next();
    if (t == ")") break;
    if (t != ",") return std::nullopt;
  }
  if (values.size() == 1 && values[0].empty()) return std::nullopt;
  return values;
}

Result<LabelRequirement> ParseRequirement(std::string_view text, Lexer& lex) {
  LabelRequirement r;
  std::string_view t = lex.Next();
  if (t == "!") {
    r.op = Op::kNotExists;
    t = lex.Next();
  }
  if (!Identifier(t)) return Error(text, lex.pos(), "expected a label key");
  r.key = std::string(t);
  const std::string_view op = lex.Peek();
  if (r.op == Op::kNotExists || op.empty() || op == ",") return r;
  lex.Next();
  if (op == "in" || op == "notin") {
    r.op = op == "in" ? Op::kIn : Op::kNotIn;
    auto set = ValueSet(lex);
    if (!set)
      return Error(text, lex.pos(),
                   "expected a non-empty set like (a,b) after '" + std::string(op) + "'");
    r.values = std::move(*set);
    return r;
  }
  if (op == "=" || op == "==")
    r.op = Op::kEquals;
  else if (op == "!=")
    r.op = Op::kNotEquals;
  else if (op == ">")
    r.op = Op::kGreater;
  else if (op == "<")
    r.op = Op::kLess;
  else
    return Error(text, lex.pos(),
                 "expected an operator (=, ==, !=, in, notin, <, >) after '" + r.key + "'");
  auto v = ExactValue(lex);
  if (!v) return Error(text, lex.pos(), "expected a value after '" + std::string(op) + "'");
  r.values.push_back(std::move(*v));
  return r;
}

Status Validate(std::string_view text, const LabelRequirement& r) {
  if (!IsQualifiedName(r.key))
    return Status::InvalidArgument(
        "'" + r.key + "' in '" + std::string(text) +
        "' is not a valid label key (an optional DNS subdomain prefix and '/', "
        "then 1-63 of [A-Za-z0-9-_.], alphanumeric at both ends)");
  for (const std::string& v : r.values) {
    const bool numeric = r.op == Op::kGreater || r.op == Op::kLess;
    if (numeric ? !IsInteger(v) : !IsLabelValue(v))
      return Status::InvalidArgument(
          "'" + v + "' in '" + std::string(text) + "' is not a valid " +
          (numeric ? "integer"
                   : "label value (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends)"));
  }
  return Status::Ok();
}

bool Holds(const LabelRequirement& r, const std::optional<std::string>& v) {
  const bool listed = v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
  auto compare = [&](auto cmp) {
    int64_t have = 0, want = 0;
    if (!v || !IsInteger(*v) || r.values.empty() || !IsInteger(r.values[0])) return false;
    std::from_chars(v->data(), v->data() + v->size(), have);
    std::from_chars(r.values[0].data(), r.values[0].data() + r.values[0].size(), want);
    return cmp(have, want);
  };
  switch (r.op) {
    case Op::kEquals:
    case Op::kIn:
      return listed;
    case Op::kNotEquals:
    case Op::kNotIn:
      return !listed;
    case Op::kExists:
      return v.has_value();
    case Op::kNotExists:
      return !v.has_value();
    case Op::kGreater:
      return compare([](int64_t a, int64_t b) { return a > b; });
    case Op::kLess:
      return compare([](int64_t a, int64_t b) { return a < b; });
  }
  return false;
}

}  // namespace

bool LabelSelector::Matches(
    const std::function<std::optional<std::string>(const std::string&)>& value_of) const {
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const LabelRequirement& r) { return Holds(r, value_of(r.key)); });
}

Result<LabelSelector> ParseLabelSelector(std::string_view text, bool validate) {
  LabelSelector s;
  Lexer lex(text);
  if (lex.Peek().empty()) return s;  // "" selects everything, as in Kubernetes
  for (;;) {
    auto r = ParseRequirement(text, lex);
    if (!r.ok()) return r.status();
    if (validate) {
      if (Status st = Validate(text, *r); !st.ok()) return st;
    }
    s.requirements.push_back(std::move(*r));
    const std::string_view t = lex.Next();
    if (t.empty()) return s;
    if (t != ",")
      return Error(text, lex.pos(), "expected ',' or the end, got '" + std::string(t) + "'");
  }
}

}  // namespace fk::domain
