#pragma once
// What an AMDGPU code object says about itself: the processor and feature flags it was built for,
// read from its ELF header, so a code object for another target is refused before the runtime sees it.

#include <optional>
#include <span>

#include "variants/arch.hpp"

namespace mqajit {

// The target of an AMDGPU ELF code object: `name` from e_flags' processor field ("gfx942") and, for
// code object v4 and later, `features` holding "sramecc+"/"sramecc-"/"xnack+"/"xnack-" for each
// setting the object fixes (a setting built as "any" is left out: it runs with either).
// nullopt when `binary` is not an AMDGPU ELF (too short, another machine, or an offload bundle).
// Throws Error(unsupported) for an AMDGPU processor this build does not know.
std::optional<Arch> amdgpu_code_object_target(std::span<const char> binary);

// EI_ABIVERSION of an AMDGPU code object: 2, 3, 4 for code object v4, v5, v6; -1 when not one.
int amdgpu_code_object_abi_version(std::span<const char> binary);

}  // namespace mqajit
