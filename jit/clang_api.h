// Copyright 2026 The RingKernel Authors.
//
// clang_api.h: libclang's C API, opened at run time. Private to the
// front-end (jit/frontend*.cc, jit/clang_api.cc).
//
// The front-end parses handler fragments with libclang 16 (or newer), but
// RingKernel does not link it: machines that only run prebuilt packages may
// not have it, and its SONAME differs between distributions. Instead the
// library is opened with dlopen the first time it is needed and the entry
// points the front-end uses are resolved into one table, `ClangApi`. Without
// a usable library the front-end returns FailedPrecondition, saying what was
// tried and how to install it; nothing else in RingKernel is affected. Code
// outside the front-end asks about the library through libclang.h.
//
// Example:
//   RK_ASSIGN_OR_RETURN(const rk::jit::ClangApi* api, rk::jit::GetClangApi());
//   CXIndex index = api->clang_createIndex(0, 0);
//   ...
//   api->clang_disposeIndex(index);
//
// This is the only header that includes <clang-c/Index.h> (its include
// directory is known to the front-end's library only); it must never be
// included from another header.
#ifndef RINGKERNEL_JIT_CLANG_API_H_
#define RINGKERNEL_JIT_CLANG_API_H_

#include <clang-c/Index.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/libclang.h"

namespace rk::jit {

// Every libclang function the front-end calls. Adding one here is all it
// takes to make it available as `api->name(...)`.
#define RK_CLANG_API_FUNCTIONS(X)              \
  X(clang_getClangVersion)                     \
  X(clang_getCString)                          \
  X(clang_disposeString)                       \
  X(clang_createIndex)                         \
  X(clang_disposeIndex)                        \
  X(clang_parseTranslationUnit2)               \
  X(clang_disposeTranslationUnit)              \
  X(clang_getTranslationUnitCursor)            \
  X(clang_getNumDiagnostics)                   \
  X(clang_getDiagnostic)                       \
  X(clang_disposeDiagnostic)                   \
  X(clang_getDiagnosticSeverity)               \
  X(clang_getDiagnosticLocation)               \
  X(clang_getDiagnosticSpelling)               \
  X(clang_getDiagnosticOption)                 \
  X(clang_getChildDiagnostics)                 \
  X(clang_getNumDiagnosticsInSet)              \
  X(clang_getDiagnosticInSet)                  \
  X(clang_getExpansionLocation)                \
  X(clang_getFileName)                         \
  X(clang_getFileContents)                     \
  X(clang_File_isEqual)                        \
  X(clang_getIncludedFile)                     \
  X(clang_getInclusions)                       \
  X(clang_visitChildren)                       \
  X(clang_getCursorKind)                       \
  X(clang_getCursorSpelling)                   \
  X(clang_getCursorLocation)                   \
  X(clang_getCursorExtent)                     \
  X(clang_getCursorType)                       \
  X(clang_getCursorSemanticParent)             \
  X(clang_getCursorReferenced)                 \
  X(clang_getCursorDefinition)                 \
  X(clang_getCanonicalCursor)                  \
  X(clang_getCursorUSR)                        \
  X(clang_equalCursors)                        \
  X(clang_Cursor_isNull)                       \
  X(clang_getNullCursor)                       \
  X(clang_isInvalid)                           \
  X(clang_isPreprocessing)                     \
  X(clang_getRangeStart)                       \
  X(clang_isInvalidDeclaration)                \
  X(clang_isCursorDefinition)                  \
  X(clang_Cursor_isAnonymous)                  \
  X(clang_Cursor_isAnonymousRecordDecl)        \
  X(clang_Cursor_isBitField)                   \
  X(clang_Cursor_getNumArguments)              \
  X(clang_Cursor_getArgument)                  \
  X(clang_Cursor_getOffsetOfField)             \
  X(clang_Cursor_Evaluate)                     \
  X(clang_EvalResult_getKind)                  \
  X(clang_EvalResult_getAsStr)                 \
  X(clang_EvalResult_dispose)                  \
  X(clang_getSpecializedCursorTemplate)        \
  X(clang_getCXXAccessSpecifier)               \
  X(clang_isVirtualBase)                       \
  X(clang_CXXMethod_isStatic)                  \
  X(clang_CXXMethod_isVirtual)                 \
  X(clang_CXXMethod_isDefaulted)               \
  X(clang_CXXMethod_isDeleted)                 \
  X(clang_CXXMethod_isCopyAssignmentOperator)  \
  X(clang_CXXMethod_isMoveAssignmentOperator)  \
  X(clang_CXXConstructor_isCopyConstructor)    \
  X(clang_CXXConstructor_isMoveConstructor)    \
  X(clang_CXXConstructor_isDefaultConstructor) \
  X(clang_getTypeSpelling)                     \
  X(clang_getCanonicalType)                    \
  X(clang_getUnqualifiedType)                  \
  X(clang_getTypeDeclaration)                  \
  X(clang_getPointeeType)                      \
  X(clang_getResultType)                       \
  X(clang_getNumArgTypes)                      \
  X(clang_getArgType)                          \
  X(clang_getArrayElementType)                 \
  X(clang_getArraySize)                        \
  X(clang_getEnumDeclIntegerType)              \
  X(clang_EnumDecl_isScoped)                   \
  X(clang_getEnumConstantDeclValue)            \
  X(clang_getEnumConstantDeclUnsignedValue)    \
  X(clang_isConstQualifiedType)                \
  X(clang_isVolatileQualifiedType)             \
  X(clang_Type_getSizeOf)                      \
  X(clang_Type_getAlignOf)                     \
  X(clang_tokenize)                            \
  X(clang_disposeTokens)                       \
  X(clang_getTokenKind)                        \
  X(clang_getTokenSpelling)                    \
  X(clang_getTokenLocation)

// The resolved entry points of one loaded libclang. Immutable after loading
// and safe to use from any thread (libclang itself is thread-safe as long as
// each thread parses its own translation unit).
struct ClangApi {
#define RK_CLANG_API_MEMBER(name) decltype(&::name) name = nullptr;
  RK_CLANG_API_FUNCTIONS(RK_CLANG_API_MEMBER)
#undef RK_CLANG_API_MEMBER

  LibclangInfo info;  // which library, and its version

  // Converts `s` to a std::string and disposes of it.
  std::string TakeString(CXString s) const;
};

// The process-wide libclang (see Libclang() in libclang.h), loaded on the
// first call and kept open for the life of the process.
absl::StatusOr<const ClangApi*> GetClangApi();

// Opens the first usable of `candidates` (see ProbeLibclang()). Each call
// opens the library anew (dlopen reference counts make that cheap); the
// handle is never closed, since the returned table points into it.
absl::StatusOr<std::unique_ptr<ClangApi>> LoadClangApi(const std::vector<std::string>& candidates);

}  // namespace rk::jit

#endif  // RINGKERNEL_JIT_CLANG_API_H_
