# Whether to build the Python binding (python/): on by default when Python 3's development files
# and pybind11 are found. Pick the interpreter with -DPython3_EXECUTABLE=/path/to/python3.
#
# NOTES: FindPython3 takes the first python3 on PATH. On these machines that is a pyenv shim whose
# interpreter has neither Debian's pybind11 nor python3-pytest, and which interpreter a shim runs
# depends on the directory it is run from. So unless the caller names an interpreter or works in
# an activated virtualenv, we prefer Debian's /usr/bin/python3, the one scripts/setup.sh equips.
if(NOT DEFINED Python3_EXECUTABLE AND NOT DEFINED ENV{VIRTUAL_ENV} AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python interpreter the binding is built for")
endif()

set(PYBIND11_FINDPYTHON ON)
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
if(Python3_FOUND)
  find_package(pybind11 CONFIG QUIET)
endif()
if(Python3_FOUND AND pybind11_FOUND)
  set(mqajit_python_found ON)
else()
  set(mqajit_python_found OFF)
endif()

option(MQAJIT_BUILD_PYTHON "Build the Python binding (needs pybind11 and Python 3 development files)"
       ${mqajit_python_found})
if(MQAJIT_BUILD_PYTHON AND NOT mqajit_python_found)
  message(FATAL_ERROR "MQAJIT_BUILD_PYTHON is ON but Python 3 development files or pybind11 were not found "
                      "for ${Python3_EXECUTABLE}: install python3-dev and pybind11-dev (scripts/setup.sh does), "
                      "pass -DPython3_EXECUTABLE=<interpreter with them>, or pass -DMQAJIT_BUILD_PYTHON=OFF")
endif()
if(MQAJIT_BUILD_PYTHON)
  message(STATUS "mqajit: Python binding for ${Python3_EXECUTABLE} (Python ${Python3_VERSION}, pybind11 ${pybind11_VERSION})")
endif()

if(MQAJIT_BUILD_PYTHON)
  set(MQAJIT_PYTHON_INSTALL_DIR "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages"
      CACHE STRING "Where `cmake --install` puts the mqajit Python package (relative to the prefix, or absolute)")
endif()

# Links a Python extension module so that it exports its PyInit_ function alone
# (cmake/python_extension.map says why).
function(mqajit_python_extension_exports target)
  set(map ${PROJECT_SOURCE_DIR}/cmake/python_extension.map)
  target_link_options(${target} PRIVATE -Wl,--version-script=${map})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
endfunction()
