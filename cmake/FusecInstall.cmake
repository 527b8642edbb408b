# FusecInstall.cmake -- install rules that make an installed fusec usable from
# other projects: find_package(fusec) (config + exported targets + the
# fusec_add_library function), pkg-config for the runtime (fusert.pc), and the
# man page.  Included once from the top CMakeLists.txt, after the compiler and
# the runtime targets exist.
#
# Export set fusecTargets: fusec (here), fusert and fusert_static (the runtime's
# own install(TARGETS ... EXPORT fusecTargets) in runtime/CMakeLists.txt).
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(FUSEC_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/fusec"
    CACHE STRING "Where fusecConfig.cmake is installed (relative to the prefix)")

# In the source tree too, fusec_add_library() finds the compiler as fusec::fusec.
if(NOT TARGET fusec::fusec)
  add_executable(fusec::fusec ALIAS fusec)
endif()
foreach(rt fusert fusert_static)
  if(TARGET ${rt} AND NOT TARGET fusec::${rt})
    add_library(fusec::${rt} ALIAS ${rt})
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/FusecFunctions.cmake)

# The compiler joins the export set (the plain install rule in the top
# CMakeLists.txt installs the same file; this one records it for the config).
install(TARGETS fusec EXPORT fusecTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT fusecTargets NAMESPACE fusec:: DESTINATION ${FUSEC_CMAKE_DIR}
        FILE fusecTargets.cmake)

if(TARGET fusert OR TARGET fusert_static)
  set(FUSEC_CONFIG_NEEDS_CUDA 1)
else()
  set(FUSEC_CONFIG_NEEDS_CUDA 0)
endif()
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/fusecConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cmake/fusecConfig.cmake
  INSTALL_DESTINATION ${FUSEC_CMAKE_DIR})
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/cmake/fusecConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmake/fusecConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/cmake/fusecConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/FusecFunctions.cmake
        DESTINATION ${FUSEC_CMAKE_DIR})

# pkg-config for the runtime: `cc prog.c $(pkg-config --cflags --libs fusert)`.
if(TARGET fusert OR TARGET fusert_static)
  # Relocatable: the prefix is found from where fusert.pc lies (pkg-config's
  # pcfiledir), so `cmake --install --prefix P` and moved trees both work.
  file(RELATIVE_PATH FUSEC_PC_UP "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" FUSEC_PC_UP "${FUSEC_PC_UP}")
  set(FUSEC_PC_PREFIX "\${pcfiledir}/${FUSEC_PC_UP}")
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(FUSEC_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  else()
    set(FUSEC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(FUSEC_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  else()
    set(FUSEC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  # What a static link of libfusert also needs: NVRTC (the driver is dlopen()ed).
  set(FUSEC_PC_LIBS_PRIVATE "-lnvrtc -lpthread -ldl -lm")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_LIBRARY_DIR)
    set(FUSEC_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} ${FUSEC_PC_LIBS_PRIVATE}")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/fusert.pc.in
                 ${CMAKE_CURRENT_BINARY_DIR}/cmake/fusert.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cmake/fusert.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# The man page.
if(EXISTS ${PROJECT_SOURCE_DIR}/docs/fusec.1)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/fusec.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# Golden tests for users (docs/golden-tests.md): the lit configuration that
# finds fusec and FileCheck, and two example tests, as a folder to copy.
install(FILES ${PROJECT_SOURCE_DIR}/examples/golden/lit.cfg.py
              ${PROJECT_SOURCE_DIR}/examples/golden/softmax.fuse
              ${PROJECT_SOURCE_DIR}/examples/golden/bias_gelu.fuse
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fusec/golden)
