#pragma once
// What the test binary was built with, for the few tests whose limits depend on it.

namespace mqajit::testing {

// AddressSanitizer (-DMQAJIT_SANITIZE=address): it reserves terabytes of address space, so no
// `ulimit -v` under it, and its malloc makes the uninstrumented vendor libraries (NVRTC) slower.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace mqajit::testing
