#include "tls_util.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace fk::testing {
namespace {

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) throw std::runtime_error("EC key generation failed");
  return key;
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) throw std::runtime_error("bad X509 extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

X509* Issue(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, long serial,
            bool ca, const char* san) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 30);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert;
  AddExt(cert, signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  AddExt(cert, signer, NID_key_usage,
         ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
  AddExt(cert, signer, NID_subject_key_identifier, "hash");
  if (!ca) AddExt(cert, signer, NID_ext_key_usage, "serverAuth,clientAuth");
  if (san) AddExt(cert, signer, NID_subject_alt_name, san);
  X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256());
  return cert;
}

}  // namespace

TestPki MakeTestPki(const std::string& name) {
  TestPki pki;
  EVP_PKEY* ca_key = NewKey();
  X509* ca = Issue(name, ca_key, nullptr, nullptr, 1, true, nullptr);
  EVP_PKEY* server_key = NewKey();
  X509* server = Issue("127.0.0.1", server_key, ca, ca_key, 2, false, "IP:127.0.0.1,DNS:localhost");
  EVP_PKEY* client_key = NewKey();
  X509* client = Issue("fencekeeper-test", client_key, ca, ca_key, 3, false, nullptr);
  pki.ca_cert = CertPem(ca);
  pki.ca_key = KeyPem(ca_key);
  pki.server_cert = CertPem(server);
  pki.server_key = KeyPem(server_key);
  pki.client_cert = CertPem(client);
  pki.client_key = KeyPem(client_key);
  for (X509* c : {ca, server, client}) X509_free(c);
  for (EVP_PKEY* k : {ca_key, server_key, client_key}) EVP_PKEY_free(k);
  return pki;
}

}  // namespace fk::testing
