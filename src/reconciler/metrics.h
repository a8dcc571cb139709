// The reconciler's Prometheus metrics. prometheus-cpp provides the metric
// types and the text format; they stay behind this interface so its headers
// are not included everywhere. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace fk::reconciler {

class Metrics {
 public:
  Metrics();
  ~Metrics();

  void Transition(const std::string& reason, const std::string& outcome);
  void JournalAppend(size_t events, double commit_seconds);
  void JournalError();
  void ApiRequest(const std::string& verb, int code);
  void WatchRestarts(const std::string& resource, int total);  // a monotonic total
  // Objects and lines skipped as undecodable, by kind (sandboxes,
  // networkpolicies, pods): a monotonic total. Each kind is 0 from the start.
  void DecodeErrors(const std::string& kind, int total);
  void SandboxesByVerdict(const std::map<std::string, int>& counts);
  void QueueDepth(size_t depth);
  void Leader(bool leading);
  void Ready(bool ready);

  std::string Render() const;  // Prometheus text exposition format

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fk::reconciler
