// Kubeconfig YAML: LoadKubeconfig reads a file, so each input is written to
// one in a private temporary directory (relative certificate paths resolve
// there and find nothing). An accepted config names an http(s) server; the
// *-data fields' base64 decoder is fed the raw input as well.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "fuzz_support.h"
#include "kube/config.h"

namespace {

const std::string& KubeconfigPath() {
  static const std::string path = [] {
    char dir[] = "/tmp/fk-fuzz-kubeconfig-XXXXXX";
    FUZZ_CHECK(mkdtemp(dir) != nullptr);
    return std::string(dir) + "/config";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fk::fuzz::AsText(data, size));
  (void)fk::kube::DecodeBase64(text);
  {
    std::ofstream out(KubeconfigPath(), std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    FUZZ_CHECK(out.good());
  }
  auto config = fk::kube::LoadKubeconfig(KubeconfigPath());
  if (config.ok()) {
    FUZZ_CHECK(config->server.rfind("http://", 0) == 0 || config->server.rfind("https://", 0) == 0);
  }
  return 0;
}
