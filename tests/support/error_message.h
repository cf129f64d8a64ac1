// The message of the disco::Error that `f` throws; "" when it throws none.
#pragma once
#include <functional>
#include <string>

#include "frontend/errors.h"

namespace disco::testing {

inline std::string error_message(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

}  // namespace disco::testing
