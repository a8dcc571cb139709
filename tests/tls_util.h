// Certificates made for a test: a CA, a server certificate for 127.0.0.1
// and a client certificate, as PEM text (OpenSSL, EC P-256).
#pragma once

#include <string>

namespace fk::testing {

struct TestPki {
  std::string ca_cert;
  std::string ca_key;
  std::string server_cert;  // SAN IP:127.0.0.1, DNS:localhost
  std::string server_key;
  std::string client_cert;  // CN=fencekeeper-test, signed by the CA
  std::string client_key;
};

// A fresh PKI; `name` becomes the CA's common name (two calls give CAs that
// do not trust each other's certificates).
TestPki MakeTestPki(const std::string& name = "fencekeeper-test-ca");

}  // namespace fk::testing
