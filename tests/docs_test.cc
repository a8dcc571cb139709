// The repository explains itself: every docs/ path and #anchor that code,
// manifests and docs cite exists (anchors computed from headings as GitHub
// does); no committed file points outside the repository for its design; the
// README's first two commands are the demo and the whole test suite; and the
// audit queries in docs/operations.md run on a journal the demo wrote.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "test_support.h"

namespace fk {
namespace {

namespace fs = std::filesystem;

bool IsFence(const std::string& line) {
  const auto start = line.find_first_not_of(' ');
  return start != std::string::npos &&
         (line.compare(start, 3, "```") == 0 || line.compare(start, 3, "~~~") == 0);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of a Markdown file that are prose, not inside a fenced code block.
std::vector<std::string> ProseLines(const std::string& markdown) {
  std::vector<std::string> prose;
  bool in_code = false;
  for (const std::string& line : Lines(markdown)) {
    if (IsFence(line)) {
      in_code = !in_code;
    } else if (!in_code) {
      prose.push_back(line);
    }
  }
  return prose;
}

// GitHub's heading anchor: lower case, spaces become '-', every character but
// letters, digits, '-' and '_' is dropped.
std::string GithubAnchor(const std::string& heading) {
  std::string anchor;
  for (unsigned char c : heading) {
    if (std::isalnum(c)) {
      anchor += static_cast<char>(std::tolower(c));
    } else if (c == ' ' || c == '-' || c == '_') {
      anchor += c == ' ' ? '-' : static_cast<char>(c);
    }
  }
  return anchor;
}

// Every anchor a Markdown file defines: one per heading (a repeated heading
// gets -1, -2, … as on GitHub), and explicit <a id="…"> / <a name="…">.
std::set<std::string> Anchors(const std::string& markdown) {
  static const std::regex heading(R"(^#{1,6}[ \t]+(.*?)[ \t#]*$)");
  static const std::regex explicit_anchor(R"re(<a (?:id|name)="([^"]+)")re");
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  for (const std::string& line : ProseLines(markdown)) {
    std::smatch m;
    if (std::regex_search(line, m, heading)) {
      const std::string base = GithubAnchor(m[1]);
      const int n = seen[base]++;
      anchors.insert(n == 0 ? base : base + "-" + std::to_string(n));
    }
    for (std::sregex_iterator i(line.begin(), line.end(), explicit_anchor), end; i != end; ++i)
      anchors.insert((*i)[1]);
  }
  return anchors;
}

struct Reference {
  fs::path from;    // the file that cites it
  fs::path target;  // absolute
  std::string anchor;
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The citation starting at text[at] ("docs/….md" or "README.md", then an
// optional #anchor), if there is one; `end` is set past it.
std::optional<std::pair<std::string, std::string>> CitationAt(const std::string& text, size_t at,
                                                              size_t* end) {
  if (at > 0 && (IsWordChar(text[at - 1]) || text[at - 1] == '-')) return std::nullopt;
  size_t i = at;
  while (i < text.size() &&
         (IsWordChar(text[i]) || text[i] == '.' || text[i] == '/' || text[i] == '-'))
    ++i;
  std::string path = text.substr(at, i - at);
  while (!path.empty() && path.back() == '.') path.pop_back();  // a full stop after it
  if (path.size() < 4 || path.compare(path.size() - 3, 3, ".md") != 0) return std::nullopt;
  std::string anchor;
  i = at + path.size();
  if (i < text.size() && text[i] == '#') {
    while (++i < text.size() && (IsWordChar(text[i]) || text[i] == '-')) anchor += text[i];
  }
  *end = i;
  return std::make_pair(path, anchor);
}

// docs/….md and README.md cited anywhere (code comments, manifests, prose),
// relative to the repository root. Plain search, no std::regex: these files
// are large and libstdc++'s regex recurses per character.
void RootReferences(const fs::path& root, const fs::path& file, const std::string& text,
                    std::vector<Reference>* out) {
  for (const char* start : {"docs/", "README.md"}) {
    for (size_t at = text.find(start), end = 0; at != std::string::npos;
         at = text.find(start, std::max(at + 1, end))) {
      if (auto cite = CitationAt(text, at, &end))
        out->push_back({file, root / cite->first, cite->second});
    }
  }
}

// Markdown links [text](path#anchor) in a Markdown file's prose, relative to it.
void MarkdownLinks(const fs::path& file, const std::string& text, std::vector<Reference>* out) {
  static const std::regex link(R"(\]\(([^)\s#]*)(?:#([^)\s]*))?\))");
  for (const std::string& line : ProseLines(text)) {
    for (std::sregex_iterator i(line.begin(), line.end(), link), end; i != end; ++i) {
      const std::string path = (*i)[1];
      if (path.find("://") != std::string::npos || path.rfind("mailto:", 0) == 0) continue;
      const fs::path target = path.empty() ? file : (file.parent_path() / path).lexically_normal();
      out->push_back({file, target, (*i)[2].str()});
    }
  }
}

// The files a link may come from: src/, tests/, deploy/, docs/ and README.md.
std::vector<fs::path> CitingFiles(const fs::path& root) {
  std::vector<fs::path> files{root / "README.md"};
  for (const char* dir : {"src", "tests", "deploy", "docs"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (entry.is_regular_file() && entry.file_size() < (1u << 20)) files.push_back(entry.path());
    }
  }
  return files;
}

// Every cited path and anchor that does not exist, one line each.
std::vector<std::string> BrokenReferences(const fs::path& root) {
  std::vector<Reference> refs;
  for (const fs::path& file : CitingFiles(root)) {
    const std::string text = testing::ReadBytes(file.string());
    RootReferences(root, file, text, &refs);
    if (file.extension() == ".md") MarkdownLinks(file, text, &refs);
  }
  std::vector<std::string> broken;
  std::map<fs::path, std::set<std::string>> anchors;
  for (const Reference& r : refs) {
    const std::string where = r.from.lexically_relative(root).string() + " cites " +
                              r.target.lexically_relative(root).string();
    if (!fs::exists(r.target)) {
      broken.push_back(where + ": no such file");
      continue;
    }
    if (r.anchor.empty() || r.target.extension() != ".md") continue;
    if (!anchors.count(r.target))
      anchors[r.target] = Anchors(testing::ReadBytes(r.target.string()));
    if (!anchors[r.target].count(r.anchor))
      broken.push_back(where + "#" + r.anchor + ": no anchor");
  }
  return broken;
}

const fs::path kRoot = FK_SOURCE_DIR;

TEST(DocsLinks, EveryCitedDocAndAnchorExists) {
  auto broken = BrokenReferences(kRoot);
  std::sort(broken.begin(), broken.end());  // a Markdown link is also a root citation: once each
  broken.erase(std::unique(broken.begin(), broken.end()), broken.end());
  std::string all;
  for (const auto& b : broken) all += b + "\n";
  EXPECT_TRUE(broken.empty()) << all;
}

// Fixture text with "{d}" for the docs folder and "{R}" for the README's
// name, so that the citations below are not citations of this repository.
std::string Fixture(std::string text) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"{d}", "docs"},
                                 std::pair<std::string, std::string>{"{R}", "README"}}) {
    for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  }
  return text;
}

// The checker itself: a tree with good and broken citations of each kind.
TEST(DocsLinks, TheCheckerFindsBrokenPathsAndAnchors) {
  testing::TempDir dir;
  fs::create_directories(dir.path() / "docs");
  fs::create_directories(dir.path() / "src");
  const std::string page = dir.File(Fixture("{d}/a.md"));
  testing::WriteBytes(page,
                      Fixture("# Title\n## Hello, `World` (again)\n```\n# not a heading\n```\n"
                              "## Hello, World again\n## Title\n"
                              "[ok](../{R}.md#readme) [bad](b.md) [here](#title-1)\n"));
  testing::WriteBytes(dir.File(Fixture("{R}.md")), Fixture("# {R}\n[x]({d}/a.md#title-1)\n"));
  testing::WriteBytes(dir.File("src/x.cc"),
                      Fixture("// {d}/a.md#hello-world-again, {d}/a.md#not-a-heading\n"
                              "// {d}/gone.md and {d}/a.md#hello-world-again-2.\n"));
  EXPECT_EQ(
      Anchors(testing::ReadBytes(page)),
      (std::set<std::string>{"title", "hello-world-again", "hello-world-again-1", "title-1"}));
  auto broken = BrokenReferences(dir.path());
  std::sort(broken.begin(), broken.end());
  EXPECT_EQ(broken, (std::vector<std::string>{
                        Fixture("{d}/a.md cites {d}/b.md: no such file"),
                        Fixture("src/x.cc cites {d}/a.md#hello-world-again-2: no anchor"),
                        Fixture("src/x.cc cites {d}/a.md#not-a-heading: no anchor"),
                        Fixture("src/x.cc cites {d}/gone.md: no such file"),
                    }));
}

// What the repository holds: git's list where there is a .git, otherwise the
// tree minus build output.
std::vector<fs::path> CommittedFiles() {
  std::vector<fs::path> files;
  const auto git = testing::RunShell("git -C '" FK_SOURCE_DIR "' ls-files 2>/dev/null");
  if (git.exit_code == 0 && !git.out.empty()) {
    for (const std::string& name : Lines(git.out)) files.push_back(kRoot / name);
    return files;
  }
  for (auto i = fs::recursive_directory_iterator(kRoot); i != fs::recursive_directory_iterator();
       ++i) {
    const std::string name = i->path().filename().string();
    if (i->is_directory() && (name == ".git" || name.rfind("build", 0) == 0)) {
      i.disable_recursion_pending();
    } else if (i->is_regular_file()) {
      files.push_back(i->path());
    }
  }
  return files;
}

// The design document's name in capitals (spelled in pieces so that this file
// does not match itself), followed by a section sign, a quoted section name,
// " row" or ".md".
const std::string kDesignWord = std::string("DESIG") + "N";
bool CitesDesign(const std::string& text) {
  const std::string& word = kDesignWord;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    std::string next = text.substr(at + word.size(), 4);
    if (!next.empty() && next[0] == ' ') next.erase(0, 1);
    if (next.rfind("\xC2\xA7", 0) == 0 || next.rfind("\"", 0) == 0 || next.rfind("row", 0) == 0 ||
        next.rfind(".md", 0) == 0)
      return true;
  }
  return false;
}

TEST(DocsLinks, NothingPointsOutsideTheRepositoryForItsDesign) {
  // Spelled in pieces so that this file does not match itself.
  const std::string outside = std::string("../") + "shared";
  const auto files = CommittedFiles();
  ASSERT_GT(files.size(), 100u);
  for (const fs::path& file : files) {
    if (!fs::is_regular_file(file) || fs::file_size(file) > (1u << 20)) continue;
    const std::string text = testing::ReadBytes(file.string());
    EXPECT_EQ(text.find(outside), std::string::npos) << file << " points at " << outside;
    EXPECT_FALSE(CitesDesign(text))
        << file << " cites a DESIGN section that is not in the repository: cite docs/ instead";
  }
  EXPECT_TRUE(CitesDesign("see " + kDesignWord +
                          " \xC2\xA7"
                          "4"));
  EXPECT_TRUE(CitesDesign("(" + kDesignWord + " \"Events\")"));
  EXPECT_TRUE(CitesDesign(kDesignWord + " row 1a"));
  EXPECT_FALSE(CitesDesign("the " + kDesignWord + " of it"));
}

// The commands of the first fenced block of README.md, comments dropped.
std::vector<std::string> FirstReadmeCommands() {
  std::vector<std::string> commands;
  bool in_code = false;
  for (const std::string& line : Lines(testing::ReadBytes((kRoot / "README.md").string()))) {
    if (IsFence(line)) {
      if (in_code) break;
      in_code = true;
      continue;
    }
    if (!in_code) continue;
    std::string command = line.substr(0, line.find('#'));
    command.erase(command.find_last_not_of(" \t") + 1);
    if (!command.empty()) commands.push_back(command);
  }
  return commands;
}

TEST(DocsReadme, FirstTwoCommandsAreTheDemoAndTheTestSuite) {
  const auto commands = FirstReadmeCommands();
  ASSERT_GE(commands.size(), 2u);
  EXPECT_EQ(commands[0], "bash .ci/build demo");
  EXPECT_EQ(commands[1], "bash .ci/build test");
  // And the script still takes both modes.
  const std::string script = testing::ReadBytes((kRoot / ".ci/build").string());
  EXPECT_TRUE(std::regex_search(script, std::regex(R"(\n\s*demo\)\s)"))) << script;
  EXPECT_TRUE(std::regex_search(script, std::regex(R"(\n\s*test\)\s)"))) << script;
}

// The ```sql blocks of a Markdown file.
std::vector<std::string> SqlBlocks(const std::string& markdown) {
  std::vector<std::string> blocks;
  bool in_sql = false, in_code = false;
  for (const std::string& line : Lines(markdown)) {
    if (IsFence(line)) {
      in_sql = !in_code && line.find("```sql") != std::string::npos;
      if (in_sql) blocks.emplace_back();
      in_code = !in_code;
    } else if (in_sql) {
      blocks.back() += line + "\n";
    }
  }
  return blocks;
}

// Runs every statement of `sql` read-only; the rows of all of them, or -1
// with the error in `error`.
int CountRows(const std::string& journal, const std::string& sql, std::string* error) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(journal.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  int rows = 0;
  const char* next = sql.c_str();
  while (rows >= 0 && next && *next) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, next, -1, &stmt, &next) != SQLITE_OK) {
      *error = sqlite3_errmsg(db);
      rows = -1;
      break;
    }
    if (!stmt) break;  // only comments or white space left
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) ++rows;
    if (rc != SQLITE_DONE) {
      *error = sqlite3_errmsg(db);
      rows = -1;
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return rows;
}

// Each documented query on the journal of the demo (the incident: 3
// transitions, 10 sandboxes held): it runs, and returns rows unless it says
// when it is empty.
TEST(DocsOperations, AuditQueriesRunOnTheDemoJournal) {
  testing::TempDir dir;
  std::ostringstream out, err;
  cli::DemoOptions demo;
  demo.directory = dir.path().string();
  demo.passes = 3;
  demo.bypass_act = false;  // the incident alone: the documented figures are its
  ASSERT_EQ(cli::RunDemo(demo, out, err), cli::kExitOk) << err.str();
  const std::string journal = dir.File("journal.db");

  const auto blocks = SqlBlocks(testing::ReadBytes((kRoot / "docs/operations.md").string()));
  ASSERT_GE(blocks.size(), 6u);
  for (const std::string& sql : blocks) {
    std::string error;
    const int rows = CountRows(journal, sql, &error);
    EXPECT_GE(rows, 0) << sql << error;
    if (sql.find("-- empty") == std::string::npos) {
      EXPECT_GT(rows, 0) << sql;
    }
  }
  std::string error;
  EXPECT_EQ(CountRows(journal, blocks[0], &error), 3) << "every transition: " << blocks[0];
}

}  // namespace
}  // namespace fk
