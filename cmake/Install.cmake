include(CMakePackageConfigHelpers)

install(TARGETS mqajit EXPORT mqajitTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mqajit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/mqajit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY tuning_db/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mqajit/configs)

install(EXPORT mqajitTargets NAMESPACE mqajit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mqajit)
configure_package_config_file(cmake/mqajitConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/mqajitConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mqajit)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mqajitConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mqajitConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/mqajitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mqajit)
