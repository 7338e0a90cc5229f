// Error channels of tcost.
//   InputError    - bad input a user can act on (a file, a flag, a schedule). The message names
//                   the file, the key, what was expected and what was found. Exit code 1.
//   UsageError    - a wrong command line. Exit code 2.
//   InternalError - a broken invariant inside tcost (a bug). Exit code 3.
// TCOST_CHECK(cond, ...) throws InternalError with a formatted message when cond is false.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tcost {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

}  // namespace tcost

#define TCOST_CHECK(cond, ...)                                                                   \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      throw ::tcost::InternalError(fmt::format("internal error at {}:{}: check '{}' failed: {}", \
                                               __FILE__, __LINE__, #cond,                        \
                                               fmt::format(__VA_ARGS__)));                       \
    }                                                                                            \
  } while (0)
