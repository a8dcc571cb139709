// Which intent an object carries, and which intents a journal holds, as
// (seq, writer) pairs (DESIGN "The suspend PATCH": a seq is unique only inside
// one journal, so an object carries an intent only if both its
// fail-closed-journal-seq and its fail-closed-journal-writer match).
//
// WRITER-ID: until domain::SuspendIntent has `writer` and the PATCH sends
// openshell.ai/fail-closed-journal-writer, the writer comes from the
// simulation's own records, which are exact: a Lineage says which process
// recorded each intent of one journal file (every intent a journal holds was
// recorded by the process that had it open), and the world records whose
// intent each landed suspend PATCH carried (only those set the seq
// annotation). Once the field exists, IntentMark and ObjectMark read it from
// the journal and the object: one line each, marked below.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "domain/event.h"
#include "journal/journal.h"

namespace fk::simulation {

struct Mark {
  int64_t seq = 0;
  std::string writer;
  bool operator==(const Mark&) const = default;
  auto operator<=>(const Mark&) const = default;
  std::string ToString() const { return std::to_string(seq) + "/" + writer; }
};

// What the simulation knows of one journal file: which process recorded which
// intent, and the highest generation recorded per policy uid.
struct Lineage {
  std::map<int64_t, std::string> writer_by_seq;
  std::map<std::string, int64_t> fence_generation;
  int64_t scanned = 0;  // events up to this seq are attributed

  // Attributes the intents `journal` holds beyond `scanned` to `writer` (the
  // process that has it open now), and hands every new event to `also`.
  template <class Fn>
  void Scan(const journal::Journal& journal, const std::string& writer, Fn&& also) {
    const int64_t last = journal.Read([](const domain::JournalState& s) { return s.last_seq; });
    if (last <= scanned) return;
    (void)journal.ForEachEvent(scanned + 1, last, [&](const domain::Event& e) {
      if (std::holds_alternative<domain::SuspendIntent>(e.body)) writer_by_seq[e.seq] = writer;
      also(e);
      return Status::Ok();
    });
    scanned = last;
  }
  // What a copy taken at `last_seq` knows (scanned up to it: no write in flight).
  Lineage CopyUpTo(int64_t last_seq) const {
    Lineage copy;
    copy.fence_generation = fence_generation;
    for (const auto& [seq, w] : writer_by_seq)
      if (seq <= last_seq) copy.writer_by_seq[seq] = w;
    copy.scanned = last_seq;
    return copy;
  }
};

// The (seq, writer) of an intent event of the journal `lineage` describes.
inline Mark IntentMark(const Lineage& lineage, const domain::Event& intent) {
  auto it = lineage.writer_by_seq.find(intent.seq);
  // WRITER-ID: once the field exists: return {intent.seq,
  // std::get<domain::SuspendIntent>(intent.body).writer};
  return {intent.seq, it == lineage.writer_by_seq.end() ? std::string("?") : it->second};
}

// The (seq, writer) an object carries: its seq annotation, and the writer of
// the landed PATCH that set it (`landed_writer`, "" if none landed).
inline Mark ObjectMark(const std::string& seq_annotation, const std::string& landed_writer) {
  int64_t seq = 0;
  if (!seq_annotation.empty() && seq_annotation.size() < 19 &&
      seq_annotation.find_first_not_of("0123456789") == std::string::npos)
    seq = std::stoll(seq_annotation);
  // WRITER-ID: once the PATCH sends it: return {seq, Annotation(obj,
  // "openshell.ai/fail-closed-journal-writer")};
  return {seq, landed_writer};
}

}  // namespace fk::simulation
