# ctest script: the pip wheel works in a new virtualenv. Builds the wheel from this build tree
# offline (`python3 -m build --no-isolation --wheel`, MQAJIT_CMAKE_BUILD_DIR), installs it into a
# fresh virtualenv with `pip install --no-index`, and from outside the source and build trees, with
# no PYTHONPATH, LD_LIBRARY_PATH or MQAJIT_SYSTEM_DB, checks that the package imports from the
# virtualenv, reports the project's version, answers a shipped tuned row from its own tables
# (lookup, explain) and gives runtime_status(); and that the `mqajit` command does the same.
# Arguments: SOURCE_DIR BUILD_DIR WORK_DIR PYTHON VERSION.
include(${CMAKE_CURRENT_LIST_DIR}/TestSupport.cmake)

execute_process(COMMAND ${PYTHON} -c "import build, ensurepip, setuptools, wheel" RESULT_VARIABLE missing
                OUTPUT_QUIET ERROR_QUIET)
if(missing)
  message("MQAJIT_SKIP: ${PYTHON} lacks build, venv, setuptools or wheel (Debian: python3-build python3-venv "
          "python3-setuptools python3-wheel; scripts/setup.sh installs them)")
  return()
endif()

file(REMOVE_RECURSE ${WORK_DIR})
run_checked(${CMAKE_COMMAND} -E env MQAJIT_CMAKE_BUILD_DIR=${BUILD_DIR}
            ${PYTHON} -m build --no-isolation --wheel --outdir ${WORK_DIR}/dist ${SOURCE_DIR} OUTPUT build_log)
file(GLOB wheels ${WORK_DIR}/dist/*.whl)
list(LENGTH wheels count)
expect_equal("${count}" "1" "wheels built")
get_filename_component(wheel_name ${wheels} NAME)
expect_match("${wheel_name}" "^mqajit-${VERSION}-cp[0-9]+-cp[0-9]+-linux_[a-z0-9_]+\\.whl$" "the wheel's name")
message(STATUS "built ${wheel_name}")

set(venv ${WORK_DIR}/venv)
run_checked(${PYTHON} -m venv ${venv})
run_checked(${venv}/bin/python -m pip install --no-index --quiet ${wheels})

set(clean_env ${CMAKE_COMMAND} -E env --unset=MQAJIT_SYSTEM_DB --unset=LD_LIBRARY_PATH --unset=PYTHONPATH
              MQAJIT_TUNING_DB=${WORK_DIR}/user/tuning.db MQAJIT_CACHE_DIR=${WORK_DIR}/cache)
shipped_tuned_row(${SOURCE_DIR}/tuning_db/configs/model_configs/glm5_tuned_mqa_logits.csv sm_90a row)
set(probe "import json, mqajit
row = mqajit.lookup(${row_python_args})
explained = mqajit.explain(${row_python_args})
status = mqajit.runtime_status()
print(json.dumps({'file': mqajit.__file__, 'version': mqajit.__version__, 'variant': row and row['variant'],
                  'system_db': explained.system_db, 'status': status.message}))")
run_checked(${clean_env} ${venv}/bin/python -c "${probe}" OUTPUT answer WORKING_DIRECTORY ${WORK_DIR})
message(STATUS "from the virtualenv: ${answer}")
json_fields("${answer}" wheel file version variant system_db status)
expect_inside("${wheel_file}" "${venv}" "the imported mqajit package")
expect_equal("${wheel_version}" "${VERSION}" "mqajit.__version__")
expect_equal("${wheel_variant}" "${row_variant}" "mqajit.lookup() from the wheel")
expect_inside("${wheel_system_db}" "${venv}" "the wheel's system database")
if(wheel_status STREQUAL "")
  message(FATAL_ERROR "runtime_status() from the wheel gave no message")
endif()

run_checked(${clean_env} ${venv}/bin/mqajit db lookup --json ${row_lookup_args} OUTPUT lookup
            WORKING_DIRECTORY ${WORK_DIR})
json_fields("${lookup}" cli kernel)
expect_equal("${cli_kernel}" "${row_variant}" "the wheel's `mqajit db lookup`")
run_checked(${clean_env} ${venv}/bin/mqajit --version OUTPUT cli_version WORKING_DIRECTORY ${WORK_DIR})
expect_match("${cli_version}" "${VERSION}" "the wheel's `mqajit --version`")
message(STATUS "the wheel works from a fresh virtualenv")
