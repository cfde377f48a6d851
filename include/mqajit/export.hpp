#pragma once
// libmqajit is built with hidden visibility: only what MQAJIT_API marks is exported, which is the
// API of include/mqajit (cmake/TestExportedSymbols.cmake checks the shared library's list). Mark
// every function and class with out-of-line members that a new public header declares.

#define MQAJIT_API __attribute__((visibility("default")))
