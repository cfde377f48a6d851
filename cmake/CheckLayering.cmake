# cmake -DSOURCE_DIR=<tree> -P cmake/CheckLayering.cmake
# Fails, listing every offending line, when a folder of the library includes a folder its layer
# must not know (docs/runtime.md, "Layering"):
#   core       <- nothing of variants, codegen, runtime, tuning_db
#   variants   <- nothing of codegen, runtime, tuning_db
#   codegen    <- nothing of runtime, tuning_db
#   tuning_db  <- nothing of runtime
# and no library folder includes tools/, python/ or tests/.
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "CheckLayering.cmake: pass -DSOURCE_DIR=<source tree>")
endif()

set(above_library tools python tests examples)
set(forbidden_core variants codegen runtime tuning_db ${above_library})
set(forbidden_variants codegen runtime tuning_db ${above_library})
set(forbidden_codegen runtime tuning_db ${above_library})
set(forbidden_tuning_db runtime ${above_library})
set(forbidden_runtime ${above_library})

set(violations "")
set(checked 0)
foreach(layer core variants codegen tuning_db runtime)
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE ${SOURCE_DIR}
       ${SOURCE_DIR}/${layer}/*.cpp ${SOURCE_DIR}/${layer}/*.hpp ${SOURCE_DIR}/${layer}/*.cuh
       ${SOURCE_DIR}/${layer}/*.cu ${SOURCE_DIR}/${layer}/*.hip)
  foreach(file IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" included "${line}")
      string(REGEX MATCH "^[^/]+" top "${included}")
      if(NOT included MATCHES "/")
        continue()  # a template's neighbour, included by bare name
      endif()
      if(top IN_LIST forbidden_${layer})
        string(APPEND violations "  ${file} includes ${included} (${layer} must not know ${top}/)\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "CheckLayering.cmake: no sources found under ${SOURCE_DIR}")
endif()
if(violations)
  message(FATAL_ERROR "layering: includes that cross a layer the wrong way:\n${violations}")
endif()
message(STATUS "layering: ${checked} files, no include crosses a layer the wrong way")
