# ctest script: the installed package works on its own, from wherever its prefix is moved.
# Installs the build into a scratch prefix, moves the prefix (so no path the build knows leads to
# it), then with no MQAJIT_SYSTEM_DB, no LD_LIBRARY_PATH and an empty user database:
#   - `mqajit db lookup` (the installed CLI) answers a shipped tuned row from the moved prefix's table;
#   - the installed Python package (when PYTHON is given) does the same through mqajit.explain();
#   - examples/ (WITH_CUDA; without CUDA a probe program), built with find_package(mqajit) against the
#     moved prefix, runs and reports the moved prefix's table (runtime_status() through libmqajit itself);
#   - a program built with `pkg-config --cflags --libs mqajit` links, runs and catches an
#     mqajit::Error the library throws.
# Arguments: BUILD_DIR SOURCE_DIR WORK_DIR WITH_CUDA [PYTHON PYTHON_INSTALL_DIR] [PKG_CONFIG].
include(${CMAKE_CURRENT_LIST_DIR}/TestSupport.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
set(staged ${WORK_DIR}/staged)
set(prefix ${WORK_DIR}/moved)
run_checked(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staged})
file(RENAME ${staged} ${prefix})
set(clean_env ${CMAKE_COMMAND} -E env --unset=MQAJIT_SYSTEM_DB --unset=LD_LIBRARY_PATH --unset=PYTHONPATH
              MQAJIT_TUNING_DB=${WORK_DIR}/user/tuning.db MQAJIT_CACHE_DIR=${WORK_DIR}/cache)
set(table ${prefix}/share/mqajit/system_tuning.db)

# A shipped sm_90a row: the installed table must answer it with the row's own variant.
shipped_tuned_row(${SOURCE_DIR}/tuning_db/configs/model_configs/glm5_tuned_mqa_logits.csv sm_90a row)
message(STATUS "looking up ${row_shape} (shipped variant ${row_variant})")

run_checked(${clean_env} ${prefix}/bin/mqajit db lookup --json ${row_lookup_args} OUTPUT lookup)
json_fields("${lookup}" cli kernel system_db)
expect_equal("${cli_kernel}" "${row_variant}" "the installed CLI's lookup")
expect_equal("${cli_system_db}" "${table}" "the installed CLI's system database")

if(PYTHON)
  # NOTES: lines, not semicolons, which CMake would take for list separators.
  set(probe "import json, mqajit\ne = mqajit.explain(${row_python_args})\nprint(json.dumps({'kernel': e.kernel, 'system_db': e.system_db, 'file': mqajit.__file__}))")
  run_checked(${clean_env} PYTHONPATH=${prefix}/${PYTHON_INSTALL_DIR} ${PYTHON} -c "${probe}" OUTPUT explained
              WORKING_DIRECTORY ${WORK_DIR})
  json_fields("${explained}" python kernel system_db file)
  expect_equal("${python_kernel}" "${row_variant}" "the installed Python package's explain()")
  expect_equal("${python_system_db}" "${table}" "the installed Python package's system database")
  expect_inside("${python_file}" "${prefix}" "the imported mqajit package")
endif()

# NOTES: the probe also catches the library's exception by its type, across libmqajit.so's
# boundary, which hidden visibility must leave working (mqajit::Error's RTTI is exported).
file(WRITE ${WORK_DIR}/probe/probe.cpp [=[
#include <mqajit/mqajit.hpp>
#include <cstdio>
int main() {
    std::printf("%s %s\n", mqajit::kVersion, mqajit::runtime_status().system_db.c_str());
    const mqajit::TensorView none;
    try {
        mqajit::mqa_logits(none, none, none, none, none, none, none);
    } catch (const mqajit::Error& e) {
        std::printf("caught mqajit::Error: %s\n", std::string(mqajit::to_string(e.kind())).c_str());
    }
}
]=])
set(probe_expected "${table}\ncaught mqajit::Error: invalid argument")

if(WITH_CUDA)
  run_checked(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/example -G Ninja -DCMAKE_PREFIX_PATH=${prefix})
  run_checked(${CMAKE_COMMAND} --build ${WORK_DIR}/example)
  run_checked(${clean_env} ${WORK_DIR}/example/indexer_example OUTPUT output)
  expect_match("${output}" "mqajit [0-9]+\\.[0-9]+\\.[0-9]+" "the example's version line")
  expect_match("${output}" "tuning table: ${table}" "libmqajit's own system database (the example's status line)")
else()
  # NOTES: examples/ allocates with the CUDA runtime; without CUDA the probe is the CMake consumer.
  file(WRITE ${WORK_DIR}/probe/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(mqajit_probe LANGUAGES CXX)
find_package(mqajit REQUIRED)
add_executable(probe probe.cpp)
target_link_libraries(probe PRIVATE mqajit::mqajit)
]=])
  run_checked(${CMAKE_COMMAND} -S ${WORK_DIR}/probe -B ${WORK_DIR}/probe-build -G Ninja -DCMAKE_PREFIX_PATH=${prefix})
  run_checked(${CMAKE_COMMAND} --build ${WORK_DIR}/probe-build)
  run_checked(${clean_env} ${WORK_DIR}/probe-build/probe OUTPUT probe)
  expect_match("${probe}" "^[0-9]+\\.[0-9]+\\.[0-9]+ " "the find_package(mqajit) program's version")
  expect_match("${probe}" " ${probe_expected}$" "a program built with find_package(mqajit)")
endif()

if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  run_checked(${PKG_CONFIG} --modversion mqajit OUTPUT pc_version)
  run_checked(${PKG_CONFIG} --cflags --libs mqajit OUTPUT pc_flags)
  # NOTES: the .pc file finds the prefix from its own folder (${pcfiledir}/../..), so the moved one.
  string(REGEX MATCH "-I([^ ]+)" include_flag "${pc_flags}")
  file(REAL_PATH "${CMAKE_MATCH_1}" include_dir)
  expect_equal("${include_dir}" "${prefix}/include" "pkg-config --cflags")
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run_checked(c++ -std=c++17 ${WORK_DIR}/probe/probe.cpp ${pc_flags} -Wl,-rpath,${prefix}/lib -o ${WORK_DIR}/pc_probe)
  run_checked(${clean_env} ${WORK_DIR}/pc_probe OUTPUT probe)
  expect_equal("${probe}" "${pc_version} ${probe_expected}" "a program built with pkg-config")
endif()
message(STATUS "the moved install serves its own tables")
