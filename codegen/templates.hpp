#pragma once

#include <span>

#include "codegen/embedded_file.hpp"

namespace mqajit {

// Every codegen/templates/*.cuh, by file name (generated at build time).
std::span<const EmbeddedFile> embedded_templates();

}  // namespace mqajit
