// The journal's writer lock (src/journal/writer_lock.h): exclusive across
// open file descriptions, this process's own included; kept when other
// descriptors of the files are opened and closed (what a POSIX fcntl lock
// would not survive); released with its owner; holder details read back.
#include "journal/writer_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <regex>

#include "cli/commands.h"
#include "common/host_name.h"
#include "journal/journal.h"
#include "test_support.h"

namespace fk::journal {
namespace {

class WriterLockTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  const std::string journal_ = dir_.File("j.db");
};

TEST_F(WriterLockTest, ASecondAcquireIsRefusedWhileHeldEvenFromTheSameProcess) {
  auto held = WriterLock::Acquire(journal_, "first-writer");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  auto second = WriterLock::Acquire(journal_, "second-writer");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kBusy);
  const std::string& m = second.status().message();
  for (const std::string& names :
       {journal_, "host " + HostName(), "pid " + std::to_string(::getpid()),
        std::string("writer first-writer")}) {
    EXPECT_NE(m.find(names), std::string::npos) << names << " in " << m;
  }
  EXPECT_TRUE(std::regex_search(m, std::regex(R"(since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << m;
  EXPECT_FALSE(std::filesystem::exists(journal_)) << "the lock comes before the journal";
  // The holder never noticed: its details are still its own.
  ASSERT_TRUE(WriterLock::ReadHolder(journal_).has_value());
  EXPECT_EQ(WriterLock::ReadHolder(journal_)->writer, "first-writer");
}

TEST_F(WriterLockTest, IsReleasedWhenDestroyed) {
  auto first = WriterLock::Acquire(journal_, "first");
  ASSERT_TRUE(first.ok());
  first->reset();  // destroys the lock
  auto second = WriterLock::Acquire(journal_, "second");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(WriterLock::ReadHolder(journal_)->writer, "second");
}

// SQLite's warning: a POSIX fcntl lock is dropped when any descriptor of the
// file in the process is closed. Here the journal is opened and closed
// through SQLite, and the lock file through a plain descriptor; another
// process (the real binary's `migrate`) is still refused.
TEST_F(WriterLockTest, SurvivesOtherDescriptorsOfTheFilesBeingClosed) {
  auto held = WriterLock::Acquire(journal_, "holder");
  ASSERT_TRUE(held.ok());
  { ASSERT_TRUE(Journal::Open(journal_).ok()); }
  { SQLite::Database reader(journal_, SQLite::OPEN_READONLY); }
  const int fd = ::open(WriterLock::LockPath(journal_).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const testing::CommandResult other =
      testing::RunShell(std::string(FK_BINARY) + " migrate --journal " + journal_ + " 2>&1");
  EXPECT_EQ(other.exit_code, cli::kExitUnusable) << other.out;
  EXPECT_NE(other.out.find("writer holder"), std::string::npos) << other.out;
}

TEST_F(WriterLockTest, HolderDetailsReadBackAndAStaleFileMeansNothing) {
  // What a holder killed with SIGKILL leaves behind: details, but no lock.
  testing::WriteBytes(WriterLock::HolderPath(journal_),
                      R"({"host":"gone","pid":1,"writer":"dead","since":"2020-01-01T00:00:00Z"})");
  EXPECT_EQ(WriterLock::ReadHolder(journal_)->writer, "dead");
  {
    auto held = WriterLock::Acquire(journal_, "abc123");
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    const std::optional<WriterHolder> h = WriterLock::ReadHolder(journal_);
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->host, HostName());
    EXPECT_EQ(h->pid, ::getpid());
    EXPECT_EQ(h->writer, "abc123");
    EXPECT_TRUE(std::regex_match(h->since, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << h->since;
  }
  EXPECT_FALSE(WriterLock::ReadHolder(journal_).has_value()) << "a released lock names no holder";
}

TEST_F(WriterLockTest, ASymlinkToTheJournalSharesItsLock) {
  { ASSERT_TRUE(Journal::Open(journal_).ok()); }
  std::filesystem::create_symlink(journal_, dir_.File("link.db"));
  auto held = WriterLock::Acquire(journal_, "holder");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(WriterLock::Acquire(dir_.File("link.db"), "other").status().code(), Code::kBusy);
}

TEST_F(WriterLockTest, AMissingDirectoryIsNamed) {
  const std::string journal = dir_.File("missing/j.db");
  auto lock = WriterLock::Acquire(journal, "w");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().code(), Code::kIOError);
  EXPECT_NE(lock.status().message().find(journal), std::string::npos);
  EXPECT_NE(lock.status().message().find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace fk::journal
