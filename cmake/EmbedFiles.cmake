# rk_embed_files(OUTPUT <file.cc> BASE <dir> FILES <files...> FUNCTION <name>)
#
# Writes a C++ source that defines
#   absl::Span<const rk::jit::EmbeddedFile> <name>();
# holding each file's path relative to BASE and its contents, so the device
# headers travel inside the binaries and NVRTC needs no include path.
function(rk_embed_files)
  cmake_parse_arguments(E "" "OUTPUT;BASE;FUNCTION" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${E_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${E_OUTPUT} -DBASE=${E_BASE} -DFUNCTION=${E_FUNCTION}
            "-DFILES=${E_FILES}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    DEPENDS ${E_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    COMMENT "Embedding device headers into ${E_OUTPUT}"
    VERBATIM)
endfunction()
