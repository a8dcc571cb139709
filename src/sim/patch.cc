#include "sim/patch.h"

#include <boost/json.hpp>
#include <charconv>
#include <vector>

namespace fk::sim {
namespace json = boost::json;

json::value MergePatch(json::value target, const json::value& patch) {
  if (!patch.is_object()) return patch;
  if (!target.is_object()) target = json::object{};
  json::object& t = target.get_object();
  for (const auto& [key, value] : patch.get_object()) {
    if (value.is_null()) {
      t.erase(key);
    } else {
      json::value current = t.contains(key) ? t.at(key) : json::value(nullptr);
      t[key] = MergePatch(std::move(current), value);
    }
  }
  return target;
}

namespace {

// RFC 6901 JSON pointer split into unescaped tokens.
bool ParsePointer(std::string_view path, std::vector<std::string>* tokens) {
  tokens->clear();
  if (path.empty()) return true;
  if (path[0] != '/') return false;
  size_t pos = 1;
  while (true) {
    size_t next = path.find('/', pos);
    std::string_view raw =
        path.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~') {
        if (i + 1 >= raw.size() || (raw[i + 1] != '0' && raw[i + 1] != '1')) return false;
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    tokens->push_back(std::move(token));
    if (next == std::string_view::npos) return true;
    pos = next + 1;
  }
}

bool ArrayIndex(const std::string& token, size_t size, bool allow_end, size_t* index) {
  if (allow_end && token == "-") {
    *index = size;
    return true;
  }
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), *index);
  if (ec != std::errc() || p != token.data() + token.size()) return false;
  return allow_end ? *index <= size : *index < size;
}

// The value at `tokens` (nullptr if absent).
json::value* Resolve(json::value& doc, const std::vector<std::string>& tokens, size_t count) {
  json::value* cur = &doc;
  for (size_t i = 0; i < count; ++i) {
    if (cur->is_object()) {
      cur = cur->get_object().if_contains(tokens[i]);
    } else if (cur->is_array()) {
      size_t idx = 0;
      if (!ArrayIndex(tokens[i], cur->get_array().size(), false, &idx)) return nullptr;
      cur = &cur->get_array()[idx];
    } else {
      return nullptr;
    }
    if (!cur) return nullptr;
  }
  return cur;
}

bool Fail(JsonPatchError* e, int status, std::string msg) {
  if (e) *e = {status, std::move(msg)};
  return false;
}

bool Remove(json::value& doc, const std::vector<std::string>& tokens, json::value* removed,
            JsonPatchError* err, const std::string& path) {
  if (tokens.empty()) return Fail(err, 422, "cannot remove the whole document");
  json::value* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (!parent) return Fail(err, 422, "path " + path + " does not exist");
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    auto it = parent->get_object().find(last);
    if (it == parent->get_object().end()) return Fail(err, 422, "path " + path + " does not exist");
    if (removed) *removed = it->value();
    parent->get_object().erase(it);
    return true;
  }
  if (parent->is_array()) {
    size_t idx = 0;
    if (!ArrayIndex(last, parent->get_array().size(), false, &idx)) {
      return Fail(err, 422, "path " + path + " does not exist");
    }
    if (removed) *removed = parent->get_array()[idx];
    parent->get_array().erase(parent->get_array().begin() + static_cast<std::ptrdiff_t>(idx));
    return true;
  }
  return Fail(err, 422, "path " + path + " does not exist");
}

bool Add(json::value& doc, const std::vector<std::string>& tokens, json::value value,
         JsonPatchError* err, const std::string& path) {
  if (tokens.empty()) {
    doc = std::move(value);
    return true;
  }
  json::value* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (!parent) return Fail(err, 422, "parent of path " + path + " does not exist");
  if (parent->is_object()) {
    parent->get_object()[tokens.back()] = std::move(value);
    return true;
  }
  if (parent->is_array()) {
    size_t idx = 0;
    auto& arr = parent->get_array();
    if (!ArrayIndex(tokens.back(), arr.size(), true, &idx))
      return Fail(err, 422, "bad array index in " + path);
    arr.insert(arr.begin() + static_cast<std::ptrdiff_t>(idx), std::move(value));
    return true;
  }
  return Fail(err, 422, "parent of path " + path + " is not a container");
}

bool ApplyOps(json::value& doc, const json::value& ops, JsonPatchError* error) {
  if (!ops.is_array()) return Fail(error, 400, "a JSON patch must be an array of operations");
  if (ops.get_array().size() > 10000) return Fail(error, 413, "too many JSON patch operations");
  std::vector<std::string> tokens, from_tokens;
  for (const json::value& op_value : ops.get_array()) {
    if (!op_value.is_object()) return Fail(error, 400, "a JSON patch operation must be an object");
    const json::object& op = op_value.get_object();
    const json::value* name = op.if_contains("op");
    const json::value* path_v = op.if_contains("path");
    if (!name || !name->is_string() || !path_v || !path_v->is_string()) {
      return Fail(error, 400, "a JSON patch operation needs string 'op' and 'path'");
    }
    const std::string kind(name->get_string());
    const std::string path(path_v->get_string());
    if (!ParsePointer(path, &tokens)) return Fail(error, 400, "invalid JSON pointer " + path);
    const json::value* value = op.if_contains("value");
    if (kind == "add" || kind == "replace" || kind == "test") {
      if (!value) return Fail(error, 400, "operation " + kind + " needs a value");
    }
    if (kind == "add") {
      if (!Add(doc, tokens, *value, error, path)) return false;
    } else if (kind == "remove") {
      if (!Remove(doc, tokens, nullptr, error, path)) return false;
    } else if (kind == "replace") {
      json::value* target = Resolve(doc, tokens, tokens.size());
      if (!target) return Fail(error, 422, "path " + path + " does not exist");
      *target = *value;
    } else if (kind == "test") {
      json::value* target = Resolve(doc, tokens, tokens.size());
      if (!target || *target != *value) return Fail(error, 422, "test operation failed at " + path);
    } else if (kind == "move" || kind == "copy") {
      const json::value* from_v = op.if_contains("from");
      if (!from_v || !from_v->is_string() || !ParsePointer(from_v->get_string(), &from_tokens)) {
        return Fail(error, 400, "operation " + kind + " needs a valid 'from'");
      }
      json::value moved;
      if (kind == "move") {
        if (!Remove(doc, from_tokens, &moved, error, std::string(from_v->get_string())))
          return false;
      } else {
        json::value* src = Resolve(doc, from_tokens, from_tokens.size());
        if (!src)
          return Fail(error, 422, "path " + std::string(from_v->get_string()) + " does not exist");
        moved = *src;
      }
      if (!Add(doc, tokens, std::move(moved), error, path)) return false;
    } else {
      return Fail(error, 400, "unknown JSON patch operation '" + kind + "'");
    }
  }
  return true;
}

}  // namespace

std::optional<JsonPatchError> ApplyJsonPatch(json::value& doc, const json::value& ops) {
  JsonPatchError error;
  if (ApplyOps(doc, ops, &error)) return std::nullopt;
  return error;
}

}  // namespace fk::sim
