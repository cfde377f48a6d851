# ctest script: a static libmqajit (-DBUILD_SHARED_LIBS=OFF) is consumable. Configures this source
# tree static into WORK_DIR, builds only the library (unoptimized, one CUDA arch, no AMD baseline:
# the package is under test, not the code), installs its `library` component, builds examples/
# against it with find_package(mqajit) (which must find the static library's dependencies itself),
# and runs the example. Arguments: SOURCE_DIR WORK_DIR CUDA_COMPILER.
include(${CMAKE_CURRENT_LIST_DIR}/TestSupport.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_checked(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja -DBUILD_SHARED_LIBS=OFF
            -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=${prefix} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
            -DMQAJIT_BUILD_TESTS=OFF -DMQAJIT_BUILD_BENCHMARKS=OFF -DMQAJIT_BUILD_PYTHON=OFF
            -DMQAJIT_BUILD_AMD_BASELINE=OFF -DMQAJIT_CUDA_ARCHS=90)
run_checked(${CMAKE_COMMAND} --build ${WORK_DIR}/build --target mqajit)
run_checked(${CMAKE_COMMAND} --install ${WORK_DIR}/build --component library)
if(NOT EXISTS ${prefix}/lib/libmqajit.a OR EXISTS ${prefix}/lib/libmqajit.so)
  message(FATAL_ERROR "the static build did not install lib/libmqajit.a alone")
endif()
run_checked(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/example -G Ninja -DCMAKE_PREFIX_PATH=${prefix})
run_checked(${CMAKE_COMMAND} --build ${WORK_DIR}/example)
run_checked(${WORK_DIR}/example/indexer_example OUTPUT output)
expect_match("${output}" "mqajit [0-9]+\\.[0-9]+\\.[0-9]+" "the static example's version line")
message(STATUS "the static package builds and runs the example:\n${output}")
