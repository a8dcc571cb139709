// Which intent an object carries, and which intents a journal holds, as
// (seq, writer) pairs (docs/transitions.md#the-writer-id: a seq is unique only inside
// one journal, so an object carries an intent only if both its
// fail-closed-journal-seq and its fail-closed-journal-writer match).
// IntentMark reads the pair from the journal's intent, ObjectMark from the
// object's annotations: the invariants compare exactly what fencekeeper must.
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

// What the simulation knows of one journal file: the highest generation
// recorded per policy uid (I11), and how far it has scanned the events.
struct Lineage {
  std::map<std::string, int64_t> fence_generation;
  int64_t scanned = 0;  // events up to this seq are attributed
  // I16: the hold episodes this journal sent a FailClosedHeld Event for (the
  // sandbox's uid, generation and annotations), with the seq of the hold's
  // decided row.
  std::map<std::string, int64_t> held_episodes;
  // The seq of every hold decision this journal recorded, with that sandbox
  // as the server held it when the simulation scanned the row (in the step
  // that journaled it): I16 keys an Event's episode by it. "": already gone.
  std::map<int64_t, std::string> held_objects;
  // I21: "uid generation" of each dry-run intent, with its seq.
  std::map<std::string, int64_t> dry_runs;

  // Hands every event `journal` holds beyond `scanned` to `also`.
  template <class Fn>
  void Scan(const journal::Journal& journal, Fn&& also) {
    const int64_t last = journal.Read([](const domain::JournalState& s) { return s.last_seq; });
    if (last <= scanned) return;
    (void)journal.ForEachEvent(scanned + 1, last, [&](const domain::Event& e) {
      also(e);
      return Status::Ok();
    });
    scanned = last;
  }
  // What a copy taken at `last_seq` knows (scanned up to it: no write in flight).
  Lineage CopyUpTo(int64_t last_seq) const {
    Lineage copy;
    copy.fence_generation = fence_generation;
    copy.scanned = last_seq;
    for (const auto& [episode, seq] : held_episodes)
      if (seq <= last_seq) copy.held_episodes.emplace(episode, seq);
    copy.held_objects.insert(held_objects.begin(), held_objects.upper_bound(last_seq));
    for (const auto& [episode, seq] : dry_runs)
      if (seq <= last_seq) copy.dry_runs.emplace(episode, seq);
    return copy;
  }
};

// The (seq, writer) of an intent event.
inline Mark IntentMark(const domain::Event& intent) {
  return {intent.seq, std::get<domain::SuspendIntent>(intent.body).writer};
}
inline Mark IntentMark(const domain::IntentRecord& intent) {
  return {intent.seq, intent.intent.writer};
}

// The (seq, writer) an object carries: its fail-closed-journal-seq and
// -writer annotations (seq 0: none readable; writer "": absent).
inline Mark ObjectMark(const std::string& seq_annotation, const std::string& writer_annotation) {
  int64_t seq = 0;
  if (!seq_annotation.empty() && seq_annotation.size() < 19 &&
      seq_annotation.find_first_not_of("0123456789") == std::string::npos)
    seq = std::stoll(seq_annotation);
  return {seq, writer_annotation};
}

}  // namespace fk::simulation
