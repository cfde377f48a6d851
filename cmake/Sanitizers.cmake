# -DMQAJIT_SANITIZE=address,undefined builds every C++ target with those sanitizers (also `leak`
# or `thread`, alone). Run the suite with the options scripts/configs/sanitize.sh exports (it
# builds and runs such a configuration): they load tests/sanitizers/*.supp, which name the vendor
# libraries whose own leaks are not mqajit's (docs/testing.md).
set(MQAJIT_SANITIZE "" CACHE STRING "Sanitizers for every C++ target, comma-separated: address,undefined")
if(NOT MQAJIT_SANITIZE)
  return()
endif()

string(REPLACE "," ";" mqajit_sanitizers "${MQAJIT_SANITIZE}")
foreach(sanitizer IN LISTS mqajit_sanitizers)
  if(NOT sanitizer MATCHES "^(address|undefined|leak|thread)$")
    message(FATAL_ERROR "MQAJIT_SANITIZE: '${sanitizer}' is not one of address, undefined, leak, thread")
  endif()
endforeach()
# NOTES: UBSan findings abort (no recovery), so a test that triggers one fails instead of passing
# with a line in its log; frame pointers keep the reports' stacks whole.
set(mqajit_sanitize_flags -fsanitize=${MQAJIT_SANITIZE} -fno-omit-frame-pointer)
if("undefined" IN_LIST mqajit_sanitizers)
  list(APPEND mqajit_sanitize_flags -fno-sanitize-recover=undefined)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${mqajit_sanitize_flags}>")
add_link_options("$<$<LINK_LANGUAGE:CXX>:-fsanitize=${MQAJIT_SANITIZE}>")

