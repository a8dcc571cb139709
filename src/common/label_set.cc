#include "common/label_set.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_set>

namespace fk {

// One allocation: the count, then the labels as "key\0<v>\0key\0<v>\0",
// sorted by key, where <v> is '=' and the value, or '*' alone for the owner's
// name. The tag keeps a value that happens to spell a reference a value.
struct LabelSet::Rep {
  uint32_t references;
  uint32_t size;
  std::string_view text() const { return {reinterpret_cast<const char*>(this + 1), size}; }
};

namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(const LabelSet::Rep* r) const { return (*this)(r->text()); }
  size_t operator()(std::string_view t) const { return std::hash<std::string_view>{}(t); }
};
struct TextEqual {
  using is_transparent = void;
  static std::string_view T(const LabelSet::Rep* r) { return r->text(); }
  static std::string_view T(std::string_view t) { return t; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return T(a) == T(b);
  }
};

// Every count change happens under this lock: a set is created or dropped
// only when a cached pod or sandbox is, so the lock is rarely taken, and
// finding a set and reviving it can never race with its deletion.
struct Table {
  std::mutex mu;
  std::unordered_set<LabelSet::Rep*, TextHash, TextEqual> sets;
};
Table& TheTable() {
  static Table* table = new Table();  // never destroyed: handles may outlive statics
  return *table;
}

constexpr char kValueTag = '=', kOwnerTag = '*';

std::string Pack(LabelSet::Items items, std::string_view owner) {
  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i + 1 < items.size() && items[i + 1].first == items[i].first) continue;  // last wins
    // The API server refuses NUL in labels; one can only come from a
    // hostile peer, and would break the packing.
    if (items[i].first.find('\0') != std::string::npos ||
        items[i].second.find('\0') != std::string::npos)
      continue;
    text.append(items[i].first).push_back('\0');
    if (!owner.empty() && items[i].second == owner) {
      text.push_back(kOwnerTag);
    } else {
      text.push_back(kValueTag);
      text.append(items[i].second);
    }
    text.push_back('\0');
  }
  return text;
}

// Calls `each(key, value)` for every label of `text`, a reference read as
// `owner`.
template <class F>
void ForEach(std::string_view text, std::string_view owner, F each) {
  while (!text.empty()) {
    const size_t k = text.find('\0');
    const size_t v = text.find('\0', k + 1);
    const std::string_view value = text.substr(k + 1, v - k - 1);
    each(text.substr(0, k), value.front() == kOwnerTag ? owner : value.substr(1));
    text.remove_prefix(v + 1);
  }
}

void Release(LabelSet::Rep* rep) {
  if (!rep) return;
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  if (--rep->references > 0) return;
  t.sets.erase(rep);
  rep->~Rep();
  ::operator delete(rep);
}

LabelSet::Rep* Acquire(LabelSet::Rep* rep) {
  if (!rep) return nullptr;
  std::lock_guard lock(TheTable().mu);
  ++rep->references;
  return rep;
}

}  // namespace

LabelSet LabelSet::Of(Items items, std::string_view owner) {
  const std::string text = Pack(std::move(items), owner);
  if (text.empty()) return {};
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  if (auto it = t.sets.find(std::string_view(text)); it != t.sets.end()) {
    ++(*it)->references;
    return LabelSet(*it);
  }
  void* memory = ::operator new(sizeof(Rep) + text.size());
  Rep* rep = new (memory) Rep{1, static_cast<uint32_t>(text.size())};
  std::memcpy(rep + 1, text.data(), text.size());
  t.sets.insert(rep);
  return LabelSet(rep);
}

LabelSet::LabelSet(const LabelSet& other) : rep_(Acquire(other.rep_)) {}

LabelSet& LabelSet::operator=(const LabelSet& other) {
  if (this != &other) {
    Rep* old = std::exchange(rep_, Acquire(other.rep_));
    Release(old);
  }
  return *this;
}

LabelSet& LabelSet::operator=(LabelSet&& other) noexcept {
  if (this != &other) Release(std::exchange(rep_, std::exchange(other.rep_, nullptr)));
  return *this;
}

LabelSet::~LabelSet() { Release(rep_); }

std::optional<std::string> LabelSet::Get(std::string_view key, std::string_view owner) const {
  if (!rep_) return std::nullopt;
  std::optional<std::string> out;
  ForEach(rep_->text(), owner, [&](std::string_view k, std::string_view v) {
    if (!out && k == key) out = std::string(v);
  });
  return out;
}

LabelSet::Items LabelSet::items(std::string_view owner) const {
  Items out;
  if (rep_)
    ForEach(rep_->text(), owner,
            [&](std::string_view k, std::string_view v) { out.emplace_back(k, v); });
  return out;
}

size_t LabelSet::InternedCount() {
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  return t.sets.size();
}

}  // namespace fk
