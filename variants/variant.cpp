#include "variants/variant.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "core/check.hpp"

namespace mqajit {
namespace {

constexpr std::string_view kGrammar = "<op><M>x<N>x<K>_bkv<B>_r<R>_w<W>[_lds<S>]";
constexpr std::string_view kExample = "wgmma64x128x32_bkv128_r4_w2_lds4";
// NOTES: seven digits keep every product the rules compute (e.g. S*B*D) far from int64 overflow.
constexpr std::size_t kMaxDigits = 7;

struct OpSpelling {
    MatrixOp op;
    std::string_view text;
};
constexpr std::array kOps = {OpSpelling{MatrixOp::wgmma, "wgmma"}, OpSpelling{MatrixOp::mma, "mma"},
                             OpSpelling{MatrixOp::mfma, "mfma"}, OpSpelling{MatrixOp::pwgmma, "pwgmma"},
                             OpSpelling{MatrixOp::pmfma, "pmfma"}, OpSpelling{MatrixOp::twgmma, "twgmma"}};

// The "_<tag><value>" fields after the shape, in the order they must appear.
enum FieldIndex : std::size_t { kBkv, kRows, kWarps, kStages, kNumFields };
constexpr std::array<std::string_view, kNumFields> kFieldTags = {"bkv", "r", "w", "lds"};
constexpr std::size_t kNumRequiredFields = 3;

[[noreturn]] void reject(std::string_view name, std::string_view problem) {
    MQAJIT_FAIL(invalid_argument, "variant '{}': {}; expected {}, e.g. {}", name, problem, kGrammar, kExample);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

int parse_number(std::string_view name, std::string_view field, std::string_view text) {
    if (text.empty() || !std::ranges::all_of(text, is_digit) || text.size() > kMaxDigits || text == "0") {
        reject(name, fmt::format("field '{}' must be a positive integer, got '{}'", field, text));
    }
    if (text.front() == '0') {
        reject(name, fmt::format("field '{}' must be written without leading zeros, got '{}'", field, text));
    }
    int value = 0;
    for (char c : text) value = value * 10 + (c - '0');
    return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    for (;;) {
        const std::size_t at = text.find(separator);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) return parts;
        text.remove_prefix(at + 1);
    }
}

// NOTES: matched as a prefix, not as the run of letters, because the shape separator 'x' is a letter too
// ("wgmmax128x32" is the wgmma op with M missing, not an op called "wgmmax").
MatrixOp parse_op(std::string_view name, std::string_view head, std::size_t* op_length) {
    for (const OpSpelling& spelling : kOps) {
        if (head.starts_with(spelling.text)) {
            *op_length = spelling.text.size();
            return spelling.op;
        }
    }
    const std::string_view letters(head.begin(), std::ranges::find_if_not(head, is_letter));
    reject(name, fmt::format("unknown op '{}'; the name starts with wgmma, mma, mfma, pwgmma, pmfma or twgmma", letters));
}

struct FieldText {
    std::size_t index;
    std::string_view value;
};

// Names each "_..." segment's field and checks presence and order; values are parsed afterwards.
std::vector<FieldText> split_fields(std::string_view name, const std::vector<std::string_view>& segments) {
    std::vector<FieldText> fields;
    for (std::size_t s = 1; s < segments.size(); ++s) {
        const std::string_view segment = segments[s];
        if (segment.empty()) reject(name, "there is an empty field (a stray or doubled '_')");
        const auto tag = std::ranges::find_if(kFieldTags, [&](std::string_view t) { return segment.starts_with(t); });
        if (tag == kFieldTags.end()) {
            reject(name, fmt::format("unknown field '{}'; fields are _bkv<B>, _r<R>, _w<W>, _lds<S> in that order",
                                     segment));
        }
        const auto index = static_cast<std::size_t>(tag - kFieldTags.begin());
        for (const FieldText& seen : fields) {
            if (seen.index == index) reject(name, fmt::format("field '{}' appears twice", *tag));
        }
        if (!fields.empty() && fields.back().index > index) {
            reject(name, fmt::format("field '{}' is out of order; fields go _bkv, _r, _w, _lds", *tag));
        }
        fields.push_back({index, segment.substr(tag->size())});
    }
    for (std::size_t required = 0; required < kNumRequiredFields; ++required) {
        const bool present = std::ranges::any_of(fields, [&](const FieldText& f) { return f.index == required; });
        if (!present) {
            reject(name, fmt::format("field '{}' is missing (write it as _{}<number>)", kFieldTags[required],
                                     kFieldTags[required]));
        }
    }
    return fields;
}

}  // namespace

std::string_view to_string(MatrixOp op) {
    for (const OpSpelling& spelling : kOps) {
        if (spelling.op == op) return spelling.text;
    }
    return "unknown";
}

Variant Variant::parse(std::string_view name) {
    if (name.empty()) reject(name, "the name is empty");
    const std::vector<std::string_view> segments = split(name, '_');

    Variant variant;
    std::size_t op_length = 0;
    variant.op = parse_op(name, segments.front(), &op_length);
    const std::string_view shape = segments.front().substr(op_length);
    const std::vector<std::string_view> dims = split(shape, 'x');
    if (dims.size() != 3) {
        reject(name, fmt::format("the shape after '{}' must be <M>x<N>x<K>, got '{}'", to_string(variant.op), shape));
    }
    variant.m = parse_number(name, "M", dims[0]);
    variant.n = parse_number(name, "N", dims[1]);
    variant.k = parse_number(name, "K", dims[2]);

    std::array<int*, kNumFields> targets = {&variant.bkv, &variant.rows, &variant.warps, &variant.stages};
    for (const FieldText& field : split_fields(name, segments)) {
        *targets[field.index] = parse_number(name, kFieldTags[field.index], field.value);
    }
    return variant;
}

std::string Variant::name() const {
    std::string text = fmt::format("{}{}x{}x{}_bkv{}_r{}_w{}", to_string(op), m, n, k, bkv, rows, warps);
    if (stages > 0) text += fmt::format("_lds{}", stages);
    return text;
}

}  // namespace mqajit
