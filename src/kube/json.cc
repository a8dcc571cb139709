#include "kube/json.h"

#include "common/utf8.h"
#include "kube/json_fields.h"
#include "kube/json_reader.h"

#include <boost/json.hpp>
#include <cctype>
#include <limits>

namespace fk::kube {
namespace json = boost::json;

namespace {

// Builds a tree through Boost.JSON's value_stack, which is iterative.
class TreeSink final : public JsonSink {
 public:
  explicit TreeSink(json::storage_ptr sp) { stack_.reset(std::move(sp)); }
  bool Begin(bool) override { return true; }
  bool End(bool object, size_t size) override {
    if (object) {
      stack_.push_object(size);  // a duplicate key: the last one wins, as in the API server
    } else {
      stack_.push_array(size);
    }
    return true;
  }
  bool Key(std::string_view k) override { return stack_.push_key(k), true; }
  bool String(std::string_view s) override { return stack_.push_string(s), true; }
  bool Int64(int64_t v) override { return stack_.push_int64(v), true; }
  bool Uint64(uint64_t v) override { return stack_.push_uint64(v), true; }
  bool Double(double v) override { return stack_.push_double(v), true; }
  bool Bool(bool v) override { return stack_.push_bool(v), true; }
  bool Null() override { return stack_.push_null(), true; }
  json::value Release() { return stack_.release(); }

 private:
  json::value_stack stack_;
};

// A tree and the arena it lives in. Members are destroyed in reverse order:
// the value first (a no-op walk, the storage being trivially deallocated),
// then the arena.
struct ParsedJson {
  json::monotonic_resource arena;
  json::value value = json::value(json::storage_ptr(&arena));
};

// A salvaged string is an identity field: longer than any name/uid/RV can be
// is cut (it is only logged).
constexpr size_t kMaxSalvagedString = 512;

// Records type and metadata.{name,namespace,uid,resourceVersion} and builds
// nothing, so depth costs nothing but an entry in the reader's stack.
class IdentitySink final : public JsonSink {
 public:
  IdentitySink(bool under_object, BadObject* out, std::string* type)
      : under_object_(under_object), out_(out), type_(type) {}

  bool Begin(bool) override {
    // Only the first levels' keys matter; deeper levels are a counter.
    if (path_.size() == depth_ && depth_ < 3) path_.push_back(pending_key_);
    pending_key_.clear();
    ++depth_;
    return true;
  }
  bool End(bool, size_t) override {
    --depth_;
    if (path_.size() > depth_) path_.pop_back();
    pending_key_.clear();
    return true;
  }
  bool Key(std::string_view k) override {
    pending_key_.assign(Utf8Prefix(k, kMaxSalvagedString));
    return true;
  }
  bool String(std::string_view s) override {
    Record(Utf8Prefix(s, kMaxSalvagedString));
    return Scalar();
  }
  bool Int64(int64_t) override { return Scalar(); }
  bool Uint64(uint64_t) override { return Scalar(); }
  bool Double(double) override { return Scalar(); }
  bool Bool(bool) override { return Scalar(); }
  bool Null() override { return Scalar(); }

 private:
  bool Scalar() {
    pending_key_.clear();
    return true;
  }
  void Record(std::string_view text) {
    if (pending_key_.empty() || path_.size() != depth_) return;
    // path_[0] is the root's (empty) key.
    if (under_object_ && depth_ == 1 && pending_key_ == "type") type_->assign(text);
    const size_t meta_at = under_object_ ? 3 : 2;
    if (path_.size() != meta_at || path_.back() != "metadata") return;
    if (under_object_ && path_[1] != "object") return;
    if (pending_key_ == "name") out_->name = text;
    if (pending_key_ == "namespace") out_->ns = text;
    if (pending_key_ == "uid") out_->uid = text;
    if (pending_key_ == "resourceVersion") out_->resource_version = text;
  }

  const bool under_object_;
  BadObject* out_;
  std::string* type_;
  size_t depth_ = 0;
  std::vector<std::string> path_;
  std::string pending_key_;
};

// Identity of a decoded object: metadata.name must be a non-empty string;
// namespace/uid/resourceVersion are read when they are strings.
Result<DecodedObject> Identify(ObjectPtr object) {
  if (!object->is_object()) return Status::InvalidArgument("not a JSON object");
  const json::object* meta = ObjectField(*object, "metadata");
  if (!meta) return Status::InvalidArgument("no metadata object");
  auto name = StringField(meta, "name");
  if (!name || name->empty()) return Status::InvalidArgument("no metadata.name string");
  return DecodedObject{StringField(meta, "namespace").value_or(""),
                       *name,
                       StringField(meta, "uid").value_or(""),
                       StringField(meta, "resourceVersion").value_or(""),
                       std::move(object),
                       nullptr};
}

// One list item: decoded (and transformed), or the identity salvaged and why
// it was skipped.
void DecodeItem(std::string_view text, const Transform& transform, ListPage* page) {
  auto doc = ParseJson(text, "item");
  // Moved: the item holds the only reference, so the transform frees the tree.
  Result<DecodedObject> item =
      doc.ok() ? Identify(std::move(*doc)) : Result<DecodedObject>(doc.status());
  Status status = item.ok() ? Status::Ok() : item.status();
  if (item.ok()) {
    auto kept = transform ? TransformObject(transform, &*item) : Result<bool>(true);
    if (kept.ok()) {
      if (*kept) page->items.push_back(std::move(*item));
      return;
    }
    status = kept.status();
  }
  BadObject bad;
  SalvageIdentity(text, false, &bad);
  bad.reason = status.message();
  page->bad_items.push_back(std::move(bad));
}

}  // namespace

Result<JsonDoc> ParseJson(std::string_view text, std::string_view what, int envelope_levels) {
  try {
    auto doc = std::make_shared<ParsedJson>();
    TreeSink sink(json::storage_ptr(&doc->arena));
    const Status read = ReadJson(
        text, sink, static_cast<size_t>(kMaxObjectDepth) + static_cast<size_t>(envelope_levels));
    if (!read.ok())
      return Status::InvalidArgument(std::string(what) + " cannot be decoded: " + read.message());
    doc->value = sink.Release();  // the same storage: moved, not copied
    return JsonDoc(doc, &doc->value);
  } catch (const std::exception& e) {  // allocation failure
    return Status::InvalidArgument(std::string(what) + " cannot be decoded: " + e.what());
  }
}

const json::value* JsonOf(const CachedPtr& cached) {
  const auto* j = As<CachedJson>(cached.get());
  return j ? j->json.get() : nullptr;
}

Result<CachedPtr> Transformed(const Transform& transform, ObjectPtr object) {
  auto decoded = Identify(std::move(object));
  if (!decoded.ok()) return decoded.status();
  auto kept = TransformObject(transform, &*decoded);
  if (!kept.ok()) return kept.status();
  return CachedPtr(std::move(decoded->cached));
}

Result<bool> TransformObject(const Transform& transform, DecodedObject* object) {
  auto cached = transform(*object);
  if (!cached.ok()) return cached.status();
  object->object.reset();
  object->cached = std::move(*cached);
  if (!object->cached) return false;
  object->cached->uid = CompactString(object->uid);
  object->cached->resource_version = ResourceVersion(object->resource_version);
  return true;
}

std::string BadObject::Describe() const {
  std::string s = ns.empty() ? name : ns + "/" + name;
  if (s.empty()) s = "(no readable name)";
  if (!uid.empty()) s += " uid " + uid;
  if (!resource_version.empty()) s += " resourceVersion " + resource_version;
  return s + ": " + reason;
}

std::string SalvageIdentity(std::string_view text, bool under_object, BadObject* out) {
  std::string type;
  IdentitySink sink(under_object, out, &type);
  try {
    // No depth limit: the reader's stack is on the heap. Whatever was read
    // before an error is kept: salvaging is all this is for.
    (void)ReadJson(text, sink, 0);
  } catch (const std::exception&) {
    // Whatever was read before the failure is kept.
  }
  return type;
}

bool JsonEqual(const json::value& a, const json::value& b) {
  std::vector<std::pair<const json::value*, const json::value*>> todo{{&a, &b}};
  while (!todo.empty()) {
    auto [x, y] = todo.back();
    todo.pop_back();
    if (x->is_object() && y->is_object()) {
      if (x->get_object().size() != y->get_object().size()) return false;
      for (const auto& kv : x->get_object()) {
        const json::value* other = y->get_object().if_contains(kv.key());
        if (!other) return false;
        todo.emplace_back(&kv.value(), other);
      }
    } else if (x->is_array() && y->is_array()) {
      const json::array &xa = x->get_array(), &ya = y->get_array();
      if (xa.size() != ya.size()) return false;
      for (size_t i = 0; i < xa.size(); ++i) todo.emplace_back(&xa[i], &ya[i]);
    } else if (x->is_structured() || y->is_structured() || *x != *y) {
      return false;  // different kinds, or different scalars
    }
  }
  return true;
}

bool DeeperThan(const json::value& v, int levels) {
  std::vector<std::pair<const json::value*, int>> todo{{&v, 0}};
  while (!todo.empty()) {
    auto [node, depth] = todo.back();
    todo.pop_back();
    if (!node->is_object() && !node->is_array()) continue;
    if (depth + 1 > levels) return true;
    if (node->is_object()) {
      for (const auto& kv : node->get_object()) todo.emplace_back(&kv.value(), depth + 1);
    } else {
      for (const auto& child : node->get_array()) todo.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

namespace {

// ScanListItems' single pass: a tokenizer that tracks strings, nesting and
// the top-level keys, just enough to find the "items" array and where each
// of its elements begins and ends.
class ItemsScanner {
 public:
  explicit ItemsScanner(std::string_view body) : body_(body) {}

  std::optional<ItemsLayout> Scan() && {
    for (size_t i = 0; i < body_.size(); ++i) {
      if (in_string_) {
        StringByte(i);
      } else if (!std::isspace(static_cast<unsigned char>(body_[i])) && !Token(i)) {
        return std::nullopt;
      }
    }
    if (depth_ != 0 || in_string_ || !found_ || in_items_) return std::nullopt;
    return std::move(out_);
  }

 private:
  static constexpr size_t kNone = std::string_view::npos;

  // Inside a string only its closing quote matters; a top-level key is kept
  // so that the array after `"items":` can be recognised.
  void StringByte(size_t i) {
    const char c = body_[i];
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (key_string_) key_ = body_.substr(string_start_ + 1, i - string_start_ - 1);
    }
  }

  // A byte outside strings, not whitespace. False when a bracket closes more
  // than was opened.
  bool Token(size_t i) {
    const char c = body_[i];
    if (in_items_ && depth_ == 2 && item_start_ == kNone && c != ',' && c != ']') item_start_ = i;
    switch (c) {
      case '"':
        in_string_ = true;
        string_start_ = i;
        key_string_ = depth_ == 1 && expect_key_;
        return true;
      case '{':
      case '[':
        Open(i, c);
        return true;
      case '}':
      case ']':
        return Close(i);
      case ',':
        if (depth_ == 1) expect_key_ = true;
        if (in_items_ && depth_ == 2) EndItem(i);
        return true;
      case ':':
        if (depth_ == 1) expect_key_ = false;
        return true;
      default:
        return true;
    }
  }

  void Open(size_t i, char c) {
    // Only the first "items" of the top-level object counts.
    if (c == '[' && depth_ == 1 && !expect_key_ && key_ == "items" && !found_) {
      in_items_ = found_ = true;
      out_.items_begin = i;
    }
    ++depth_;
    expect_key_ = c == '{' && depth_ == 1;
  }

  bool Close(size_t i) {
    if (--depth_ < 0) return false;
    if (in_items_ && depth_ == 1) {
      EndItem(i);
      in_items_ = false;
      out_.items_end = i + 1;
    }
    return true;
  }

  // The element being read ends before `at`, less trailing whitespace.
  void EndItem(size_t at) {
    if (item_start_ == kNone) return;
    size_t end = at;
    while (end > item_start_ && std::isspace(static_cast<unsigned char>(body_[end - 1]))) --end;
    out_.items.push_back(body_.substr(item_start_, end - item_start_));
    item_start_ = kNone;
  }

  const std::string_view body_;
  ItemsLayout out_;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false, expect_key_ = false, key_string_ = false;
  bool in_items_ = false, found_ = false;
  size_t string_start_ = 0, item_start_ = kNone;
  std::string_view key_;
};

}  // namespace

std::optional<ItemsLayout> ScanListItems(std::string_view body) {
  return ItemsScanner(body).Scan();
}

Result<ListPage> DecodeListPage(std::string_view body, const Transform& transform) {
  auto layout = ScanListItems(body);
  if (!layout) return Status::InvalidArgument("the list body is not JSON with an items array");
  // The envelope without its items: small, parsed as a whole.
  std::string envelope(body.substr(0, layout->items_begin));
  envelope += "[]";
  envelope += body.substr(layout->items_end);
  auto doc = ParseJson(envelope, "the list envelope");
  if (!doc.ok()) return doc.status();
  if (!(*doc)->is_object() || !(*doc)->as_object().contains("items"))
    return Status::InvalidArgument("the list body is not a JSON object with items");
  const json::object* meta = ObjectField(**doc, "metadata");
  ListPage page;
  page.resource_version = StringField(meta, "resourceVersion").value_or("");
  page.continue_token = StringField(meta, "continue").value_or("");
  for (std::string_view item : layout->items) DecodeItem(item, transform, &page);
  return page;
}

Result<WatchEvent> DecodeWatchLine(std::string_view line) {
  WatchEvent event;
  auto doc = ParseJson(line, "watch event", 1);
  const json::object* e = doc.ok() && (*doc)->is_object() ? &(*doc)->as_object() : nullptr;
  const json::value* type = e ? e->if_contains("type") : nullptr;
  const json::value* object = e ? e->if_contains("object") : nullptr;
  if (type && type->is_string() && object && object->is_object()) {
    event.type = type->as_string();
    ObjectPtr inner(*doc, object);
    if (event.type == "ERROR" || event.type == "BOOKMARK") {
      event.object =
          DecodedObject{"", "", "", MetadataString(*object, "resourceVersion"), inner, nullptr};
      return event;
    }
    auto decoded = Identify(inner);
    if (decoded.ok()) {
      event.object = std::move(*decoded);
      return event;
    }
    event.bad = BadObject{};
    event.bad->reason = decoded.status().message();
  } else {
    event.bad = BadObject{};
    event.bad->reason = doc.ok() ? "not a watch event" : doc.status().message();
  }
  const std::string salvaged = SalvageIdentity(line, true, &*event.bad);
  if (event.type.empty()) event.type = salvaged;
  if (event.type.empty()) return Status::InvalidArgument(event.bad->reason);
  return event;
}

}  // namespace fk::kube
