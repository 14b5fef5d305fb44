# The installed package as an application sees it (run by ctest as
# installed_package_builds_and_runs_examples_embed):
#   1. cmake --install BUILD --prefix WORK/prefix
#   2. configure and build examples/embed with only find_package(RingKernel)
#      and ringkernel_add_program
#   3. run it: 0 with a GPU (its totals are right), 2 without one, after
#      saying so; anything else fails.
# and checks that find_package(RingKernel 0.2) refuses the 0.1 install.
# cmake -DBUILD=... -DSOURCE=... -DWORK=... -DGENERATOR=... -P install_embed.cmake
foreach(_v BUILD SOURCE WORK GENERATOR)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "install_embed.cmake: -D${_v}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()
run("install" ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
foreach(_f include/ringkernel/runtime.h include/ringkernel/actor.cuh bin/actorc
           lib/cmake/RingKernel/RingKernelConfig.cmake lib/cmake/RingKernel/RingKernelConfigVersion.cmake)
  if(NOT EXISTS "${WORK}/prefix/${_f}")
    message(FATAL_ERROR "the install has no ${_f}")
  endif()
endforeach()
# The version file: 0.x matches only the same minor version.
file(WRITE "${WORK}/version_check/CMakeLists.txt"
     "cmake_minimum_required(VERSION 3.25)\nproject(version_check LANGUAGES CXX)\nfind_package(RingKernel 0.2 REQUIRED)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${WORK}/version_check" -B "${WORK}/version_check/build"
                        "-DCMAKE_PREFIX_PATH=${WORK}/prefix"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "version: 0\\.1\\.0")
  message(FATAL_ERROR "find_package(RingKernel 0.2) must fail against 0.1.0, naming it (${rc}):\n${out}\n${err}")
endif()
run("configuring examples/embed" ${CMAKE_COMMAND} -S "${SOURCE}/examples/embed" -B "${WORK}/embed" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
run("building examples/embed" ${CMAKE_COMMAND} --build "${WORK}/embed")
execute_process(COMMAND "${WORK}/embed/embed" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "embed exited ${rc}:\n${out}${err}")
if(rc EQUAL 2)
  if(NOT out MATCHES "no GPU to run on")
    message(FATAL_ERROR "embed exited 2 without saying there is no GPU")
  endif()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "embed failed")
endif()
