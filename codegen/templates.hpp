#pragma once

#include <span>
#include <string_view>

#include "codegen/embedded_file.hpp"

namespace mqajit {

// Every template (codegen/templates/*.cuh and codegen/families/*/*.cuh), by file name (generated
// at build time). Names are unique across the folders: sources include them by bare name.
std::span<const EmbeddedFile> embedded_templates();

// `header` and every template it includes, directly or through another: what a source that
// includes `header` needs, and all that goes into its cache key. Throws Error(internal) when
// `header` or a template it includes is not embedded.
std::span<const EmbeddedFile> templates_included_by(std::string_view header);

}  // namespace mqajit
