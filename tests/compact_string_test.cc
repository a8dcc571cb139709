// CompactString gives back exactly the bytes it was given, whatever they are,
// and keeps the API server's usual values off the heap.
#include "common/compact_string.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include <string>
#include <utility>
#include <vector>

// Allocations made by this thread through operator new: CompactString's heap
// copies are new[]s. (Replaces the binary's operator new; it only counts.)
thread_local long t_allocations = 0;

void* operator new(std::size_t n) {
  ++t_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// new[] too: a sanitizer's runtime defines it apart from operator new.
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// And the nothrow forms (std::stable_sort's buffer): with a sanitizer's
// runtime they would otherwise allocate where the deletes above do not free.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++t_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return ::operator new(n, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace fk {
namespace {

std::vector<std::string> Samples() {
  return {"",
          "a",
          "12345",
          "exactly-twenty-two-by!",                // the inline limit
          "twenty-three-bytes-long",               // one past it
          "d56ecc1b-5e3d-4000-8000-000000000014",  // a canonical UUID
          "d56ecc1b-5e3d-4000-8000-00000000001a",  // ... and others, each ordered
          "d56ecc1b-5e3d-4000-8000-000000000015",  //     against the rest by their
          "a56ecc1b-5e3d-4000-8000-000000000014",  //     bytes, not their text
          "f56ecc1b-5e3d-4000-8000-000000000014",
          "2026-12-05T07:01:12.684Z",  // a timestamp as fencekeeper writes them
          "2026-12-05T07:01:12.685Z",
          "2025-01-01T00:00:00.000Z",
          "2026-12-05T07:01:12.684z",  // not the template: kept as written
          "2026-12-05T07:01:12,684Z",
          "2026-12-05T07:01:1a.684Z",
          "2026-12-05T07:01:12Z",                   // short enough to be inline
          "D56ECC1B-5E3D-4000-8000-000000000014",   // uppercase: kept as written
          "d56ecc1b-5e3d-4000-8000-00000000001g",   // not hex
          "d56ecc1b_5e3d-4000-8000-000000000014",   // a dash missing
          "d56ecc1b-5e3d-4000-8000-0000000000141",  // one too long
          std::string("nul\0inside-a-long-hostile-annotation", 36),
          std::string(4096, 'x'),
          "\xff\xfe invalid UTF-8 is bytes like any other"};
}

TEST(CompactString, GivesBackExactlyWhatItWasGiven) {
  for (const std::string& s : Samples()) {
    const CompactString c(s);
    EXPECT_EQ(c.str(), s);
    EXPECT_TRUE(c == s);
    EXPECT_EQ(c.empty(), s.empty());
    for (const std::string& other : Samples()) {
      EXPECT_EQ(c == other, s == other) << s << " vs " << other;
      EXPECT_EQ(c == CompactString(other), s == other) << s << " vs " << other;
    }
  }
}

// A map keyed by CompactStrings iterates as one keyed by std::strings would.
TEST(CompactString, OrdersAsTheStringsDo) {
  for (const std::string& a : Samples()) {
    for (const std::string& b : Samples()) {
      EXPECT_EQ(CompactString(a) < CompactString(b), a < b) << a << " vs " << b;
      EXPECT_EQ(CompactString(a) > CompactString(b), a > b) << a << " vs " << b;
    }
  }
}

// What the API server and the journal write most takes no heap at all.
TEST(CompactString, KeepsUuidsAndTimestampsOffTheHeap) {
  for (const char* text : {"exactly-twenty-two-by!", "d56ecc1b-5e3d-4000-8000-000000000014",
                           "2026-12-05T07:01:12.684Z"}) {
    const long before = t_allocations;
    const CompactString c{std::string_view(text)};
    const long after = t_allocations;
    EXPECT_EQ(after, before) << text;
    EXPECT_EQ(c.str(), text);
  }
  // The count can tell: a text of no template takes its copy.
  const long before = t_allocations;
  const CompactString c("2026-12-05T07:01:12.684z");
  EXPECT_EQ(t_allocations, before + 1);
}

TEST(CompactString, CopiesAndMovesKeepTheTextAndOwnItOnce) {
  for (const std::string& s : Samples()) {
    CompactString a(s);
    CompactString b = a;  // copy
    EXPECT_EQ(b.str(), s);
    CompactString c = std::move(a);  // move leaves the source empty
    EXPECT_EQ(c.str(), s);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): defined as empty
    CompactString d("something else entirely, long enough for the heap");
    d = c;  // copy-assign over a heap copy
    EXPECT_EQ(d.str(), s);
    d = CompactString("x");  // move-assign releases what it held
    EXPECT_EQ(d.str(), "x");
    const CompactString& same = d;
    d = same;
    EXPECT_EQ(d.str(), "x");
  }
}

}  // namespace
}  // namespace fk
