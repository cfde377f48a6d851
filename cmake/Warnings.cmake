# mqajit_warnings(target...): the warning set every mqajit target compiles its C++ with (the library,
# the CLI, tests, benchmarks, the Python extension); a build of this tree has no warning.
# -DMQAJIT_WARNINGS_AS_ERRORS=ON makes them errors.
function(mqajit_warnings)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
    if(MQAJIT_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endforeach()
endfunction()
