#include "server/config.h"

#include "gtest/gtest.h"

namespace hummingd {
namespace {

TEST(ConfigTest, DefaultsAreValidAndDescribed) {
  ServerConfig config;
  EXPECT_TRUE(ValidateConfig(config).ok());
  const auto rows = DescribeConfig(config);
  ASSERT_GE(rows.size(), 10u);
  for (const ConfigRow& row : rows) {
    EXPECT_FALSE(row.name.empty());
    EXPECT_FALSE(row.help.empty()) << row.name;
    EXPECT_FALSE(row.range.empty()) << row.name;
  }
  EXPECT_GE(EffectiveCompileThreads(config), 1);
}

TEST(ConfigTest, OutOfRangeValuesNameTheFlag) {
  struct Case {
    void (*mutate)(ServerConfig*);
    const char* flag;
  };
  const Case cases[] = {
      {[](ServerConfig* c) { c->compile_threads = -1; }, "--compile-threads"},
      {[](ServerConfig* c) { c->max_cache_bytes = 100; }, "--max-cache-bytes"},
      {[](ServerConfig* c) { c->memory_cache_bytes = -5; },
       "--memory-cache-bytes"},
      {[](ServerConfig* c) { c->negative_cache_seconds = 9999; },
       "--negative-cache-seconds"},
      {[](ServerConfig* c) { c->socket_mode = "rw"; }, "--socket-mode"},
      {[](ServerConfig* c) { c->socket_mode = "0778"; }, "--socket-mode"},
      {[](ServerConfig* c) { c->log_level = "chatty"; }, "--log-level"},
      {[](ServerConfig* c) { c->cache_dir = ""; }, "--cache-dir"},
      {[](ServerConfig* c) { c->socket_path = std::string(200, 'x'); },
       "--socket"},
  };
  for (const Case& c : cases) {
    ServerConfig config;
    c.mutate(&config);
    absl::Status status = ValidateConfig(config);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.flag;
    EXPECT_NE(status.message().find(c.flag), std::string::npos)
        << status.message();
  }
}

TEST(ConfigTest, SocketModeParses) {
  unsigned mode = 0;
  ASSERT_TRUE(ParseSocketMode("0660", &mode).ok());
  EXPECT_EQ(mode, 0660u);
  ASSERT_TRUE(ParseSocketMode("600", &mode).ok());
  EXPECT_EQ(mode, 0600u);
  EXPECT_FALSE(ParseSocketMode("", &mode).ok());
  EXPECT_FALSE(ParseSocketMode("12345", &mode).ok());
}

}  // namespace
}  // namespace hummingd
