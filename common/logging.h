#pragma once

// The one logging wrapper (STYLE.md): key=value messages on stderr through
// spdlog. Libraries call these; only main() chooses the level.

#include <string_view>

namespace hummingd::log {

enum class Level { kDebug, kInfo, kWarn, kError };

void SetLevel(Level level);
// Parses "debug" | "info" | "warn" | "error"; false when unknown.
bool ParseLevel(std::string_view text, Level* level);

void Debug(std::string_view message);
void Info(std::string_view message);
void Warn(std::string_view message);
void Error(std::string_view message);

}  // namespace hummingd::log
