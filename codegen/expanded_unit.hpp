#pragma once
// The whole translation unit a compiler sees for a generated kernel (`mqajit codegen --expand`).

#include <string>

#include "codegen/kernel_family.hpp"

namespace mqajit {

// `kernel.source` with every `#include "name"` of one of `kernel.headers` replaced by that header's
// text, recursively and each header once (as their #pragma once has the compiler do), between
// `// ---- begin name ----` and `// ---- end name ----` lines. Other includes stay as written.
// The result compiles alone, with no headers, to the same kernel.
std::string expanded_unit(const GeneratedKernel& kernel);

}  // namespace mqajit
