#pragma once
// The one exception type mqajit raises. Its message says what went wrong and what to do about it.

#include <stdexcept>
#include <string>
#include <string_view>

#include "mqajit/export.hpp"

namespace mqajit {

enum class ErrorKind {
    invalid_argument,  // the caller passed something mqajit cannot accept
    unsupported,       // valid, but not supported by this build, arch or variant
    not_found,         // a file, symbol, library or row is missing
    compile_failed,    // NVRTC / hiprtc / nvcc rejected generated source
    driver,            // the GPU driver returned an error
    database,          // SQLite or a tuning-table file misbehaved
    io,                // a filesystem operation failed
    internal,          // a bug in mqajit
};

MQAJIT_API std::string_view to_string(ErrorKind kind);

class MQAJIT_API Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message)
        : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const noexcept { return kind_; }

private:
    ErrorKind kind_;
};

}  // namespace mqajit
