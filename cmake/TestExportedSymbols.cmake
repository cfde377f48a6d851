# ctest script: libmqajit.so exports only the API of include/mqajit. Every defined dynamic symbol,
# demangled, must belong to mqajit's public types and functions (or be typeinfo/vtable of one);
# anything else is an internal that leaked (a missing hidden visibility, an assembler .global).
# Arguments: LIBRARY NM.
execute_process(COMMAND ${NM} -D -C --defined-only ${LIBRARY} RESULT_VARIABLE result OUTPUT_VARIABLE listing)
if(result)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
# NOTES: the public API: declared in include/mqajit (error.hpp, tensor.hpp, mqa_logits.hpp, mqa_topk.hpp, paged_mqa_logits.hpp, status.hpp).
set(api "^(typeinfo (name )?for |vtable for )?mqajit::(Error|ErrorKind|DType|TensorView|RuntimeStatus|to_string|element_size_bytes|mqa_logits|mqa_logits_reference|mqa_topk|mqa_topk_row_bytes|mqa_topk_workspace_bytes|parse_mqa_topk_path|paged_mqa_logits|paged_mqa_logits_reference|runtime_status)([:([]|$)")
set(count 0)
set(leaks "")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  # "<address> <type> <name>"
  string(REGEX REPLACE "^[0-9a-f]* +[A-Za-z] " "" name "${line}")
  math(EXPR count "${count} + 1")
  if(NOT name MATCHES "${api}")
    string(APPEND leaks "  ${name}\n")
  endif()
endforeach()
message(STATUS "${LIBRARY} exports ${count} symbol(s)")
if(leaks)
  message(FATAL_ERROR "${LIBRARY} exports symbols outside the public API:\n${leaks}")
endif()
