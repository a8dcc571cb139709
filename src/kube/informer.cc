#include "kube/informer.h"

#include "common/backoff.h"
#include "common/utf8.h"
#include "kube/json_fields.h"

#include "common/log.h"

#include <boost/json.hpp>
#include <deque>
#include <random>
#include <tuple>

namespace fk::kube {

namespace json = boost::json;

namespace {

std::string Excerpt(std::string_view line) {
  std::string s(Utf8Prefix(line, 200));
  if (line.size() > 200) s += "...";
  return s;
}

// What a watch stream has delivered and not yet been read: filled on the
// transport's thread, drained on the informer's.
struct WatchInbox {
  explicit WatchInbox(size_t limit) : limit_bytes(limit) {}

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> lines;
  size_t bytes = 0;  // in `lines`
  const size_t limit_bytes;
  bool ended = false;
  Status status;
  std::optional<HttpResponse> non_ok;

  // The transport stops reading while the inbox holds `limit_bytes` (see
  // InformerOptions::watch_buffer_bytes).
  static Transport::StreamCallbacks FeedFrom(const std::shared_ptr<WatchInbox>& inbox) {
    Transport::StreamCallbacks callbacks;
    callbacks.on_line = [inbox](std::string_view line) {
      std::lock_guard lock(inbox->mu);
      inbox->lines.emplace_back(line);
      inbox->bytes += line.size();
      inbox->cv.notify_all();
    };
    callbacks.ready = [inbox] {
      std::lock_guard lock(inbox->mu);
      return inbox->bytes < inbox->limit_bytes;
    };
    callbacks.on_end = [inbox](const Status& s, std::optional<HttpResponse> non_ok) {
      std::lock_guard lock(inbox->mu);
      inbox->ended = true;
      inbox->status = s;
      inbox->non_ok = std::move(non_ok);
      inbox->cv.notify_all();
    };
    return callbacks;
  }

  // Waits for lines or the end; moves the lines into *out and says whether
  // the stream has ended.
  bool Take(std::deque<std::string>* out) {
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return !lines.empty() || ended; });
    out->swap(lines);
    bytes = 0;
    return ended;
  }

  // How the stream ended (once it has), copied out: the caller must not hold
  // mu while it takes the informer's lock.
  std::pair<Status, std::optional<HttpResponse>> TakeOutcome() {
    std::lock_guard lock(mu);
    return {status, std::move(non_ok)};
  }
};

}  // namespace

Informer::Informer(ApiClient& client, const ResourceRef& resource, const InformerOptions& options)
    : Informer(std::make_unique<ApiListerWatcher>(client, resource, options.ns), resource,
               options) {}

Informer::Informer(std::unique_ptr<ListerWatcher> source, ResourceRef resource,
                   InformerOptions options)
    : Informer(*source, std::move(resource), std::move(options)) {
  owned_source_ = std::move(source);
}

Informer::Informer(ListerWatcher& source, ResourceRef resource, InformerOptions options)
    : source_(source),
      resource_(std::move(resource)),
      options_(std::move(options)),
      jitter_(options_.jitter_seed ? options_.jitter_seed : std::random_device{}()) {
  if (!options_.time) options_.time = &RealTimeSource::Instance();
  if (!options_.transform) {
    options_.transform = [](const DecodedObject& o) -> Result<CachedRef<Cached>> {
      return CachedRef<Cached>(MakeCached<CachedJson>(o.object));
    };
  }
}

Informer::~Informer() { Stop(); }

void Informer::Subscribe(std::function<void(const Change&)> fn) {
  subscribers_.push_back(std::move(fn));
}

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (stream_) stream_->Cancel();
  }
  stop_.Fire();
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_.load() || stopping_; }) &&
         synced_.load();
}

InformerStats Informer::stats() const {
  std::lock_guard lock(mu_);
  InformerStats s = stats_;
  s.resource_version = rv_;
  return s;
}

void Informer::Notify(const Change& change) {
  for (auto& fn : subscribers_) fn(change);
}

bool Informer::Backoff(int attempt, std::optional<std::chrono::milliseconds> retry_after) {
  std::chrono::milliseconds d;
  if (retry_after) {
    // Capped: docs/design.md#retries-and-rate-limits.
    d = std::min<std::chrono::milliseconds>(*retry_after, kMaxRetryAfter);
  } else {
    d = JitteredDelay(options_.initial_backoff, attempt, options_.max_backoff, jitter_);
  }
  return options_.time->SleepFor(d, stop_);
}

std::string Informer::Name() const {
  return resource_.plural + "/" + (options_.ns.empty() ? std::string("*") : options_.ns);
}

SyncState Informer::sync_state() const {
  std::lock_guard lock(mu_);
  return {synced_.load(), synced_.load() ? std::string() : sync_reason_};
}

bool Informer::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void Informer::SetSynced(bool synced, std::string reason) {
  std::lock_guard lock(mu_);
  sync_reason_ = std::move(reason);
  if (synced_.exchange(synced) != synced && synced) cv_.notify_all();
}

void Informer::AdvanceResourceVersion(const std::string& rv) {
  if (rv.empty()) return;
  std::lock_guard lock(mu_);
  rv_ = rv;
}

// Counted every time; logged once per object, version and reason, so a bad
// object seen on every relist does not flood the log.
void Informer::ReportBad(std::string_view context, const BadObject& bad) {
  const std::string what = bad.Describe();
  bool first;
  {
    std::lock_guard lock(mu_);
    ++stats_.decode_errors;
    if (reported_bad_.size() > 10000) reported_bad_.clear();
    first = reported_bad_.insert(what).second;
  }
  if (!first) return;
  log::Warn("skipping an undecodable object")
      .Str("informer", Name())
      .Str("context", context)
      .NonEmpty(log::key::kNamespace, bad.ns)
      .NonEmpty("name", bad.name)
      .NonEmpty(log::key::kUid, bad.uid)
      .NonEmpty("resource_version", bad.resource_version)
      .Error(bad.reason);
}

ApiResult Informer::GetPage(const std::string& token, int limit, bool metadata_only) {
  ApiResult r = source_.List({token, limit, metadata_only, options_.label_selector});
  std::lock_guard lock(mu_);
  ++stats_.pages;
  return r;
}

// The one item at `token` is over the body limit by itself: its page is read
// again as metadata only, for its identity (so a cached state of the same uid
// is kept, fail closed) and the token after it; it is skipped like any item
// that cannot be decoded, and the list goes on.
Result<ListPage> Informer::SkipOversizedItem(const std::string& token) {
  ApiResult r = GetPage(token, 1, /*metadata_only=*/true);
  if (!r.ok()) return Status::Unavailable("listing failed: " + r.status().message());
  auto page = DecodeListPage(r->body);
  if (!page.ok()) return Status::Corruption("listing failed: " + page.status().message());
  for (DecodedObject& item : page->items) {
    page->bad_items.push_back(
        {item.ns, item.name, item.uid, item.resource_version, "larger than the body limit"});
  }
  page->items.clear();
  if (page->bad_items.empty())
    page->bad_items.push_back({{}, {}, {}, {}, "an item larger than the body limit"});
  return page;
}

// One page at `token`: `*limit` items, halved while the answer is over the
// body limit (many large objects), down to one; a single item over it is
// skipped (SkipOversizedItem). A page that fits lets the limit grow back.
Result<ListPage> Informer::FetchPage(const std::string& token, int* limit) {
  ApiResult r = GetPage(token, *limit, /*metadata_only=*/false);
  while (ApiErrorOf(r.status()).kind == ApiErrorKind::kTooLarge) {
    if (*limit == 1) return SkipOversizedItem(token);
    *limit = std::max(1, *limit / 2);
    log::Info("a list page is over the body limit; asking for fewer items")
        .Str("informer", Name())
        .Int("limit", *limit);
    r = GetPage(token, *limit, /*metadata_only=*/false);
  }
  // The ApiError stays attached: a 410 on a continue token starts the list over.
  if (!r.ok()) return r.status().WithContext("listing failed");
  auto page = DecodeListPage(r->body, options_.transform);
  if (!page.ok()) {
    std::lock_guard lock(mu_);
    ++stats_.decode_errors;
    return Status::Corruption("listing returned an unusable body (" + page.status().message() +
                              "): " + Excerpt(r->body));
  }
  *limit = std::min(std::max(1, options_.page_size), *limit * 2);
  return page;
}

// Every page of one list. The server's snapshot for a continue token expires
// like a watch's history (410): the list then starts over from the first page,
// a few times at most before the caller backs off.
Result<Informer::Listing> Informer::FetchAllPages() {
  constexpr int kMaxRestarts = 3;
  Listing all;
  std::string token;
  int limit = std::max(1, options_.page_size);
  for (int restarts = 0;;) {
    if (stopping()) return Status::Cancelled("stopping");
    auto page = FetchPage(token, &limit);
    const ApiError error = ApiErrorOf(page.status());
    if (error.code == 410 && !token.empty() && restarts < kMaxRestarts) {
      log::Info("the list's continue token expired; listing again from the start")
          .Str("informer", Name())
          .Error(error.message);
      ++restarts;
      std::lock_guard lock(mu_);
      ++stats_.list_restarts;
      all = Listing{};
      token.clear();
      continue;
    }
    if (!page.ok()) return page.status();
    for (DecodedObject& item : page->items)
      all.objects.Put(item.ns, item.name, std::move(item.cached));
    for (BadObject& bad : page->bad_items) all.bad.push_back(std::move(bad));
    all.resource_version = page->resource_version;
    if (page->continue_token.empty()) return all;
    token = page->continue_token;
  }
}

// An item that cannot be read now but is cached under the same uid keeps its
// cached state instead of vanishing from the cache: fail closed, a hostile
// update must never silently take a running sandbox out of evaluation.
void Informer::CarryOverUnreadable(Listing* listing) const {
  for (const BadObject& bad : listing->bad) {
    if (bad.name.empty() || bad.uid.empty() || listing->objects.Contains(bad.ns, bad.name))
      continue;
    CachedPtr cached = store_.Get(bad.ns, bad.name);
    if (!cached || cached->uid != bad.uid) continue;
    listing->objects.Put(bad.ns, bad.name, std::move(cached));
  }
}

// Replaces the cache with a fresh list, notifying what changed since.
void Informer::ReplaceCache(Listing* listing) {
  {
    std::lock_guard lock(mu_);
    rv_ = listing->resource_version;
  }
  writer_.Replace(std::move(listing->objects));
}

bool Informer::List() {
  {
    std::lock_guard lock(mu_);
    ++stats_.lists;
  }
  auto listing = FetchAllPages();
  if (!listing.ok()) {
    if (stopping()) return false;
    log::Warn("list failed").Str("informer", Name()).Error(listing.status().message());
    // The cache may be arbitrarily old now: readiness must say so.
    SetSynced(false, listing.status().message());
    return false;
  }
  for (const BadObject& bad : listing->bad) ReportBad("list item", bad);
  InstallListing(&*listing);
  return true;
}

void Informer::TrimHeap() const {
  if (options_.return_freed_memory) options_.return_freed_memory();
}

// A whole listing (all pages, or a streaming list up to its bookmark) becomes
// the cache: unreadable items keep their cached state, changes are notified
// once, and the memory the listing held goes back to the system.
void Informer::InstallListing(Listing* listing) {
  CarryOverUnreadable(listing);
  ReplaceCache(listing);
  *listing = Listing{};
  // The pages' bodies (500 items: MiBs each) are freed, but glibc keeps freed
  // heap in its arenas (and raises its mmap threshold after the first large
  // free, so later bodies come from the heap too): hand the pages back, so
  // the steady state is what the caches hold, not the last list's peak.
  TrimHeap();
  SetSynced(true, "");
}

void Informer::Apply(ChangeType type, const DecodedObject& o) {
  writer_.Apply(type, o.ns, o.name, o.resource_version, o.cached);
}

// An event whose object cannot be decoded (identity salvaged from the line).
// A DELETED is still applied when it names the cached object with the same
// uid: the object is gone whatever its last body said. An ADDED or MODIFIED
// keeps nothing new — the last readable state stays cached (fail closed: a
// hostile update must never silently take a running sandbox out of
// evaluation, and what we cannot read we cannot judge healthy). Either way
// the resourceVersion advances, so the watch resumes after the event.
void Informer::HandleUndecodable(const std::string& type, const BadObject& bad) {
  ReportBad(type + " watch event", bad);
  if (type == "DELETED" && !bad.name.empty() && !bad.uid.empty()) {
    CachedPtr cached = store_.Get(bad.ns, bad.name);
    if (cached && cached->uid == bad.uid)
      Apply(ChangeType::kDeleted, {bad.ns, bad.name, bad.uid, bad.resource_version, nullptr,
                                   boost::const_pointer_cast<Cached>(cached)});
  }
  AdvanceResourceVersion(bad.resource_version);
}

// A transform that fails makes the object undecodable (its cached state is
// kept, a DELETED still applies); one that drops it leaves the cache alone.
bool Informer::TransformEvent(const std::string& type, DecodedObject* o) {
  auto kept = TransformObject(options_.transform, o);
  if (kept.ok() && *kept) return true;
  if (!kept.ok()) {
    HandleUndecodable(
        type, BadObject{o->ns, o->name, o->uid, o->resource_version, kept.status().message()});
  } else {
    AdvanceResourceVersion(o->resource_version);
  }
  return false;
}

namespace {

bool IsInitialEventsEnd(const json::value& bookmark) {
  return StringField(ObjectField(ObjectField(bookmark, "metadata"), "annotations"),
                     "k8s.io/initial-events-end") == "true";
}

}  // namespace

// Before its bookmark a streaming list fills a listing, as a paged list's
// pages do: nothing reaches the cache or the subscribers until it is whole.
// Returns false: the stream goes on (as the watch, once the bookmark came).
bool Informer::HandleInitialEvent(WatchEvent& event, InitialEvents* initial) {
  Listing& listing = initial->listing;
  if (event.bad) {
    ReportBad("streaming list item", *event.bad);
    listing.bad.push_back(*event.bad);
    return false;
  }
  DecodedObject& o = *event.object;
  if (event.type == "BOOKMARK") {
    if (IsInitialEventsEnd(*o.object)) FinishInitialEvents(initial, o.resource_version);
    return false;
  }
  if (event.type == "DELETED") {
    listing.objects.Erase(o.ns, o.name);
    return false;
  }
  auto kept = TransformObject(options_.transform, &o);
  if (!kept.ok()) {
    BadObject bad{o.ns, o.name, o.uid, o.resource_version, kept.status().message()};
    ReportBad("streaming list item", bad);
    listing.bad.push_back(std::move(bad));
  } else if (*kept) {
    listing.objects.Put(o.ns, o.name, std::move(o.cached));
  } else {
    listing.objects.Erase(o.ns, o.name);  // not ours to cache
  }
  return false;
}

void Informer::FinishInitialEvents(InitialEvents* initial, const std::string& resource_version) {
  initial->listing.resource_version = resource_version;
  InstallListing(&initial->listing);
  initial->done = true;
}

bool Informer::HandleLine(const std::string& line, WatchEnd* end, InitialEvents* initial) {
  auto event = DecodeWatchLine(line);
  if (!event.ok()) {
    log::Warn("skipping an undecodable watch line")
        .Str("informer", Name())
        .Error(event.status().message())
        .Str("line", Excerpt(line));
    std::lock_guard lock(mu_);
    ++stats_.decode_errors;
    return false;
  }
  const std::string& t = event->type;
  if (initial && !initial->done && t != "ERROR") return HandleInitialEvent(*event, initial);
  if (event->bad) {
    HandleUndecodable(event->type, *event->bad);
    return false;
  }
  DecodedObject& o = *event->object;
  if (t == "ERROR") {
    // A Status is a few levels deep; a deeper one is not worth serializing
    // (Boost's serializer is quadratic in the depth): a plain error.
    ApiError err;
    err.kind = ApiErrorKind::kDecode;
    err.message = "an ERROR event nested too deep to be a Status";
    if (!DeeperThan(*o.object, 16)) err = DecodeStatus(200, json::serialize(*o.object));
    if (err.code == 410) {
      log::Info("watch expired; relisting").Str("informer", Name()).Error(err.message);
      *end = WatchEnd::kExpired;
    } else {
      log::Warn("watch ended with an error event").Str("informer", Name()).Error(err.ToString());
      *end = WatchEnd::kError;
    }
    return true;
  }
  if (t == "BOOKMARK") {
    AdvanceResourceVersion(o.resource_version);
    return false;
  }
  if (o.resource_version.empty() || (t != "ADDED" && t != "MODIFIED" && t != "DELETED")) {
    log::Warn("skipping an unusable watch event")
        .Str("informer", Name())
        .Str("line", Excerpt(line));
    std::lock_guard lock(mu_);
    ++stats_.decode_errors;
    return false;
  }
  if (!TransformEvent(t, &o)) return false;
  Apply(t == "DELETED" ? ChangeType::kDeleted
        : t == "ADDED" ? ChangeType::kAdded
                       : ChangeType::kModified,
        o);
  AdvanceResourceVersion(o.resource_version);
  return false;
}

WatchRequest Informer::NextWatch(bool streaming_list) {
  WatchRequest request;
  request.timeout_seconds = options_.watch_timeout_seconds;
  request.send_initial_events = streaming_list;
  request.label_selector = options_.label_selector;
  std::lock_guard lock(mu_);
  if (streaming_list) {
    ++stats_.streaming_lists;
  } else {
    request.resource_version = rv_;
    ++stats_.watches;
  }
  return request;
}

std::optional<Informer::WatchEnd> Informer::FailedWatch(
    const Status& status, const std::optional<HttpResponse>& non_ok,
    std::optional<std::chrono::milliseconds>* retry_after) {
  if (non_ok) {
    const ApiError err = DecodeStatus(non_ok->status, non_ok->body);
    if (err.code == 410) return WatchEnd::kExpired;
    log::Warn("watch refused").Str("informer", Name()).Error(err.ToString());
    if (non_ok->retry_after_seconds)
      *retry_after = std::chrono::seconds(*non_ok->retry_after_seconds);
    return WatchEnd::kError;
  }
  if (!status.ok()) {
    if (!stopping()) log::Warn("watch failed").Str("informer", Name()).Error(status.message());
    return WatchEnd::kError;
  }
  return std::nullopt;
}

Informer::WatchEnd Informer::NoInitialEvents(const Status& status,
                                             const std::optional<HttpResponse>& non_ok,
                                             bool timed_out) {
  {
    std::lock_guard lock(mu_);
    ++stats_.list_fallbacks;
  }
  if (stopping()) return WatchEnd::kNoInitialEvents;
  if (non_ok && non_ok->status == 422) {
    streaming_refused_ = true;  // the gate is the server's: it will not change by itself
    log::Info("the server does not serve streaming lists; listing by pages from now on")
        .Str("informer", Name())
        .Error(DecodeStatus(non_ok->status, non_ok->body).message);
    return WatchEnd::kNoInitialEvents;
  }
  const std::string why =
      timed_out ? "no initial-events-end bookmark within " +
                      std::to_string(options_.initial_events_timeout.count()) + " ms"
      : non_ok       ? DecodeStatus(non_ok->status, non_ok->body).ToString()
      : !status.ok() ? status.message()
                     : std::string("the stream ended before its initial-events-end bookmark");
  log::Warn("streaming list failed; listing by pages").Str("informer", Name()).Error(why);
  return WatchEnd::kNoInitialEvents;
}

// Each line in turn until one ends the reading (true). During a streaming
// list, freed heap goes back after each trim_every_bytes of events.
bool Informer::HandleLines(const std::deque<std::string>& lines, WatchEnd* end,
                           InitialEvents* initial) {
  for (const std::string& line : lines) {
    if (HandleLine(line, end, initial)) return true;
    if (!initial || initial->done) continue;
    if ((initial->decoded_since_trim += line.size()) < options_.trim_every_bytes) continue;
    initial->decoded_since_trim = 0;
    TrimHeap();
  }
  return false;
}

Informer::WatchEnd Informer::Watch(std::optional<std::chrono::milliseconds>* retry_after,
                                   InitialEvents* initial) {
  const WatchRequest request = NextWatch(initial != nullptr);
  auto inbox = std::make_shared<WatchInbox>(options_.watch_buffer_bytes);
  {
    std::lock_guard lock(mu_);
    if (stopping_) return WatchEnd::kClean;
  }
  auto stream = source_.Watch(request, WatchInbox::FeedFrom(inbox));
  {
    std::lock_guard lock(mu_);
    stream_ = std::move(stream);
    if (stopping_) stream_->Cancel();
  }
  // A streaming list whose bookmark does not come in time is cut short (and
  // listed by pages): a server that ignores sendInitialEvents never sends it.
  Interrupt bookmark_seen;
  std::atomic<bool> timed_out{false};
  std::thread watchdog;
  if (initial) {
    watchdog = std::thread([this, &bookmark_seen, &timed_out,
                            due = options_.time->MonotonicNow() + options_.initial_events_timeout] {
      if (!options_.time->WaitUntil(due, bookmark_seen)) return;
      timed_out = true;
      std::lock_guard lock(mu_);
      if (stream_) stream_->Cancel();
    });
  }
  WatchEnd end = WatchEnd::kClean;
  Status status;
  std::optional<HttpResponse> non_ok;
  for (;;) {
    std::deque<std::string> lines;
    const bool ended = inbox->Take(&lines);
    const bool stop_reading = HandleLines(lines, &end, initial);
    if (initial && initial->done) bookmark_seen.Fire();
    if (stop_reading) break;
    if (ended) {
      // Copied out first: stopping() takes mu_, which Stop() holds while it
      // cancels the stream (and a stream may end itself synchronously on Cancel).
      std::tie(status, non_ok) = inbox->TakeOutcome();
      if (initial && !initial->done) break;
      if (auto failed = FailedWatch(status, non_ok, retry_after)) end = *failed;
      break;
    }
  }
  bookmark_seen.Fire();
  if (watchdog.joinable()) watchdog.join();
  std::unique_ptr<Transport::Stream> done;
  {
    std::lock_guard lock(mu_);
    done = std::move(stream_);
  }
  done.reset();  // cancels if still open and waits for its end
  if (initial && !initial->done) return NoInitialEvents(status, non_ok, timed_out);
  return end;
}

// What a watch's end is to the watcher's steps (watcher_state.h): a clean
// end resumes the watch, an expired resourceVersion lists again, and any
// other end is a failure that backs off.
WatcherEvent Informer::EventOf(WatchEnd end) {
  switch (end) {
    case WatchEnd::kClean:
      return WatcherEvent::kWatchEnded;
    case WatchEnd::kExpired:
      return WatcherEvent::kWatchExpired;
    case WatchEnd::kError:
    case WatchEnd::kNoInitialEvents:
      break;
  }
  return WatcherEvent::kWatchFailed;
}

// The listing phase's requests: a streaming list where the server serves
// one, else (or when it ends before its bookmark) pages. `*streamed`: how the
// watch a streaming list went on as ended.
WatcherEvent Informer::ListAll(std::optional<WatchEnd>* streamed,
                               std::optional<std::chrono::milliseconds>* retry_after) {
  if (options_.streaming_list && !streaming_refused_) {
    InitialEvents initial;
    const WatchEnd end = Watch(retry_after, &initial);
    if (initial.done) {
      *streamed = end;
      return WatcherEvent::kListed;
    }
  }
  return List() ? WatcherEvent::kListed : WatcherEvent::kListFailed;
}

bool Informer::Advance(WatcherState* state, WatcherEvent event,
                       std::optional<std::chrono::milliseconds> retry_after) {
  // Stop() cancels the stream before it fires stop_: a watch it cut ends as
  // a failure, which is no watch error and must wait for no backoff (a
  // seeded backoff sequence would record one wait too many).
  if (stopping()) return false;
  if (event == WatcherEvent::kWatchExpired || event == WatcherEvent::kWatchFailed) {
    std::lock_guard lock(mu_);
    ++(event == WatcherEvent::kWatchExpired ? stats_.expired : stats_.watch_errors);
  }
  const WatcherStep step = Step(*state, event);
  if (step.back_off && !Backoff(state->attempt, retry_after)) return false;
  *state = step.next;
  return true;
}

bool Informer::Cycle(WatcherState* state) {
  if (stopping()) return false;
  std::optional<std::chrono::milliseconds> retry_after;
  if (state->phase == WatcherPhase::kListing) {
    std::optional<WatchEnd> streamed;
    // A failed listing backs off by its own schedule, whatever a refused
    // stream before it asked for.
    if (!Advance(state, ListAll(&streamed, &retry_after), std::nullopt)) return false;
    if (!streamed) return true;
    return Advance(state, EventOf(*streamed), retry_after);
  }
  return Advance(state, EventOf(Watch(&retry_after)), retry_after);
}

void Informer::Run() {
  WatcherState state;
  while (Cycle(&state)) {
  }
}

}  // namespace fk::kube
