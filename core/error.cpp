#include "mqajit/error.hpp"

#include "core/check.hpp"

namespace mqajit {

std::string_view to_string(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::invalid_argument: return "invalid argument";
        case ErrorKind::unsupported: return "unsupported";
        case ErrorKind::not_found: return "not found";
        case ErrorKind::compile_failed: return "compile failed";
        case ErrorKind::driver: return "driver error";
        case ErrorKind::database: return "database error";
        case ErrorKind::io: return "i/o error";
        case ErrorKind::internal: return "internal error";
    }
    return "unknown error";
}

namespace detail {

void throw_error(ErrorKind kind, std::string message) { throw Error(kind, message); }

}  // namespace detail
}  // namespace mqajit
