#include "cli/replay_flags.h"

#include <CLI/CLI.hpp>

namespace fk::cli {

namespace {

constexpr const char* kBoundHelp =
    ": a seq (42; one journal only), an RFC 3339 time (2026-12-01T10:00:00Z), or a duration "
    "(15m) meaning that long before the (latest) last row";

constexpr const char* kFooter =
    "Rows shown: those of the named sandboxes and namespaces (all without --sandbox and "
    "--namespace), plus, for context, the fence rows of their namespaces and every leadership "
    "row; within --since/--until.\n"
    "Several --journal (the replicas' journals, archive files): one timeline in time order, "
    "each row naming its journal and writer; --check checks each journal on its own.\n"
    "Exit codes: 0 done; 1 --check found a divergence; 2 usage error or a journal that cannot "
    "be used; 3 the filters match no row (an unknown sandbox or namespace, an empty window).";

}  // namespace

CLI::App* AddReplayCommand(CLI::App& app, ReplayOptions& options) {
  auto* r = app.add_subcommand(
      "replay", "Print the journal as a timeline (or an HTML page); --check re-runs decide()");
  r->footer(kFooter);
  r->add_option("--journal", options.journals,
                "Journal or archive file; repeat it to merge several into one timeline")
      ->required();
  r->add_option("--sandbox", options.sandboxes, "Only this sandbox, NAMESPACE/NAME (repeatable)")
      ->type_name("NS/NAME");
  r->add_option("--namespace", options.namespaces, "Only this namespace (repeatable)")
      ->type_name("NS");
  r->add_option_function<std::string>(
       "--since", [&options](const std::string& v) { options.since = v; },
       std::string("First row to show") + kBoundHelp)
      ->type_name("WHEN");
  r->add_option_function<std::string>(
       "--until", [&options](const std::string& v) { options.until = v; },
       std::string("Last row to replay; the state printed is the state then") + kBoundHelp)
      ->type_name("WHEN");
  auto* check = r->add_flag("--check", options.check,
                            "Re-run decide() on every recorded observation and check the journal; "
                            "print the verdict line (the divergences on stderr), exit 1 on one. "
                            "Replay without --check for the timeline");
  r->add_flag("--quiet,-q", options.quiet,
              "With --check: the verdict line only (what --check prints anyway; kept for scripts)")
      ->needs(check);
  auto* format = r->add_option_function<std::string>(
                      "--format", [&options](const std::string& v) { options.json = v == "json"; },
                      "text or json")
                     ->check(CLI::IsMember({"text", "json"}));
  auto* html = r->add_option_function<std::string>(
                    "--html", [&options](const std::string& v) { options.html = v; },
                    "Write a self-contained HTML page (swimlane timeline and table) to this "
                    "file; an existing file is refused without --force")
                   ->type_name("FILE")
                   ->excludes(format);
  r->add_flag("--force", options.force, "With --html: replace the file if it exists")->needs(html);
  return r;
}

}  // namespace fk::cli
