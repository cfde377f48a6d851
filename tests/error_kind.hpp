#pragma once
// error_kind_of(f): the kind of the mqajit::Error that f() throws; the test fails when it throws none.

#include <doctest/doctest.h>

#include "mqajit/error.hpp"

namespace mqajit::testing {

template <typename Function>
ErrorKind error_kind_of(Function&& function) {
    try {
        function();
    } catch (const Error& e) {
        return e.kind();
    }
    FAIL("no mqajit::Error was thrown");
    return ErrorKind::internal;
}

}  // namespace mqajit::testing
