#pragma once
// MQAJIT_CHECK(cond, "head_dim is {}; supported: 64, 128", d) throws mqajit::Error(invalid_argument).
// MQAJIT_CHECK_KIND(kind, cond, ...) and MQAJIT_FAIL(kind, ...) pick another kind.

#include <fmt/format.h>

#include "mqajit/error.hpp"

namespace mqajit::detail {

[[noreturn]] void throw_error(ErrorKind kind, std::string message);

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
    throw_error(kind, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace mqajit::detail

#define MQAJIT_FAIL(kind, ...) ::mqajit::detail::fail(::mqajit::ErrorKind::kind, __VA_ARGS__)

#define MQAJIT_CHECK_KIND(kind, cond, ...)     \
    do {                                       \
        if (!(cond)) [[unlikely]] {            \
            MQAJIT_FAIL(kind, __VA_ARGS__);    \
        }                                      \
    } while (false)

#define MQAJIT_CHECK(cond, ...) MQAJIT_CHECK_KIND(invalid_argument, cond, __VA_ARGS__)
