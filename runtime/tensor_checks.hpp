#pragma once
// The argument checks every operator's entry point runs on its TensorViews, with the messages
// that say what was passed and what is allowed (Error(invalid_argument)).

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <utility>

#include "mqajit/tensor.hpp"

namespace mqajit {

// Sizes and counts the kernels index with int32.
inline constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();

// A rank a TensorView can have (0 to kMaxRank), and data unless the view is empty (torch gives an
// empty tensor a null data pointer: check_sizes names its empty dimension). `dtype` and `layout`
// say in the message what to pass.
void check_present(const TensorView& t, const char* name, std::string_view dtype, std::string_view layout);
// Every size 1 to max_size; an empty dimension is named as such.
void check_sizes(const TensorView& t, const char* name, std::int64_t max_size = kMaxIndex);
// Not null, of `dtype` and `rank`, every size 1 to max_size, addressable (check_addressable);
// `layout` is what the message calls the expected shape, e.g. "[S, H, D]". An empty tensor (a size
// of 0; torch gives those a null data pointer) is refused for its size, not as a null pointer.
void check_tensor(const TensorView& t, const char* name, DType dtype, int rank, const char* layout,
                  std::int64_t max_size = kMaxIndex);
// The view's elements lie within 2^62 bytes of its first (sizes at least 1), so every offset the
// host or a kernel computes in int64 from its sizes and strides, in elements or bytes, stays
// representable.
void check_addressable(const TensorView& t, const char* name);
// `t` with the stride of every size-1 dimension set to what a dense layout gives it (1 for the
// last dimension, else the next dimension's stride times its size). Such a stride never addresses
// memory, and torch leaves it free: a contiguous [1, H, D] tensor may have strides [D, D, 1], a
// column of an [S, 2] tensor at S = 1 stride 2. The entry points check and use views made so.
TensorView with_dense_unit_strides(TensorView t);
// Throws Error(invalid_argument) when the bytes `output` spans (from its first element to its last)
// meet those of one of `others`: the kernels would overwrite what they read, or two outputs each
// other. Every view must have passed its entry point's checks (addressable, no negative strides);
// one with no data (values not asked for) is skipped. Conservative: two interleaved views (columns
// of one buffer) are refused.
void check_no_overlap(const TensorView& output, const char* name,
                      std::initializer_list<std::pair<const TensorView*, const char*>> others);
// Dimension `dim` of `t` equals `expected`, which `what` names ("H from q").
void check_size(const TensorView& t, const char* name, int dim, std::int64_t expected, const char* what);

}  // namespace mqajit
