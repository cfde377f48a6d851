# mqajit_embed_text(OUTPUT out.cpp NAMESPACE ns FUNCTION fn FILES a.cuh b.cuh)
# writes a .cpp defining `std::span<const EmbeddedFile> ns::fn()` with each file's name and text,
# so NVRTC gets the kernel templates from the library itself, not from the filesystem.
function(mqajit_embed_text)
  cmake_parse_arguments(ARG "" "OUTPUT;NAMESPACE;FUNCTION" "FILES" ${ARGN})
  # NOTES: generated at configure time, because a custom command's output cannot feed a target
  # defined in another directory; CMAKE_CONFIGURE_DEPENDS re-runs it whenever a template changes.
  set(OUTPUT ${ARG_OUTPUT})
  set(NAMESPACE ${ARG_NAMESPACE})
  set(FUNCTION ${ARG_FUNCTION})
  set(FILES ${ARG_FILES})
  include(${PROJECT_SOURCE_DIR}/cmake/EmbedTextScript.cmake)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARG_FILES})
endfunction()

# mqajit_embed_binary(OUTPUT out.S SYMBOL name FILE blob) wraps a binary file in an assembler
# source exposing `name` and `name_size` to the library's code (hidden: libmqajit does not export them).
function(mqajit_embed_binary)
  cmake_parse_arguments(ARG "" "OUTPUT;SYMBOL;FILE" "" ${ARGN})
  file(WRITE ${ARG_OUTPUT}.in
"    .section .rodata
    .global ${ARG_SYMBOL}
    .global ${ARG_SYMBOL}_size
    .hidden ${ARG_SYMBOL}
    .hidden ${ARG_SYMBOL}_size
    .balign 64
${ARG_SYMBOL}:
    .incbin \"${ARG_FILE}\"
${ARG_SYMBOL}_end:
    .balign 8
${ARG_SYMBOL}_size:
    .quad ${ARG_SYMBOL}_end - ${ARG_SYMBOL}
    .section .note.GNU-stack,\"\",@progbits
")
  configure_file(${ARG_OUTPUT}.in ${ARG_OUTPUT} COPYONLY)
  set_source_files_properties(${ARG_OUTPUT} PROPERTIES OBJECT_DEPENDS ${ARG_FILE})
endfunction()
