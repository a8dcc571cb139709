// `replay --html FILE`: one self-contained page for a post-mortem. The rows
// travel as JSON inside the page for the swimlane script (replay_page.cc);
// the header, legend and table are written here, HTML-escaped. Journal text
// is hostile input (names, notes, API error details): it is escaped for the
// context it lands in, and nothing on the page refers outside the file.
#include <boost/json.hpp>
#include <map>
#include <set>
#include <sstream>

#include "cli/replay_describe.h"
#include "cli/replay_output.h"
#include "cli/replay_page.h"
#include "common/version.h"

namespace fk::cli {
namespace json = boost::json;
using namespace fk::domain;

namespace {

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON that cannot end its <script> element or open a comment: '<', '>' and
// '&' only occur inside JSON strings, where their \u escapes mean the same.
// U+2028/2029 are escaped as well, for older script parsers.
std::string ScriptSafe(const std::string& json) {
  std::string out;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (json.compare(i, 3, "\xE2\x80\xA8") == 0)
      out += "\\u2028", i += 2;
    else if (json.compare(i, 3, "\xE2\x80\xA9") == 0)
      out += "\\u2029", i += 2;
    else
      out += c;
  }
  return out;
}

void AddKindFields(const Event& e, json::object& r) {
  if (const auto* f = std::get_if<FenceObserved>(&e.body)) {
    r["present"] = f->observation.present;
    r["gen"] = f->observation.generation;
    r["intact"] = f->observation.intact;
  } else if (const auto* o = std::get_if<SandboxObserved>(&e.body)) {
    r["mode"] = o->snapshot.sandbox.should_run ? "running" : "suspended";
  } else if (const auto* d = std::get_if<Decided>(&e.body)) {
    r["verdict"] = ToString(d->decision.verdict);
  } else if (const auto* c = std::get_if<SuspendOutcome>(&e.body)) {
    r["outcome"] = ToString(c->outcome);
  } else if (const auto* l = std::get_if<Leadership>(&e.body)) {
    r["state"] = l->state;
    r["identity"] = l->identity;
  }
}

std::string RowsJson(const ReplayReport& r) {
  json::array rows;
  for (const auto& e : r.rows) {
    json::object row{{"seq", e.seq},     {"t", e.recorded_at}, {"kind", ToString(e.kind())},
                     {"ns", e.ns},       {"name", e.name},     {"uid", e.uid},
                     {"ref", e.ref_seq}, {"text", Describe(e)}};
    AddKindFields(e, row);
    rows.push_back(std::move(row));
  }
  return ScriptSafe(json::serialize(json::object{{"rows", std::move(rows)}}));
}

std::string Chip(const std::string& text, const char* cls = "") {
  return std::string("<span class=\"chip ") + cls + "\">" + text + "</span>";
}

std::string Chips(const ReplayReport& r, const CheckResult& check) {
  std::set<std::string> sandboxes;
  std::map<std::string, int> kinds;
  for (const auto& e : r.rows) {
    ++kinds[e.kind() == EventKind::kSuspendOutcome
                ? ToString(std::get<SuspendOutcome>(e.body).outcome)
                : ToString(e.kind())];
    if (e.kind() != EventKind::kFenceObserved && e.kind() != EventKind::kLeadership)
      sandboxes.insert(Subject(e));
  }
  auto n = [&](const char* k) { return "<b>" + std::to_string(kinds[k]) + "</b> "; };
  std::string s = Chip("<b>" + std::to_string(sandboxes.size()) + "</b> sandboxes") +
                  Chip(n("fence_observed") + "fence observations") +
                  Chip(n("suspend_intent") + "suspend intents") +
                  Chip(n("applied") + "applied", kinds["applied"] ? "alert" : "") +
                  Chip(n("conflict") + "conflict") + Chip(n("failed") + "failed") +
                  Chip(n("superseded") + "superseded");
  if (check.checker) {
    const size_t d = check.checker->divergence_count();
    s += Chip("check: <b>" + std::to_string(d) + "</b> divergence(s), integrity " +
                  Escape(check.integrity),
              d ? "alert" : "ok");
  }
  return s;
}

std::string Filters(const ReplayOptions& o) {
  std::string f;
  for (const auto& s : o.sandboxes) f += " --sandbox " + s;
  for (const auto& s : o.namespaces) f += " --namespace " + s;
  if (o.since) f += " --since " + *o.since;
  if (o.until) f += " --until " + *o.until;
  return f.empty() ? "none" : Escape(f.substr(1));
}

}  // namespace

namespace {

constexpr const char* kVisualLegend =
    R"html(<div class="legend">
<span><i class="sw band" style="background:#d6e4f5"></i>fence generation</span>
<span><i class="sw band" style="background:#f6c6c6"></i>fence altered</span>
<span><i class="sw band" style="background:#dcd3f3"></i>leader term</span>
<span><i class="sw" style="border:1.5px solid #6b7483"></i>observed running</span>
<span><i class="sw" style="background:#6b7483"></i>observed suspended</span>
<span><i class="sw" style="background:var(--healthy)"></i>healthy</span>
<span><i class="sw" style="background:var(--admitting)"></i>admitting</span>
<span><i class="sw sq" style="background:var(--hold)"></i>hold</span>
<span><i class="sw sq" style="background:var(--suspend);transform:rotate(45deg) scale(.85)"></i>suspend</span>
<span><i class="sw tri"></i>suspend intent</span>
<span><i class="sw sq" style="background:var(--applied)"></i>applied</span>
<span><i class="sw sq" style="background:var(--conflict)"></i>conflict</span>
<span><i class="sw sq" style="background:var(--failed)"></i>failed</span>
<span><i class="sw sq" style="background:var(--superseded)"></i>superseded</span>
<span>lane shading: the latest verdict &middot; x: journal rows in order (seq), ticks show when they were recorded &middot; hover a mark for its row, click to find it in the table</span>
</div>
)html";

void Table(const ReplayReport& r, std::ostream& out) {
  out << "<h2>Journal rows</h2>\n<table id=\"fk-rows\"><thead><tr><th>seq</th><th>time</th>"
         "<th>event</th><th>subject</th><th>uid</th><th>details</th></tr></thead><tbody>\n";
  for (const auto& e : r.rows) {
    const char* kind = ToString(e.kind());
    out << "<tr id=\"row-" << e.seq << "\" data-row=\"" << e.seq << "\" data-kind=\"" << kind
        << "\" class=\"k-" << kind << "\"><td class=\"num\">" << e.seq << "</td><td class=\"mono\">"
        << Escape(e.recorded_at) << "</td><td><span class=\"kind\">" << kind << "</span></td><td>"
        << Escape(Subject(e)) << "</td><td class=\"mono\" title=\"" << Escape(e.uid) << "\">"
        << Escape(ShortUid(e.uid)) << "</td><td class=\"details\">" << Escape(Describe(e))
        << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
}

void Glossary(std::ostream& out) {
  out << "<h2>Legend of the details column</h2>\n<dl class=\"glossary\">\n";
  for (const auto& l : Legend())
    out << "<dt>" << Escape(l.term) << "</dt><dd>" << Escape(l.meaning) << "</dd>\n";
  out << "</dl>\n";
}

void Header(const ReplayReport& r, const ReplayOptions& o, const CheckResult& check,
            std::ostream& out) {
  out << "<h1>fencekeeper replay</h1>\n<p class=\"meta\">journal <code>" << Escape(r.journal)
      << "</code> &middot; schema " << r.schema_version << " &middot; " << r.rows.size() << " of "
      << r.journal_rows << " rows";
  if (!r.rows.empty()) {
    out << " (seq " << r.rows.front().seq << "&ndash;" << r.rows.back().seq << ", "
        << Escape(r.rows.front().recorded_at) << " to " << Escape(r.rows.back().recorded_at) << ")";
  }
  out << " &middot; filters: " << Filters(o) << " &middot; " << Escape(VersionLine())
      << "</p>\n<div class=\"chips\">" << Chips(r, check) << "</div>\n";
}

}  // namespace

std::string RenderReplayHtml(const ReplayReport& r, const ReplayOptions& o,
                             const CheckResult& check) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>fencekeeper replay: " << Escape(r.journal) << "</title>\n<style>" << kReplayPageCss
      << "</style></head>\n<body>\n";
  Header(r, o, check, out);
  out << kVisualLegend
      << "<div id=\"fk-timeline\"><svg id=\"fk-lanes\" "
         "role=\"img\" aria-label=\"swimlane timeline\"></svg></div>\n"
      << "<noscript><p>The timeline needs JavaScript; the table below does not.</p></noscript>\n";
  Table(r, out);
  Glossary(out);
  out << "<script type=\"application/json\" id=\"fk-data\">" << RowsJson(r) << "</script>\n"
      << "<script>" << kReplayPageJs << "</script>\n</body></html>\n";
  return out.str();
}

}  // namespace fk::cli
