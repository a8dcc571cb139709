// Kubernetes object and label names (apimachinery's validation): what the
// API server accepts is all fencekeeper ever puts into a URL path, and all a
// flag may name. Pure checks, no allocation.
#pragma once

#include <string_view>

namespace fk::domain {

// A namespace (and a Service, a Lease name when strict): 1-63 characters of
// [a-z0-9-], starting and ending alphanumeric.
bool IsDns1123Label(std::string_view s);
// Most object names (Sandbox, Pod, NetworkPolicy, Event): at most 253
// characters, dot-separated parts each like a label (apimachinery bounds only
// the whole, not each part).
bool IsDns1123Subdomain(std::string_view s);
// A label key: [prefix/]name, prefix a DNS-1123 subdomain, name 1-63 of
// [A-Za-z0-9-_.] starting and ending alphanumeric.
bool IsQualifiedName(std::string_view s);
// A label value: empty, or like the name part of a qualified name.
bool IsLabelValue(std::string_view s);

}  // namespace fk::domain
