# Dependencies, all from Debian packages plus the CUDA toolkit.
#
#   libabsl-dev        Status/StatusOr, containers, strings — linked statically
#   libgtest-dev       tests — linked statically
#   nlohmann-json3-dev manifests, scripts
#   libxxhash-dev      content hashes for the cache — linked statically
#   libclang-16-dev    headers only: libclang is opened at run time
#   CUDA 13 toolkit    NVRTC (linked) and cuda.h (types only: the driver is
#                      opened at run time)

find_package(Threads REQUIRED)

# Abseil: Debian's CMake package imports the shared libraries; point every
# imported target at its static archive instead so binaries carry Abseil with
# them (the GPU machines have none).
find_package(absl REQUIRED CONFIG)
include(${CMAKE_CURRENT_LIST_DIR}/RingKernelStaticAbsl.cmake)
rk_use_static_absl()

find_package(GTest REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_STATIC NAMES libxxhash.a REQUIRED)
add_library(rk_xxhash INTERFACE)
target_include_directories(rk_xxhash INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(rk_xxhash INTERFACE ${XXHASH_STATIC})

# libclang's C API headers; the library itself is opened with dlopen.
find_path(LIBCLANG_INCLUDE_DIR clang-c/Index.h
  PATHS /usr/lib/llvm-16/include NO_DEFAULT_PATH REQUIRED)

find_package(CUDAToolkit 12 REQUIRED)
# NVRTC alone: CMake's CUDA::nvrtc target also links the driver stub, and the
# driver must never be linked (it is opened at run time).
find_library(RK_NVRTC_LIBRARY NAMES nvrtc PATHS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_TARGET_DIR}/lib64
             NO_DEFAULT_PATH)
if(NOT RK_NVRTC_LIBRARY)
  message(FATAL_ERROR "NVRTC not found in the CUDA toolkit at ${CUDAToolkit_LIBRARY_DIR}")
endif()
get_filename_component(RK_NVRTC_DIR ${RK_NVRTC_LIBRARY} DIRECTORY)
add_library(rk_nvrtc INTERFACE)
target_include_directories(rk_nvrtc INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(rk_nvrtc INTERFACE ${RK_NVRTC_LIBRARY})
# Binaries find NVRTC next to the toolkit at run time.
target_link_options(rk_nvrtc INTERFACE "-Wl,-rpath,${RK_NVRTC_DIR}")
