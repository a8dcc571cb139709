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

// A colour per journal, for its lanes' marks and the legend (cycled past six).
constexpr const char* kJournalColours[] = {"#1f5fa8", "#c2410c", "#15803d",
                                           "#7e22ce", "#be185d", "#4d7c0f"};
std::string JournalColour(size_t j) {
  return kJournalColours[j % (sizeof kJournalColours / sizeof *kJournalColours)];
}

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

// What a row's mark prints beside it on the timeline: its reason (or
// outcome) and its note.
void AddReasonAndNote(const Event& e, json::object& r) {
  if (const auto* d = std::get_if<Decided>(&e.body)) {
    if (d->decision.reason != Reason::kNone) r["reason"] = ToString(d->decision.reason);
    r["note"] = d->decision.note.view();
  } else if (const auto* i = std::get_if<SuspendIntent>(&e.body)) {
    r["reason"] = ToString(i->reason);
    r["note"] = i->note;
  } else if (const auto* c = std::get_if<SuspendOutcome>(&e.body)) {
    r["note"] = c->detail;
  } else if (const auto* g = std::get_if<Forgotten>(&e.body)) {
    r["note"] = g->detail;
  }
}

// The key that names a row on the page: its seq, or with several journals
// "JOURNAL-SEQ" (seqs repeat across journals).
std::string RowKey(const Timeline& t, const TimelineRow& row) {
  const std::string seq = std::to_string(row.event->seq);
  return t.merged() ? std::to_string(row.journal) + "-" + seq : seq;
}

std::string RowsJson(const Timeline& t) {
  json::array rows, journals;
  for (const auto& row : t.rows) {
    const Event& e = *row.event;
    json::object r{{"key", RowKey(t, row)},
                   {"seq", e.seq},
                   {"t", e.recorded_at},
                   {"ms", row.ms},
                   {"j", row.journal},
                   {"w", ShortWriter(row.writer)},
                   {"kind", ToString(e.kind())},
                   {"ns", e.ns},
                   {"name", e.name},
                   {"uid", e.uid},
                   {"ref", e.ref_seq},
                   {"text", Describe(e)}};
    AddKindFields(e, r);
    AddReasonAndNote(e, r);
    rows.push_back(std::move(r));
  }
  for (size_t j = 0; j < t.journals.size(); ++j)
    journals.push_back({{"label", t.journals[j].label},
                        {"path", t.journals[j].path},
                        {"colour", JournalColour(j)}});
  return ScriptSafe(json::serialize(json::object{
      {"merged", t.merged()}, {"journals", std::move(journals)}, {"rows", std::move(rows)}}));
}

std::string Chip(const std::string& text, const char* cls = "") {
  return std::string("<span class=\"chip ") + cls + "\">" + text + "</span>";
}

std::string Chips(const Timeline& t) {
  std::set<std::string> sandboxes;
  std::map<std::string, int> kinds;
  for (const auto& row : t.rows) {
    const Event& e = *row.event;
    ++kinds[e.kind() == EventKind::kSuspendOutcome
                ? ToString(std::get<SuspendOutcome>(e.body).outcome)
                : ToString(e.kind())];
    if (AboutASandbox(e.kind())) sandboxes.insert(Subject(e));
  }
  auto n = [&](const char* k) { return "<b>" + std::to_string(kinds[k]) + "</b> "; };
  std::string s = Chip("<b>" + std::to_string(sandboxes.size()) + "</b> sandboxes") +
                  Chip(n("fence_observed") + "fence observations") +
                  Chip(n("suspend_intent") + "suspend intents") +
                  Chip(n("applied") + "applied", kinds["applied"] ? "alert" : "") +
                  Chip(n("conflict") + "conflict") + Chip(n("failed") + "failed") +
                  Chip(n("superseded") + "superseded");
  for (const auto& j : t.journals) {
    if (!j.check.checker) continue;
    const size_t d = j.check.checker->divergence_count();
    s += Chip((t.merged() ? Escape(j.label) + " " : std::string()) + "check: <b>" +
                  std::to_string(d) + "</b> divergence(s), integrity " + Escape(j.check.integrity),
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

constexpr const char* kVisualLegend =
    R"html(<div class="legend" id="fk-legend">
<span class="legend-head">lanes</span>
<span><i class="sw band" style="background:#d6e4f5"></i>fence generation</span>
<span><i class="sw band" style="background:#f6c6c6"></i>fence altered</span>
<span><i class="sw band" style="background:#e3e3e3"></i>fence absent</span>
<span><i class="sw band" style="background:#dcd3f3"></i>leader term</span>
<span class="legend-head">lane shading: the latest verdict</span>
<span data-shade="healthy"><i class="sw band shade v-healthy"></i>healthy</span>
<span data-shade="admitting"><i class="sw band shade v-admitting"></i>admitting</span>
<span data-shade="hold"><i class="sw band shade strong v-hold"></i>hold</span>
<span data-shade="suspend"><i class="sw band shade strong v-suspend"></i>suspend</span>
<span data-shade="ignore"><i class="sw band shade v-ignore"></i>ignore</span>
</div>
<div class="legend">
<span class="legend-head">marks</span>
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
</div>
<p class="legend-note">x: the time each row was recorded (rows a few milliseconds apart are
spread out in their order); under each sandbox lane, the reason and note of each verdict change,
intent and outcome; hover a mark for its whole row, click it to find the row in the table.</p>
)html";

// With several journals: which colour marks which journal.
void JournalLegend(const Timeline& t, std::ostream& out) {
  if (!t.merged()) return;
  out << "<div class=\"legend\" id=\"fk-journals\"><span class=\"legend-head\">journals</span>\n";
  for (size_t j = 0; j < t.journals.size(); ++j)
    out << "<span data-journal=\"" << j
        << "\"><i class=\"sw sq\" style=\"background:" << JournalColour(j) << "\"></i>"
        << Escape(t.journals[j].label) << "</span>\n";
  out << "</div>\n";
}

std::string Reason(const Event& e) {
  if (const auto* d = std::get_if<Decided>(&e.body))
    return d->decision.reason == Reason::kNone ? "" : ToString(d->decision.reason);
  if (const auto* i = std::get_if<SuspendIntent>(&e.body)) return ToString(i->reason);
  return "";
}

void TableRow(const Timeline& t, const TimelineRow& row, std::ostream& out) {
  const Event& e = *row.event;
  const char* kind = ToString(e.kind());
  out << "<tr id=\"row-" << RowKey(t, row) << "\" data-row=\"" << e.seq << "\" data-kind=\"" << kind
      << "\" class=\"k-" << kind << "\"><td class=\"mono\">" << Escape(e.recorded_at) << "</td>";
  if (t.merged())
    out << "<td data-journal=\"" << row.journal << "\">" << Escape(t.journals[row.journal].label)
        << "</td><td class=\"mono\" title=\"" << Escape(row.writer) << "\">"
        << Escape(ShortWriter(row.writer)) << "</td>";
  out << "<td class=\"num\">" << e.seq << "</td><td><span class=\"kind\">" << kind
      << "</span></td><td>" << Escape(Subject(e)) << "</td><td class=\"mono\" title=\""
      << Escape(e.uid) << "\">" << Escape(ShortUid(e.uid)) << "</td><td>" << Escape(Reason(e))
      << "</td><td class=\"details\">" << Escape(Describe(e)) << "</td></tr>\n";
}

void Table(const Timeline& t, std::ostream& out) {
  out << "<h2>Journal rows" << (t.merged() ? ", in time order" : "")
      << "</h2>\n<table id=\"fk-rows\"><thead><tr><th>time</th>"
      << (t.merged() ? "<th>journal</th><th>writer</th>" : "")
      << "<th>seq</th><th>event</th><th>subject</th><th>uid</th><th>reason</th><th>details</th>"
         "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) TableRow(t, row, out);
  out << "</tbody></table>\n";
}

void Glossary(const Timeline& t, std::ostream& out) {
  out << "<h2>Legend of the details column</h2>\n<dl class=\"glossary\">\n";
  std::vector<LegendEntry> legend = Legend();
  if (t.merged()) legend.insert(legend.begin(), TimelineLegend().begin(), TimelineLegend().end());
  for (const auto& l : legend)
    out << "<dt>" << Escape(l.term) << "</dt><dd>" << Escape(l.meaning) << "</dd>\n";
  out << "</dl>\n";
}

void JournalLine(const JournalSource& j, std::ostream& out) {
  out << "journal <code>" << Escape(j.path) << "</code> &middot; schema " << j.report.schema_version
      << " &middot; " << j.report.rows.size() << " of " << j.report.journal_rows << " rows";
  if (!j.report.rows.empty()) {
    const auto& rows = j.report.rows;
    out << " (seq " << rows.front().seq << "&ndash;" << rows.back().seq << ", "
        << Escape(rows.front().recorded_at) << " to " << Escape(rows.back().recorded_at) << ")";
  }
}

void Header(const Timeline& t, const ReplayOptions& o, std::ostream& out) {
  out << "<h1>fencekeeper replay</h1>\n<p class=\"meta\">";
  if (t.merged()) {
    out << t.journals.size() << " journals as one timeline, " << t.rows.size()
        << " rows in time order:";
    for (const auto& j : t.journals) {
      out << "<br>" << Escape(j.label) << ": ";
      JournalLine(j, out);
    }
    out << "<br>";
  } else {
    JournalLine(t.journals.front(), out);
    out << " &middot; ";
  }
  out << "filters: " << Filters(o) << " &middot; " << Escape(VersionLine())
      << "</p>\n<div class=\"chips\">" << Chips(t) << "</div>\n";
}

}  // namespace

std::string RenderReplayHtml(const Timeline& t, const ReplayOptions& o) {
  std::ostringstream out;
  std::string title;
  for (const auto& j : t.journals) title += (title.empty() ? "" : ", ") + j.path;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>fencekeeper replay: " << Escape(title) << "</title>\n<style>" << kReplayPageCss
      << "</style></head>\n<body>\n";
  Header(t, o, out);
  JournalLegend(t, out);
  out << kVisualLegend
      << "<div id=\"fk-timeline\"><svg id=\"fk-lanes\" "
         "role=\"img\" aria-label=\"swimlane timeline\"></svg></div>\n"
      << "<noscript><p>The timeline needs JavaScript; the table below does not.</p></noscript>\n";
  Table(t, out);
  Glossary(t, out);
  out << "<script type=\"application/json\" id=\"fk-data\">" << RowsJson(t) << "</script>\n"
      << "<script>" << kReplayPageJs << "</script>\n</body></html>\n";
  return out.str();
}

}  // namespace fk::cli
