#include "kube/json_reader.h"

#include <charconv>
#include <vector>

namespace fk::kube {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Reader {
 public:
  Reader(std::string_view text, JsonSink& sink, size_t max_depth)
      : t_(text), sink_(sink), max_depth_(max_depth) {}

  Status Run() {
    for (;;) {
      SkipSpace();
      if (expect_ == Expect::kDone)
        return i_ == t_.size() ? Status::Ok() : Error("unexpected characters after the document");
      if (i_ >= t_.size()) return Error("unexpected end of input");
      if (Status s = Step(t_[i_]); !s.ok()) return s;
    }
  }

 private:
  enum class Expect { kValue, kValueOrEnd, kKey, kKeyOrEnd, kColon, kCommaOrEnd, kDone };
  struct Frame {
    bool object;
    size_t size;
  };

  Status Step(char c) {
    switch (expect_) {
      case Expect::kKeyOrEnd:
        if (c == '}') return Close();
        [[fallthrough]];
      case Expect::kKey:
        if (c != '"') return Error("expected a key");
        if (Status s = ReadString(); !s.ok()) return s;
        expect_ = Expect::kColon;
        return sink_.Key(buf_) ? Status::Ok() : Stopped();
      case Expect::kColon:
        if (c != ':') return Error("expected ':'");
        ++i_;
        expect_ = Expect::kValue;
        return Status::Ok();
      case Expect::kCommaOrEnd:
        if (c == ',') {
          ++i_;
          expect_ = stack_.back().object ? Expect::kKey : Expect::kValue;
          return Status::Ok();
        }
        if (c == (stack_.back().object ? '}' : ']')) return Close();
        return Error("expected ',' or the end of the container");
      case Expect::kValueOrEnd:
        if (c == ']') return Close();
        [[fallthrough]];
      default:
        return Value(c);
    }
  }

  Status Value(char c) {
    if (c == '{' || c == '[') {
      if (max_depth_ && stack_.size() >= max_depth_)
        return Error("too deep: more than " + std::to_string(max_depth_) + " levels");
      ++i_;
      stack_.push_back({c == '{', 0});
      expect_ = c == '{' ? Expect::kKeyOrEnd : Expect::kValueOrEnd;
      return sink_.Begin(c == '{') ? Status::Ok() : Stopped();
    }
    bool ok = true;
    if (c == '"') {
      if (Status s = ReadString(); !s.ok()) return s;
      ok = sink_.String(buf_);
    } else if (c == 't' || c == 'f' || c == 'n') {
      const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      if (t_.substr(i_, word.size()) != word) return Error("invalid literal");
      i_ += word.size();
      ok = c == 'n' ? sink_.Null() : sink_.Bool(c == 't');
    } else if (c == '-' || IsDigit(c)) {
      if (Status s = ReadNumber(&ok); !s.ok()) return s;
    } else {
      return Error("unexpected character");
    }
    if (!ok) return Stopped();
    return AfterValue();
  }

  Status Close() {
    ++i_;
    const Frame f = stack_.back();
    stack_.pop_back();
    if (!sink_.End(f.object, f.size)) return Stopped();
    return AfterValue();
  }

  Status AfterValue() {
    if (stack_.empty()) {
      expect_ = Expect::kDone;
    } else {
      ++stack_.back().size;
      expect_ = Expect::kCommaOrEnd;
    }
    return Status::Ok();
  }

  // At the opening quote; leaves the unescaped text in buf_.
  Status ReadString() {
    buf_.clear();
    for (++i_; i_ < t_.size(); ++i_) {
      const char c = t_[i_];
      if (c == '"') {
        ++i_;
        return Status::Ok();
      }
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c != '\\') {
        buf_.push_back(c);
        continue;
      }
      if (++i_ >= t_.size()) break;
      if (Status s = Escape(t_[i_]); !s.ok()) return s;
    }
    return Error("unterminated string");
  }

  Status Escape(char c) {
    switch (c) {
      case '"':
        buf_.push_back('"');
        return Status::Ok();
      case '\\':
        buf_.push_back('\\');
        return Status::Ok();
      case '/':
        buf_.push_back('/');
        return Status::Ok();
      case 'b':
        buf_.push_back('\b');
        return Status::Ok();
      case 'f':
        buf_.push_back('\f');
        return Status::Ok();
      case 'n':
        buf_.push_back('\n');
        return Status::Ok();
      case 'r':
        buf_.push_back('\r');
        return Status::Ok();
      case 't':
        buf_.push_back('\t');
        return Status::Ok();
      case 'u':
        break;
      default:
        return Error("invalid escape");
    }
    int unit = Hex4(i_ + 1);
    if (unit < 0) return Error("invalid \\u escape");
    i_ += 4;
    uint32_t cp = static_cast<uint32_t>(unit);
    if (cp >= 0xD800 && cp <= 0xDBFF && t_.substr(i_ + 1, 2) == "\\u") {
      const int low = Hex4(i_ + 3);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00);
        i_ += 6;
      }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate
    AppendUtf8(cp, &buf_);
    return Status::Ok();
  }

  int Hex4(size_t at) const {
    if (at + 4 > t_.size()) return -1;
    int v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const int h = HexValue(t_[k]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    return v;
  }

  Status ReadNumber(bool* ok) {
    const size_t start = i_;
    if (t_[i_] == '-') ++i_;
    if (i_ >= t_.size() || !IsDigit(t_[i_])) return Error("invalid number");
    if (t_[i_] == '0' && i_ + 1 < t_.size() && IsDigit(t_[i_ + 1]))
      return Error("invalid number (leading zero)");
    bool integer = true;
    auto digits = [&] {
      const size_t from = i_;
      while (i_ < t_.size() && IsDigit(t_[i_])) ++i_;
      return i_ > from;
    };
    digits();
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      integer = false;
      if (!digits()) return Error("invalid number");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      integer = false;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return Error("invalid number");
    }
    const char* first = t_.data() + start;
    const char* last = t_.data() + i_;
    if (integer && *first == '-') {
      int64_t v;
      if (std::from_chars(first, last, v).ec == std::errc()) {
        *ok = sink_.Int64(v);
        return Status::Ok();
      }
    } else if (integer) {
      uint64_t v;
      if (std::from_chars(first, last, v).ec == std::errc()) {
        *ok = v <= INT64_MAX ? sink_.Int64(static_cast<int64_t>(v)) : sink_.Uint64(v);
        return Status::Ok();
      }
    }
    // A fraction, an exponent or an integer beyond 64 bits: a double, as the
    // API server's decoder reads it. Too small is 0; too large is an error.
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range) {
      const std::string_view text(first, static_cast<size_t>(last - first));
      const size_t e = text.find_first_of("eE");
      if (e == std::string_view::npos || e + 1 >= text.size() || text[e + 1] != '-')
        return Error("number out of range");
      d = *first == '-' ? -0.0 : 0.0;
    } else if (r.ec != std::errc()) {
      return Error("invalid number");
    }
    *ok = sink_.Double(d);
    return Status::Ok();
  }

  void SkipSpace() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r'))
      ++i_;
  }
  Status Error(const std::string& what) const {
    return Status::InvalidArgument(what + " at byte " + std::to_string(i_));
  }
  Status Stopped() const { return Error("stopped by the reader's sink"); }

  std::string_view t_;
  JsonSink& sink_;
  const size_t max_depth_;
  size_t i_ = 0;
  Expect expect_ = Expect::kValue;
  std::vector<Frame> stack_;
  std::string buf_;
};

}  // namespace

Status ReadJson(std::string_view text, JsonSink& sink, size_t max_depth) {
  return Reader(text, sink, max_depth).Run();
}

}  // namespace fk::kube
