// Fuzzing's findings, kept (docs/fuzzing.md). Two kinds of test:
//  - every saved input (tests/fuzz/regressions/<target>/, and the seed corpus
//    tests/fuzz/corpus/<target>/) replayed through the fuzz target's own entry
//    point, compiled into this binary under another name: its FUZZ_CHECKs hold
//    in every build, and the ASan/UBSan build of CI checks memory and UB too;
//  - the behaviour each crash broke, stated as a plain expectation, so the
//    plain build fails without the fix as well.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/duration.h"
#include "kube/api_status.h"
#include "sim/scenario.h"
#include "test_support.h"

// The targets' LLVMFuzzerTestOneInput, renamed by tests/CMakeLists.txt.
#define FK_FUZZ_TARGETS(X) \
  X(sandbox_json)          \
  X(policy_json)           \
  X(pod_json)              \
  X(api_status)            \
  X(kubeconfig) X(duration) X(selector) X(scenario) X(codec) X(list_page) X(watch_line)
#define FK_DECLARE(name) extern "C" int FuzzOne_##name(const uint8_t* data, size_t size);
FK_FUZZ_TARGETS(FK_DECLARE)
#undef FK_DECLARE

namespace fk {
namespace {
namespace fs = std::filesystem;
using EntryPoint = int (*)(const uint8_t*, size_t);

const std::map<std::string, EntryPoint>& EntryPoints() {
#define FK_ENTRY(name) {#name, &FuzzOne_##name},
  static const std::map<std::string, EntryPoint> kEntryPoints{FK_FUZZ_TARGETS(FK_ENTRY)};
#undef FK_ENTRY
  return kEntryPoints;
}

const fs::path kFuzzDir = fs::path(FK_SOURCE_DIR) / "tests" / "fuzz";

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  return files;
}

// Every NAME_fuzz.cc is in the table above (so its inputs are replayed here),
// and every saved input belongs to a known target.
TEST(FuzzRegressions, EveryTargetIsReplayed) {
  for (const auto& file : FilesIn(kFuzzDir)) {
    const std::string name = file.filename().string();
    const std::string suffix = "_fuzz.cc";
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix)
      continue;
    EXPECT_TRUE(EntryPoints().count(name.substr(0, name.size() - suffix.size()))) << name;
  }
  for (const char* kind : {"corpus", "regressions"}) {
    for (const auto& dir : fs::directory_iterator(kFuzzDir / kind)) {
      EXPECT_TRUE(EntryPoints().count(dir.path().filename().string())) << dir.path();
    }
  }
}

TEST(FuzzRegressions, SavedInputsAndSeedsPassTheirTargets) {
  int replayed = 0;
  for (const auto& [target, entry] : EntryPoints()) {
    for (const char* kind : {"corpus", "regressions"}) {
      for (const auto& file : FilesIn(kFuzzDir / kind / target)) {
        SCOPED_TRACE(file.string());
        const std::string input = testing::ReadBytes(file.string());
        EXPECT_EQ(entry(reinterpret_cast<const uint8_t*>(input.data()), input.size()), 0);
        ++replayed;
      }
    }
  }
  EXPECT_GT(replayed, 50);  // the corpus is there, not an empty glob
}

// duration: "0ns0111…1ns0ns" summed to 1e75 ms, and the cast to int64 was
// undefined; on x86 it produced INT64_MIN, a negative --resync. A duration
// beyond what milliseconds can hold is now rejected.
TEST(FuzzRegressions, DurationBeyondInt64IsRejected) {
  for (const auto& file : FilesIn(kFuzzDir / "regressions" / "duration")) {
    EXPECT_EQ(ParseDuration(testing::ReadBytes(file.string())), std::nullopt) << file;
  }
  EXPECT_EQ(ParseDuration("9223372036854775807h"), std::nullopt);
  EXPECT_EQ(ParseDuration(std::string(300, '9') + "h"), std::nullopt);
  EXPECT_EQ(ParseDuration("2562047788016h"), std::nullopt);  // just past int64 ms
  EXPECT_EQ(ParseDuration("2562047788h"), std::chrono::milliseconds(2562047788LL * 3'600'000));
}

// api_status: a Status body's int64 code and retryAfterSeconds were narrowed
// to int: a watch ERROR event with code 4294967706 read as 410 (a relist), and
// retryAfterSeconds 2^63-1 as -1, a negative wait. A code that is not an HTTP
// status is ignored; a negative Retry-After is dropped, a huge one clamped.
TEST(FuzzRegressions, StatusNumbersAreNotNarrowed) {
  for (const auto& file : FilesIn(kFuzzDir / "regressions" / "api_status")) {
    std::string body = testing::ReadBytes(file.string()).substr(1);  // byte 0 picks the status
    const kube::ApiError watch_error = kube::DecodeStatus(200, body);
    EXPECT_NE(watch_error.code, 410) << file;
    const kube::ApiError throttled = kube::DecodeStatus(429, body);
    EXPECT_TRUE(!throttled.retry_after_seconds || *throttled.retry_after_seconds >= 0) << file;
  }
  const auto huge = kube::DecodeStatus(
      429, R"({"kind":"Status","code":429,"details":{"retryAfterSeconds":4294967296000}})");
  ASSERT_TRUE(huge.retry_after_seconds.has_value());
  EXPECT_EQ(*huge.retry_after_seconds, std::numeric_limits<int>::max());
  const auto negative =
      kube::DecodeStatus(429, R"({"kind":"Status","code":429,"details":{"retryAfterSeconds":-5}})");
  EXPECT_FALSE(negative.retry_after_seconds.has_value());
  const auto gone = kube::DecodeStatus(200, R"({"kind":"Status","code":410,"reason":"Expired"})");
  EXPECT_EQ(gone.kind, kube::ApiErrorKind::kExpired);
}

// scenario: each of these hung or crashed `fencekeeper sim --scenario FILE`
// (and the fuzz target): a fence generation of 2e9 meant 2e9 policy edits; a
// boundary port of INT_MAX overflowed computing the altered port; an alias
// inside its own anchor recursed until the stack ran out; aliases of aliases
// expanded to 1e9 nodes. Each is now a clear error naming the problem.
TEST(FuzzRegressions, HostileScenariosAreErrors) {
  const std::map<std::string, std::string> expected = {
      {"fence-generation-2e9", "generation"},
      {"boundary-port-int-max", "boundaryPort"},
      {"self-alias", "nested"},
      {"alias-expansion-1e9", "nodes"},
  };
  const auto files = FilesIn(kFuzzDir / "regressions" / "scenario");
  EXPECT_EQ(files.size(), expected.size());
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    auto scenario = sim::ParseScenario(testing::ReadBytes(file.string()), name);
    if (scenario.ok() || !expected.count(name)) {
      ADD_FAILURE() << name << ": accepted, or not in the table";
      continue;
    }
    EXPECT_NE(scenario.status().message().find(expected.at(name)), std::string::npos)
        << scenario.status().message();
  }
  // The limits leave room for every scenario a test writes.
  auto fine = sim::ParseScenario(
      "namespaces:\n  - name: a\n    fence: {boundaryPort: 65535, generation: 1000}\n", "fine");
  EXPECT_TRUE(fine.ok()) << fine.status().ToString();
}

}  // namespace
}  // namespace fk
