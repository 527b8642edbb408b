# FusecFunctions.cmake -- fusec_add_library(): turn .fuse files into a library.
#
# Installed next to fusecConfig.cmake (find_package(fusec) includes it) and
# included by the fusec source tree itself.  Needs the imported or alias target
# fusec::fusec (the compiler) and, to link, fusec::fusert or fusec::fusert_static.
#
#   fusec_add_library(<target> [STATIC|SHARED|OBJECT]
#                     SOURCES a.fuse [b.fuse ...]
#                     [TARGET cuda|nvrtc]          # default cuda
#                     [ARCH 80 90 ...]             # CUDA_ARCHITECTURES (cuda target)
#                     [IMPORT_DIRS dir ...]        # -I for `import`
#                     [DEFINES N=1024 ...]         # -D: make symbolic dims static
#                     [PREFIX NAME]                # --prefix: NAME before every exported symbol
#                     [OPTIONS --max-registers=96 ...]  # any other fusec options
#                     [RUNTIME shared|static])     # which fusert to link (default shared)
#
# Every .fuse becomes <binary dir>/fusec/<target>/<name>.cu (or .c) and
# <name>.h; the folder is a PUBLIC include directory, so users `#include
# "<name>.h"`.  fusec writes a depfile (-MD -MF) that lists every imported
# file, and the custom command passes it as DEPFILE (CMake >= 3.20, Makefile
# and Ninja generators): editing an imported .fuse regenerates exactly the
# modules that import it.  fusec leaves unchanged outputs untouched, and the
# generated files are byproducts of a stamp, so a regenerated-but-identical
# module does not recompile either (Makefile and Ninja generators).
include_guard(GLOBAL)

function(fusec_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 FA "STATIC;SHARED;OBJECT"
      "TARGET;RUNTIME;PREFIX" "SOURCES;ARCH;IMPORT_DIRS;DEFINES;OPTIONS")
  if(FA_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fusec_add_library(${name}): unknown arguments: ${FA_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT FA_SOURCES)
    message(FATAL_ERROR "fusec_add_library(${name}): no SOURCES given")
  endif()
  if(NOT TARGET fusec::fusec)
    message(FATAL_ERROR "fusec_add_library: the fusec::fusec target is missing (find_package(fusec) first)")
  endif()
  if(NOT FA_TARGET)
    set(FA_TARGET cuda)
  endif()
  if(FA_TARGET STREQUAL "cuda")
    set(ext .cu)
    get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST langs)
      message(FATAL_ERROR "fusec_add_library(${name}): TARGET cuda needs the CUDA language "
                          "(project(... LANGUAGES C CUDA) or enable_language(CUDA)); "
                          "or use TARGET nvrtc with a C compiler only")
    endif()
  elseif(FA_TARGET STREQUAL "nvrtc")
    set(ext .c)
  else()
    message(FATAL_ERROR "fusec_add_library(${name}): TARGET must be cuda or nvrtc, not '${FA_TARGET}'")
  endif()

  set(args --target=${FA_TARGET})
  foreach(d IN LISTS FA_IMPORT_DIRS)
    get_filename_component(d "${d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args -I "${d}")
  endforeach()
  foreach(d IN LISTS FA_DEFINES)
    list(APPEND args -D "${d}")
  endforeach()
  if(FA_PREFIX)
    list(APPEND args --prefix=${FA_PREFIX})
  endif()
  list(APPEND args ${FA_OPTIONS})

  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/fusec/${name}")
  file(MAKE_DIRECTORY "${outdir}")
  set(generated)
  foreach(src IN LISTS FA_SOURCES)
    get_filename_component(src "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${src}" NAME_WE)
    set(out "${outdir}/${stem}${ext}")
    set(hdr "${outdir}/${stem}.h")
    set(dep "${outdir}/${stem}.d")
    # fusec does not rewrite an output whose content is unchanged.  The stamp,
    # the command's only OUTPUT (and the depfile's target), records that the
    # command ran; the .cu/.c and .h are BYPRODUCTS, so no rule touches them
    # (Ninja restats them, the Makefile generator reads their own times):
    # an edit that changes no output recompiles and relinks nothing.
    set(stamp "${outdir}/${stem}.stamp")
    add_custom_command(
      OUTPUT "${stamp}"
      BYPRODUCTS "${out}" "${hdr}"
      COMMAND fusec::fusec ${args} -MD -MF "${dep}" -MT "${stamp}" -o "${out}" "${src}"
      COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
      DEPENDS "${src}" fusec::fusec
      DEPFILE "${dep}"
      COMMENT "fusec ${stem}.fuse -> ${stem}${ext}"
      VERBATIM)
    # the stamp as a source runs the command in this target, before its compiles
    list(APPEND generated "${out}" "${hdr}" "${stamp}")
  endforeach()

  set(kind)
  foreach(k STATIC SHARED OBJECT)
    if(FA_${k})
      set(kind ${k})
    endif()
  endforeach()
  add_library(${name} ${kind} ${generated})
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${outdir}>")
  if(FA_TARGET STREQUAL "cuda")
    if(FA_ARCH)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${FA_ARCH}")
    endif()
    if(kind STREQUAL "SHARED" OR BUILD_SHARED_LIBS)
      set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
  endif()

  # The generated code calls fusert (statuses, errors; NVRTC and the driver
  # API for the nvrtc target).
  if(FA_RUNTIME STREQUAL "static" AND TARGET fusec::fusert_static)
    target_link_libraries(${name} PUBLIC fusec::fusert_static)
  elseif(TARGET fusec::fusert)
    target_link_libraries(${name} PUBLIC fusec::fusert)
  elseif(TARGET fusec::fusert_static)
    target_link_libraries(${name} PUBLIC fusec::fusert_static)
  else()
    message(WARNING "fusec_add_library(${name}): no fusert runtime target; "
                    "the generated code needs fusert.h and libfusert to build and link")
  endif()
endfunction()
