#pragma once

// Abseil flags are declared with underscores; our documented spellings use
// dashes (--cache-dir). This rewrites "--cache-dir=x" / "--cache-dir" to the
// underscore form in place, before absl::ParseCommandLine sees argv. Values
// are untouched; "--" ends the rewriting.

namespace hummingd {

void NormalizeFlagSpelling(int argc, char** argv);

}  // namespace hummingd
