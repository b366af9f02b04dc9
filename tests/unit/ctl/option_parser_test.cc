#include "ctl/option_parser.h"

#include "gtest/gtest.h"

namespace hummingd {
namespace {

TEST(OptionParserTest, ValuesSwitchesAndPositionals) {
  auto parsed = ParseOptions({"--n", "4096", "--k=512", "file.yaml", "--all"},
                             {"n", "k"}, {"all"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Get("n"), "4096");
  EXPECT_EQ(*parsed->GetInt("k", 0), 512);
  EXPECT_EQ(*parsed->GetInt("missing", 7), 7);
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"file.yaml"});
  EXPECT_TRUE(parsed->switches.count("all"));
}

TEST(OptionParserTest, Errors) {
  EXPECT_FALSE(ParseOptions({"--bogus", "1"}, {"n"}, {}).ok());
  EXPECT_FALSE(ParseOptions({"--n"}, {"n"}, {}).ok());
  EXPECT_FALSE(ParseOptions({"--all=1"}, {}, {"all"}).ok());
  auto parsed = ParseOptions({"--n", "12x"}, {"n"}, {});
  ASSERT_TRUE(parsed.ok());
  auto value = parsed->GetInt("n", 0);
  EXPECT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("--n"), std::string::npos);
}

}  // namespace
}  // namespace hummingd
