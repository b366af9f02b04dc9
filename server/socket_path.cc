#include "server/socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace hummingd {
namespace {

// True when something accepts connections on `path`.
bool SomeoneListens(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  const bool connected =
      connect(fd, reinterpret_cast<const sockaddr*>(&address),
              sizeof(address)) == 0;
  close(fd);
  return connected;
}

}  // namespace

absl::Status PrepareSocketPath(const std::string& path) {
  const std::filesystem::path socket_path(path);
  std::error_code error;
  if (socket_path.has_parent_path()) {
    std::filesystem::create_directories(socket_path.parent_path(), error);
    if (error) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--socket: cannot create folder ", socket_path.parent_path().string(),
          ": ", error.message()));
    }
  }
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("--socket: cannot stat ", path, ": ", strerror(errno)));
  }
  if (!S_ISSOCK(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket: ", path,
                     " exists and is not a socket; refusing to replace "
                     "it"));
  }
  if (SomeoneListens(path)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--socket: another server is already listening on ", path));
  }
  if (unlink(path.c_str()) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--socket: cannot remove stale socket ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status SetSocketMode(const std::string& path, unsigned mode) {
  if (chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot chmod socket ", path, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace hummingd
