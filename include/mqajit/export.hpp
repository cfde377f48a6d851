#pragma once
// libmqajit is built with hidden visibility: only what this header marks is exported, which is
// the API of include/mqajit (tests/check_exported_symbols.cmake checks the shared library's list).

#define MQAJIT_API __attribute__((visibility("default")))
