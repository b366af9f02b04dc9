#pragma once

// RETURN_IF_ERROR / ASSIGN_OR_RETURN: the only way statuses propagate across
// our layers (STYLE.md, "Errors").

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HUMMINGD_CONCAT_INNER(a, b) a##b
#define HUMMINGD_CONCAT(a, b) HUMMINGD_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status hummingd_status_ = (expr);            \
    if (!hummingd_status_.ok()) return hummingd_status_; \
  } while (0)

#define HUMMINGD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  HUMMINGD_ASSIGN_OR_RETURN_IMPL(   \
      HUMMINGD_CONCAT(hummingd_statusor_, __LINE__), lhs, expr)
