// hummingctl: command-line client of the hummingd daemon.

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "ctl/commands.h"
#include "ctl/daemon_channel.h"

namespace {

constexpr char kUsage[] =
    "usage: hummingctl [--socket PATH] [--timeout SECONDS] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  get --kind dequant|gemm --spec SPEC --n N --k K --arch sm_XX [--out "
    "DIR]\n"
    "      [--gemm-kind dense|moe_indexed|moe_grouped] [--experts E] "
    "[--top-k T]\n"
    "      [--metadata-only] [--launch-abi A] [--max-m N]\n"
    "                             print the kernel set; --out writes cubins\n"
    "  prefetch MANIFEST [--arch sm_XX] [--launch-abi A] [--max-m N] "
    "[--quiet]\n"
    "                             compile/cache every layer of a manifest\n"
    "  --launch-abi: the clients' launch ABI to plan for (default:\n"
    "  this build's, what its clients send)\n"
    "  --max-m: only the M ranges serving some M <= N compile (default 0:\n"
    "  every range; for prefetch it replaces every layer's max_m)\n"
    "  stats                      counters, one 'name: value' per line\n"
    "  ls                         list cached artifacts\n"
    "  evict --all | KEY...       remove artifacts from the cache\n"
    "  health                     exit 0 when the daemon is serving\n"
    "\n"
    "The socket defaults to $HUMMINGD_SOCKET, else "
    "/run/hummingd/hummingd.sock.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string socket_flag;
  int timeout_seconds = 600;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value_of = [&](const std::string& name, std::string* value) {
      if (arg == name && i + 1 < args.size()) {
        *value = args[++i];
        return true;
      }
      if (arg.rfind(name + "=", 0) == 0) {
        *value = arg.substr(name.size() + 1);
        return true;
      }
      return false;
    };
    std::string value;
    if (value_of("--socket", &value)) {
      socket_flag = value;
    } else if (value_of("--timeout", &value)) {
      if (!absl::SimpleAtoi(value, &timeout_seconds) || timeout_seconds <= 0) {
        std::cerr << "hummingctl: --timeout must be a positive integer\n";
        return 2;
      }
    } else if (arg == "-h" || arg == "--help" || arg == "help") {
      std::cout << kUsage;
      return 0;
    } else {
      break;
    }
  }
  if (i >= args.size()) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = args[i];
  const std::vector<std::string> rest(args.begin() + i + 1, args.end());

  hummingd::CtlContext context;
  context.socket_path = hummingd::ResolveSocketPath(socket_flag);
  context.channel = hummingd::OpenDaemonChannel(context.socket_path);
  context.timeout_seconds = timeout_seconds;
  context.out = &std::cout;
  context.err = &std::cerr;

  if (command == "get") return hummingd::RunGetCommand(context, rest);
  if (command == "prefetch") return hummingd::RunPrefetchCommand(context, rest);
  if (command == "stats") return hummingd::RunStatsCommand(context, rest);
  if (command == "ls") return hummingd::RunListCommand(context, rest);
  if (command == "evict") return hummingd::RunEvictCommand(context, rest);
  if (command == "health") return hummingd::RunHealthCommand(context, rest);
  std::cerr << "hummingctl: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
