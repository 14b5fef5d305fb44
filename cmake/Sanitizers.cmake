# Sanitizer and fuzzing builds (RK_SANITIZE, RK_FUZZ; set in CMakeLists.txt).
#
#   RK_SANITIZE=address,undefined   every target of this build is compiled and
#                                   linked with those sanitizers
#                                   (scripts/sanitize.sh builds build-asan so)
#   RK_FUZZ=ON                      clang only: the libFuzzer targets of
#                                   tests/fuzz, with -fsanitize=fuzzer,address,undefined;
#                                   everything they link is compiled with
#                                   -fsanitize=fuzzer-no-link,address,undefined
#                                   (scripts/fuzz.sh builds build-fuzz so)
#
# The flags are directory options of this build, never usage requirements:
# the exported targets carry none of them, so an application that installs
# or adds RingKernel inherits no sanitizer (nor -Werror, see RK_WARNINGS).
# Every check stops the program (-fno-sanitize-recover=all), so a finding
# fails its test or is a fuzzer crash, never just a line in a log.
# Debian's Abseil and GoogleTest archives are not instrumented, which ASan
# and UBSan allow: findings in them are not reported, calls into them work.
if(RK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RK_FUZZ=ON needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16 "
                        "(scripts/fuzz.sh does)")
  endif()
  if(NOT RK_SANITIZE)
    set(RK_SANITIZE address,undefined)
  endif()
endif()

if(RK_SANITIZE)
  string(REPLACE "," ";" _rk_sanitizers "${RK_SANITIZE}")
  if("thread" IN_LIST _rk_sanitizers AND ("address" IN_LIST _rk_sanitizers OR "leak" IN_LIST _rk_sanitizers))
    message(FATAL_ERROR "RK_SANITIZE=${RK_SANITIZE}: ThreadSanitizer does not combine with AddressSanitizer")
  endif()
  list(JOIN _rk_sanitizers "," RK_SANITIZE_FLAGS)
  set(RK_SANITIZE_FLAGS -fsanitize=${RK_SANITIZE_FLAGS})
  message(STATUS "RingKernel: sanitizers ${RK_SANITIZE} for every target of this build")
  add_compile_options(${RK_SANITIZE_FLAGS} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(${RK_SANITIZE_FLAGS} -fno-sanitize-recover=all)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns that std::function members "may be used uninitialized" inside
    # libstdc++'s <regex> when sanitizers instrument it (g++ 12; GCC's manual
    # says sanitizers raise the rate of false -Wmaybe-uninitialized): still
    # reported, no longer an error, in this build alone.
    list(APPEND RK_WARNINGS -Wno-error=maybe-uninitialized)
  endif()
  if(RK_FUZZ)
    # Coverage feedback for libFuzzer from our code; the fuzz targets add
    # -fsanitize=fuzzer (libFuzzer's main) themselves.
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endif()
