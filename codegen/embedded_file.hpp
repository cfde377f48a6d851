#pragma once

#include <span>
#include <string_view>

namespace mqajit {

struct EmbeddedFile {
    std::string_view name;  // e.g. "sm90_mqa_logits.cuh", as the generated source #includes it
    std::string_view text;
};

}  // namespace mqajit
