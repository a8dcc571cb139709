// Journal helpers for GoogleTest tests (test_support.h serves the benchmarks too).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "journal/journal.h"

namespace fk::testing {

// Opens (creating) the journal at `path` on `clock`; a failure fails the
// test and returns null.
inline std::unique_ptr<journal::Journal> OpenJournal(const std::string& path,
                                                     const TimeSource* clock,
                                                     journal::OpenOptions options = {}) {
  options.clock = clock;
  auto j = journal::Journal::Open(path, options);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? std::move(*j) : nullptr;
}

}  // namespace fk::testing
