# ringkernel_add_program(NAME
#                        SOURCES a.cu [b.cu ...]
#                        [ARCHS sm_89 sm_90]      (default: actorc's, sm_89 and sm_90)
#                        [MAX_PAYLOAD bytes]      (default: actorc's, 4096)
#                        [INCLUDE_DIRS dir ...] [DEFINES NAME[=VALUE] ...])
#
# Builds handler fragments into a package at build time, with
# `actorc build` and `actorc header`, again whenever a fragment changes, and
# gives the application an INTERFACE target NAME that carries:
#   * the generated host header, NAME.h (the program's message types, each
#     with RK_HOST_MESSAGE_LAYOUT, and the enums they use), on its include
#     path;
#   * the compile definition NAME_PACKAGE="<path of NAME.rkpkg>", for
#     Runtime::LoadPackage.
# A fragment's own #includes are not tracked: list them in SOURCES or touch
# the fragment.
function(ringkernel_add_program name)
  cmake_parse_arguments(P "" "MAX_PAYLOAD" "SOURCES;ARCHS;INCLUDE_DIRS;DEFINES" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "ringkernel_add_program(${name}): SOURCES is required")
  endif()
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ringkernel_add_program(${name}): unknown arguments: ${P_UNPARSED_ARGUMENTS}")
  endif()
  set(_sources "")
  foreach(_s IN LISTS P_SOURCES)
    get_filename_component(_abs "${_s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _sources "${_abs}")
  endforeach()
  set(_options "")
  if(P_ARCHS)
    list(JOIN P_ARCHS "," _archs)
    list(APPEND _options --arch "${_archs}")
  endif()
  if(P_MAX_PAYLOAD)
    list(APPEND _options --max-payload "${P_MAX_PAYLOAD}")
  endif()
  foreach(_d IN LISTS P_INCLUDE_DIRS)
    get_filename_component(_abs "${_d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _options -I "${_abs}")
  endforeach()
  foreach(_d IN LISTS P_DEFINES)
    list(APPEND _options -D "${_d}")
  endforeach()
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  set(_package "${_dir}/${name}.rkpkg")
  set(_header "${_dir}/${name}.h")
  add_custom_command(
    OUTPUT "${_package}" "${_header}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${_dir}"
    COMMAND ${CMAKE_COMMAND} -E env "RINGKERNEL_CACHE_DIR=${_dir}/cache"
            $<TARGET_FILE:RingKernel::actorc> build ${_sources} -o "${_package}" ${_options}
    COMMAND $<TARGET_FILE:RingKernel::actorc> header "${_package}" -o "${_header}"
    DEPENDS ${_sources} RingKernel::actorc
    COMMENT "actorc: building the RingKernel program ${name}"
    VERBATIM)
  add_custom_target(${name}_build DEPENDS "${_package}" "${_header}")
  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_build)
  target_include_directories(${name} INTERFACE "${_dir}")
  target_compile_definitions(${name} INTERFACE "${name}_PACKAGE=\"${_package}\"")
endfunction()
