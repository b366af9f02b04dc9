#include "common/logging.h"

#include <memory>

#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace hummingd::log {
namespace {

spdlog::logger& Logger() {
  // Created once, thread-safely, on first use; never destroyed so that logging
  // from static destructors or detached threads stays valid.
  static spdlog::logger* const logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* created = new spdlog::logger("hummingd", sink);
    created->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    created->set_level(spdlog::level::info);
    created->flush_on(spdlog::level::info);
    return created;
  }();
  return *logger;
}

}  // namespace

void SetLevel(Level level) {
  switch (level) {
    case Level::kDebug:
      Logger().set_level(spdlog::level::debug);
      break;
    case Level::kInfo:
      Logger().set_level(spdlog::level::info);
      break;
    case Level::kWarn:
      Logger().set_level(spdlog::level::warn);
      break;
    case Level::kError:
      Logger().set_level(spdlog::level::err);
      break;
  }
}

bool ParseLevel(std::string_view text, Level* level) {
  if (text == "debug")
    *level = Level::kDebug;
  else if (text == "info")
    *level = Level::kInfo;
  else if (text == "warn")
    *level = Level::kWarn;
  else if (text == "error")
    *level = Level::kError;
  else
    return false;
  return true;
}

void Debug(std::string_view message) { Logger().debug("{}", message); }
void Info(std::string_view message) { Logger().info("{}", message); }
void Warn(std::string_view message) { Logger().warn("{}", message); }
void Error(std::string_view message) { Logger().error("{}", message); }

}  // namespace hummingd::log
