# What `cmake --install` puts where, by component (`--component X` installs one):
#   library: libmqajit, the public headers, the CMake package and the pkg-config file, LICENSE
#   data:    the system tuning database and the shipped CSVs (share/mqajit)
#   cli:     the `mqajit` command and its CMake target file
#   python:  the Python package (python/CMakeLists.txt)
# Every path is relative to the prefix: the install can be moved (tuning_db/locations.cpp).
include(CMakePackageConfigHelpers)

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mqajit)
install(TARGETS ${MQAJIT_PACKAGE_LIBRARY} EXPORT mqajitTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT library
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT library)
install(DIRECTORY include/mqajit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT library
        FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/mqajit/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mqajit
        COMPONENT library)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/mqajit COMPONENT library)
install(EXPORT mqajitTargets NAMESPACE mqajit:: DESTINATION ${package_dir} COMPONENT library)

set_target_properties(mqajit_cli PROPERTIES EXPORT_NAME cli)
install(TARGETS mqajit_cli EXPORT mqajitCliTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(EXPORT mqajitCliTargets NAMESPACE mqajit:: DESTINATION ${package_dir} COMPONENT cli)

# The config file finds the static library's link dependencies itself (find_dependency).
# pkg-config's Requires.private also feeds --cflags, so only a static package names them.
if(BUILD_SHARED_LIBS)
  set(MQAJIT_STATIC_PACKAGE OFF)
  set(MQAJIT_PC_PRIVATE "")
else()
  set(MQAJIT_STATIC_PACKAGE ON)
  set(MQAJIT_PC_PRIVATE "Requires.private: spdlog fmt sqlite3\nLibs.private: -pthread")
  if(CMAKE_DL_LIBS)
    string(APPEND MQAJIT_PC_PRIVATE " -l${CMAKE_DL_LIBS}")
  endif()
endif()
configure_package_config_file(cmake/mqajitConfig.cmake.in ${PROJECT_BINARY_DIR}/mqajitConfig.cmake
                              INSTALL_DESTINATION ${package_dir})
# NOTES: 0.x minor versions may break the ABI (see the SONAME), so 0.1 accepts only 0.1.x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mqajitConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mqajitConfig.cmake ${PROJECT_BINARY_DIR}/mqajitConfigVersion.cmake
        DESTINATION ${package_dir} COMPONENT library)

# pkg-config: the prefix is found from the .pc file's own folder, so a moved install still works.
set(pkgconfig_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
cmake_path(ABSOLUTE_PATH pkgconfig_dir BASE_DIRECTORY ${CMAKE_INSTALL_PREFIX} OUTPUT_VARIABLE pkgconfig_full_dir)
file(RELATIVE_PATH MQAJIT_PC_PREFIX_FROM_PCFILEDIR ${pkgconfig_full_dir} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" MQAJIT_PC_PREFIX_FROM_PCFILEDIR "/${MQAJIT_PC_PREFIX_FROM_PCFILEDIR}")
configure_file(cmake/mqajit.pc.in ${PROJECT_BINARY_DIR}/mqajit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mqajit.pc DESTINATION ${pkgconfig_dir} COMPONENT library)
