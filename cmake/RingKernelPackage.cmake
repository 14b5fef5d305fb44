# The targets applications use, and the installed CMake package.
#
#   RingKernel::runtime   the host API (include/ringkernel/*.h) and everything
#                         it links: the runtime, the JIT pipeline, NVRTC
#   RingKernel::actorc    the command-line compiler
#   ringkernel_add_program(...)   cmake/RingKernelProgram.cmake
#
# In the tree (and through add_subdirectory or FetchContent) these are
# aliases; `cmake --install` puts the headers, the static libraries, actorc
# and lib/cmake/RingKernel/ under the prefix, so that an application's
# find_package(RingKernel) finds the same names.
#
# Dependencies: Abseil is public (the API returns absl::Status and takes
# absl::Duration), so the package finds it with find_dependency, and links
# its static archives into the application's binaries as RingKernel's own
# build does (RINGKERNEL_STATIC_ABSL=OFF: the shared libraries). nlohmann_json (header
# only) and Threads are found the same way. xxHash and NVRTC are linked by
# absolute path, as in this build; libclang and the CUDA driver are opened
# at run time, as always.
include(CMakePackageConfigHelpers)

add_library(ringkernel_runtime INTERFACE)
target_link_libraries(ringkernel_runtime INTERFACE rk_runtime)
set_target_properties(ringkernel_runtime PROPERTIES EXPORT_NAME runtime)
add_library(RingKernel::runtime ALIAS ringkernel_runtime)
add_executable(RingKernel::actorc ALIAS actorc)

include(${CMAKE_CURRENT_LIST_DIR}/RingKernelProgram.cmake)

set(RK_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/RingKernel)
install(TARGETS ringkernel_runtime rk_runtime rk_jit rk_jit_model rk_jit_frontend rk_jit_store rk_jit_compile
                rk_device_headers rk_nvrtc rk_xxhash actorc
        EXPORT RingKernelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ringkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT RingKernelTargets NAMESPACE RingKernel:: DESTINATION ${RK_CMAKE_INSTALL_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/RingKernelConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/RingKernelConfig.cmake
                              INSTALL_DESTINATION ${RK_CMAKE_INSTALL_DIR})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/RingKernelConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/RingKernelConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/RingKernelConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/RingKernelProgram.cmake
              ${CMAKE_CURRENT_LIST_DIR}/RingKernelStaticAbsl.cmake
        DESTINATION ${RK_CMAKE_INSTALL_DIR})
