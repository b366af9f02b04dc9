// Opens the store at argv[1] from a separate process and reports the result
// on stdout as "code=<int> message=<text>", so a test can check what a second
// hummingd on the same directory would see.

#include <cstdio>
#include <string>

#include "cache/kernel_store.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  hummingd::RocksStoreOptions options;
  options.directory = argv[1];
  auto store = hummingd::OpenRocksStore(options);
  const absl::Status status = store.status();
  const std::string message(status.message());
  std::printf("code=%d message=%s\n", static_cast<int>(status.code()),
              message.c_str());
  return 0;
}
