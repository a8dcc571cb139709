#include "journal/chain.h"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

namespace fk::journal::chain {
namespace {

void AppendField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

}  // namespace

std::string Canonical(std::string_view prev, const RowText& row) {
  std::string out;
  out.reserve(prev.size() + row.body.size() + row.base.size() + 128);
  out += prev;
  out += '|';
  out += std::to_string(row.seq);
  out += '|';
  out += std::to_string(row.at_ms);
  out += '|';
  out += std::to_string(row.kind);
  out += '|';
  if (row.ref) out += std::to_string(*row.ref);
  out += '|';
  AppendField(out, row.ns);
  AppendField(out, row.name);
  AppendField(out, row.uid);
  AppendField(out, row.base);
  AppendField(out, row.body);
  return out;
}

std::string HexToBytes(std::string_view hex) {
  const auto digit = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::string bytes(hex.size() / 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(digit(hex[2 * i]) * 16 + digit(hex[2 * i + 1]));
  return bytes;
}

std::string HexSql(std::string_view column) {
  const std::string c(column);
  return "CASE typeof(" + c + ") WHEN 'blob' THEN lower(hex(" + c + ")) ELSE " + c + " END";
}

std::string Sha3Hex(std::string_view text) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha3_256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), text.data(), text.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1)
    throw std::runtime_error("SHA3-256 is unavailable (OpenSSL)");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(static_cast<size_t>(size) * 2);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace fk::journal::chain
