// Copyright 2026 The RingKernel Authors.
//
// The AST walk: actors, handlers, messages and routes, with the checks of
// the fragment contract and the nvptx64 layouts. Everything comes from
// libclang's C API; anything it does not expose directly (default member
// initialisers, trivial copyability) is worked out from what it does.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/frontend_internal.h"

namespace rk::jit::frontend_internal {
namespace {

constexpr char kActorAnnotation[] = "rk::actor";
constexpr char kMessageAnnotation[] = "rk::message";
constexpr char kHandlerAnnotation[] = "rk::handler";
constexpr char kBlockHandlerAnnotation[] = "rk::block_handler";
constexpr char kGlobalAnnotation[] = "rk::global";

constexpr uint64_t kMaxMessageAlignment = 16;

constexpr char kAllowedFields[] =
    "message fields may be bool, char, integers, float, double, enums, rk::ActorId, structs of these and "
    "fixed-size arrays of any of them";

bool IsRecordKind(CXCursorKind k) {
  return k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl;
}

const char* HandlerMacro(HandlerKind kind) { return kind == HandlerKind::kBlock ? "RK_BLOCK_HANDLER" : "RK_HANDLER"; }

// A member that makes a record fail a check, and why.
struct Problem {
  std::string text;
  CXCursor where;
};

// The declarations the walk collects, checked once it is complete.
struct Annotated {
  std::string annotation;
  CXCursor decl;
};

// A call of rk::Ctx::send, rk::Ctx::reply or rk::Ctx::forward.
struct MessageUse {
  CXType type;        // the message type, canonical
  CXCursor argument;  // the message argument
  std::string how;    // "sent", "replied", "forwarded"
};

// A record reached as a message or as the type of a message's field.
struct RecordState {
  enum class Stage { kNew, kInProgress, kDone };
  Stage stage = Stage::kNew;  // of its layout
  bool ok = true;             // no error found in it
  bool is_message = false;
  bool message_checked = false;
  CXCursor def;              // the definition
  SourceLocation first_use;  // messages: where first used as one
  std::string use_note;      // ... and how ("handled by 'A::on' here")
  RecordLayout layout;
};

struct HandlerEntry {
  HandlerInfo info;
  std::string message_usr;
};

struct ActorEntry {
  ActorInfo info;
  std::vector<HandlerEntry> handlers;
  absl::flat_hash_set<std::string> handler_usrs;  // every method marked, accepted or not
};

class ModelBuilder {
 public:
  ModelBuilder(ParseSession& session, const FrontendOptions& options)
      : s_(session), api_(session.api()), options_(options) {}

  HandlerModel Build();

 private:
  // --- cursor and type helpers -------------------------------------------
  CXCursorKind Kind(CXCursor c) const { return api_.clang_getCursorKind(c); }
  std::string Spelling(CXCursor c) const { return s_.Str(api_.clang_getCursorSpelling(c)); }
  std::string Usr(CXCursor c) const { return s_.Str(api_.clang_getCursorUSR(c)); }
  SourceLocation Where(CXCursor c) const { return s_.LocateCursor(c); }
  bool IsNull(CXCursor c) const { return api_.clang_Cursor_isNull(c) != 0; }
  CXCursor Parent(CXCursor c) const { return api_.clang_getCursorSemanticParent(c); }
  std::string TypeName(CXType t) const { return s_.Str(api_.clang_getTypeSpelling(t)); }
  // An invalid type (the pointee of a parameter that is not a reference,
  // such as `rk::Ctx ctx`) stays invalid: libclang 16's
  // clang_getUnqualifiedType dereferences a null type and crashes.
  CXType Canonical(CXType t) const {
    const CXType canonical = api_.clang_getCanonicalType(t);
    if (canonical.kind == CXType_Invalid) return canonical;
    return api_.clang_getUnqualifiedType(canonical);
  }
  uint64_t SizeOf(CXType t) const {
    const long long v = api_.clang_Type_getSizeOf(t);
    return v > 0 ? static_cast<uint64_t>(v) : 0;
  }
  uint64_t AlignOf(CXType t) const {
    const long long v = api_.clang_Type_getAlignOf(t);
    return v > 0 ? static_cast<uint64_t>(v) : 0;
  }
  SourceLocation ExtentStart(CXCursor c) const {
    return s_.Locate(api_.clang_getRangeStart(api_.clang_getCursorExtent(c)));
  }

  std::vector<CXCursor> Children(CXCursor c) const;
  std::string QualifiedName(CXCursor decl) const;
  std::vector<std::string> Namespaces(CXCursor decl) const;
  // Why `decl` is not at namespace scope (or is in an anonymous namespace),
  // or "" when it is fine.
  std::string PlacementProblem(CXCursor decl) const;
  bool IsTemplateSpecialization(CXCursor decl) const { return !IsNull(api_.clang_getSpecializedCursorTemplate(decl)); }
  bool IsRkCtx(CXCursor record) const;
  bool IsRkActorId(CXCursor record) const;
  bool InNamespaceRk(CXCursor decl) const;
  bool FromShim(CXCursor decl) const;
  std::string DescribeKind(CXCursor decl) const;
  CXCursor StripArrays(CXType t, CXType* element) const;
  bool HasDefaultMemberInitializer(CXCursor field) const;

  // --- the walk ---------------------------------------------------------
  static CXChildVisitResult Visit(CXCursor cursor, CXCursor parent, CXClientData data);
  void OnCall(CXCursor call);

  // --- checks -----------------------------------------------------------
  void AddActor(CXCursor decl);
  // Checks an RK_ACTOR type and adds it; false (with errors reported) when
  // it cannot be an actor.
  bool AcceptActor(CXCursor decl);
  void AddHandler(CXCursor decl, HandlerKind kind);
  void AddMessageAnnotation(CXCursor decl);
  void AddMessageUse(CXType type, SourceLocation where, const std::string& note);
  void CheckMessage(RecordState& state);
  // Lays out a message or nested record; false (with errors reported) when a
  // field breaks the rules. `message` names the message being checked, for
  // errors about nested records.
  bool LayOut(RecordState& state, const std::string& message);
  // Records the enum type `t` (a field's element type, with underlying kind
  // `kind`) for the model and returns its name for the field. Returns "" for
  // RingKernel's own enums, which stay plain integers, and when the enum
  // cannot be named by host code (then `problem` says why, to follow "field
  // 'x' of 'M' ").
  std::string AddEnum(CXType t, FieldKind kind, std::string* problem);
  std::optional<Problem> NotTriviallyCopyable(CXCursor record, int depth) const;
  std::optional<Problem> NotDefaultConstructible(CXCursor record, int depth) const;
  std::optional<Problem> NeedsConstruction(CXCursor record, int depth) const;
  void AddRoute(CXCursor call);
  void AssignIds(HandlerModel* model);

  ParseSession& s_;
  const ClangApi& api_;
  const FrontendOptions& options_;

  std::vector<Annotated> annotated_;
  std::vector<MessageUse> sends_;
  std::vector<CXCursor> route_calls_;

  // Ordered maps: entries are referred to while others are added, and the
  // order keeps the output deterministic.
  std::map<std::string, ActorEntry> actors_;  // by USR
  std::vector<std::string> actor_order_;      // USRs, in source order
  // Types marked RK_ACTOR but rejected: their handlers are not reported
  // again as handlers of a non-actor.
  absl::flat_hash_set<std::string> rejected_actors_;
  std::map<std::string, RecordState> records_;                 // by USR
  std::map<std::string, EnumLayout> enums_;                    // by USR
  std::vector<std::string> message_order_;                     // USRs, in order of first use
  std::map<std::string, std::vector<SourceLocation>> routes_;  // by name
};

// ---------------------------------------------------------------------------
// Helpers

std::vector<CXCursor> ModelBuilder::Children(CXCursor c) const {
  std::vector<CXCursor> out;
  api_.clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

std::string ModelBuilder::QualifiedName(CXCursor decl) const {
  std::vector<std::string> parts{Spelling(decl)};
  for (CXCursor p = Parent(decl); !IsNull(p); p = Parent(p)) {
    const CXCursorKind k = Kind(p);
    if (k == CXCursor_TranslationUnit || api_.clang_isInvalid(k)) break;
    if (k == CXCursor_LinkageSpec) continue;
    if (k == CXCursor_Namespace && api_.clang_Cursor_isAnonymous(p)) {
      parts.push_back("(anonymous namespace)");
    } else {
      parts.push_back(Spelling(p));
    }
  }
  std::reverse(parts.begin(), parts.end());
  return absl::StrJoin(parts, "::");
}

std::vector<std::string> ModelBuilder::Namespaces(CXCursor decl) const {
  std::vector<std::string> out;
  for (CXCursor p = Parent(decl); !IsNull(p); p = Parent(p)) {
    const CXCursorKind k = Kind(p);
    if (k == CXCursor_TranslationUnit || api_.clang_isInvalid(k)) break;
    if (k == CXCursor_Namespace) out.push_back(Spelling(p));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string ModelBuilder::PlacementProblem(CXCursor decl) const {
  CXCursor p = Parent(decl);
  while (!IsNull(p) && Kind(p) == CXCursor_LinkageSpec) p = Parent(p);
  if (IsNull(p)) return "";
  const CXCursorKind k = Kind(p);
  if (IsRecordKind(k) || k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization) {
    return absl::StrCat("is declared inside '", QualifiedName(p), "'");
  }
  if (k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
      k == CXCursor_Constructor || k == CXCursor_Destructor || k == CXCursor_LambdaExpr) {
    return absl::StrCat("is declared inside the function '", Spelling(p), "'");
  }
  for (CXCursor q = p; !IsNull(q) && Kind(q) != CXCursor_TranslationUnit && !api_.clang_isInvalid(Kind(q));
       q = Parent(q)) {
    if (Kind(q) == CXCursor_Namespace && api_.clang_Cursor_isAnonymous(q)) {
      return "is declared in an anonymous namespace";
    }
  }
  return "";
}

bool ModelBuilder::InNamespaceRk(CXCursor decl) const {
  const CXCursor p = Parent(decl);
  return !IsNull(p) && Kind(p) == CXCursor_Namespace && Spelling(p) == "rk" &&
         Kind(Parent(p)) == CXCursor_TranslationUnit;
}

bool ModelBuilder::IsRkCtx(CXCursor record) const {
  return IsRecordKind(Kind(record)) && Spelling(record) == "Ctx" && InNamespaceRk(record) &&
         s_.CursorFileKind(record) == FileKind::kEmbedded;
}

bool ModelBuilder::IsRkActorId(CXCursor record) const {
  return IsRecordKind(Kind(record)) && Spelling(record) == "ActorId" && InNamespaceRk(record) &&
         s_.CursorFileKind(record) == FileKind::kEmbedded;
}

bool ModelBuilder::FromShim(CXCursor decl) const {
  CXFile file = nullptr;
  unsigned line = 0, column = 0, offset = 0;
  api_.clang_getExpansionLocation(api_.clang_getCursorLocation(decl), &file, &line, &column, &offset);
  return s_.files().Classify(s_.FilePath(file)) == FileKind::kEmbedded &&
         absl::EndsWith(s_.FilePath(file), "/ringkernel/device/parse_shim.h");
}

std::string ModelBuilder::DescribeKind(CXCursor decl) const {
  switch (Kind(decl)) {
    case CXCursor_FunctionDecl:
      return absl::StrCat("the function '", Spelling(decl), "'");
    case CXCursor_FunctionTemplate:
      return absl::StrCat("the function template '", Spelling(decl), "'");
    case CXCursor_CXXMethod:
      return absl::StrCat("the method '", QualifiedName(decl), "'");
    case CXCursor_FieldDecl:
      return absl::StrCat("the field '", Spelling(decl), "'");
    case CXCursor_VarDecl:
      return absl::StrCat("the variable '", Spelling(decl), "'");
    case CXCursor_UnionDecl:
      return absl::StrCat("the union '", QualifiedName(decl), "'");
    case CXCursor_EnumDecl:
      return absl::StrCat("the enum '", QualifiedName(decl), "'");
    case CXCursor_ClassTemplate:
      return absl::StrCat("the class template '", QualifiedName(decl), "'");
    default:
      return absl::StrCat("'", Spelling(decl), "'");
  }
}

// The record declaration at the bottom of `t`'s array dimensions (a null
// cursor when the element is not a record); `element` gets the element type.
CXCursor ModelBuilder::StripArrays(CXType t, CXType* element) const {
  CXType e = Canonical(t);
  while (e.kind == CXType_ConstantArray || e.kind == CXType_IncompleteArray || e.kind == CXType_VariableArray ||
         e.kind == CXType_DependentSizedArray) {
    e = Canonical(api_.clang_getArrayElementType(e));
  }
  if (element != nullptr) *element = e;
  if (e.kind != CXType_Record) return api_.clang_getNullCursor();
  const CXCursor decl = api_.clang_getTypeDeclaration(e);
  const CXCursor def = api_.clang_getCursorDefinition(decl);
  return IsNull(def) ? decl : def;
}

// libclang has no query for an in-class initialiser, but a field's extent
// covers it: after the field's name and any array bounds, anything but the
// width of a bit-field is an initialiser ("= v", "{v}", or a macro that
// expands to one).
bool ModelBuilder::HasDefaultMemberInitializer(CXCursor field) const {
  CXToken* tokens = nullptr;
  unsigned count = 0;
  api_.clang_tokenize(s_.tu(), api_.clang_getCursorExtent(field), &tokens, &count);
  const std::string name = Spelling(field);
  unsigned name_offset = 0;
  {
    CXFile file = nullptr;
    unsigned line = 0, column = 0;
    api_.clang_getExpansionLocation(api_.clang_getCursorLocation(field), &file, &line, &column, &name_offset);
  }
  bool found = false;
  unsigned i = 0;
  for (; i < count; ++i) {
    if (api_.clang_getTokenKind(tokens[i]) != CXToken_Identifier) continue;
    CXFile file = nullptr;
    unsigned line = 0, column = 0, offset = 0;
    api_.clang_getExpansionLocation(api_.clang_getTokenLocation(s_.tu(), tokens[i]), &file, &line, &column, &offset);
    if (offset == name_offset && s_.Str(api_.clang_getTokenSpelling(s_.tu(), tokens[i])) == name) {
      found = true;
      break;
    }
  }
  bool initializer = false;
  if (found) {
    ++i;
    int depth = 0;
    bool in_width = false;
    for (; i < count; ++i) {
      const std::string t = s_.Str(api_.clang_getTokenSpelling(s_.tu(), tokens[i]));
      if (depth > 0) {
        if (t == "[") ++depth;
        if (t == "]") --depth;
        continue;
      }
      if (t == "[" && !in_width) {
        depth = 1;
        continue;
      }
      if (t == ":" && !in_width) {
        in_width = true;
        continue;
      }
      if (!in_width || t == "=" || t == "{") {
        initializer = true;
        break;
      }
    }
  }
  api_.clang_disposeTokens(s_.tu(), tokens, count);
  return initializer;
}

// ---------------------------------------------------------------------------
// The walk

CXChildVisitResult ModelBuilder::Visit(CXCursor cursor, CXCursor parent, CXClientData data) {
  auto* self = static_cast<ModelBuilder*>(data);
  const CXCursorKind kind = self->Kind(cursor);
  if (self->Kind(parent) == CXCursor_TranslationUnit) {
    // Only the user's declarations: RingKernel's headers (and the shim) hold
    // nothing the model needs, and skipping them keeps the walk short.
    if (self->api_.clang_isPreprocessing(kind)) return CXChildVisit_Continue;
    if (!IsUserFile(self->s_.CursorFileKind(cursor))) return CXChildVisit_Continue;
  }
  if (kind == CXCursor_AnnotateAttr) {
    const std::string text = self->Spelling(cursor);
    if (absl::StartsWith(text, "rk::")) self->annotated_.push_back(Annotated{text, parent});
  } else if (kind == CXCursor_CallExpr) {
    self->OnCall(cursor);
  }
  return CXChildVisit_Recurse;
}

void ModelBuilder::OnCall(CXCursor call) {
  const CXCursor callee = api_.clang_getCursorReferenced(call);
  if (IsNull(callee)) return;
  const CXCursorKind kind = Kind(callee);
  if (kind == CXCursor_CXXMethod && IsRkCtx(Parent(callee))) {
    const std::string name = Spelling(callee);
    if (name != "send" && name != "reply" && name != "forward") return;
    // The message is the last parameter, `const M&`, of the specialisation
    // the call resolved to. A call that depends on a template parameter has
    // no specialisation yet; the instantiation is not in the AST either.
    const CXType fn = api_.clang_getCursorType(callee);
    const int n = api_.clang_getNumArgTypes(fn);
    const int args = api_.clang_Cursor_getNumArguments(call);
    if (n < 1 || args < 1) return;
    const CXType param = api_.clang_getArgType(fn, static_cast<unsigned>(n - 1));
    const CXType message = Canonical(api_.clang_getPointeeType(param));
    if (message.kind == CXType_Invalid || message.kind == CXType_Unexposed) return;
    sends_.push_back(MessageUse{message, api_.clang_Cursor_getArgument(call, static_cast<unsigned>(args - 1)),
                                name == "send" ? "sent" : name == "reply" ? "replied" : "forwarded"});
  } else if (kind == CXCursor_FunctionDecl && Spelling(callee) == "route" && InNamespaceRk(callee) &&
             s_.CursorFileKind(callee) == FileKind::kEmbedded) {
    route_calls_.push_back(call);
  }
}

// ---------------------------------------------------------------------------
// Actors and handlers

void ModelBuilder::AddActor(CXCursor decl) {
  if (!AcceptActor(decl)) {
    rejected_actors_.insert(Usr(decl));
    const CXCursor def = api_.clang_getCursorDefinition(decl);
    if (!IsNull(def)) rejected_actors_.insert(Usr(def));
  }
}

bool ModelBuilder::AcceptActor(CXCursor decl) {
  const CXCursorKind kind = Kind(decl);
  if (kind == CXCursor_ClassTemplate || kind == CXCursor_ClassTemplatePartialSpecialization) {
    s_.Error(Where(decl), absl::StrCat("actor '", QualifiedName(decl),
                                       "' is a template: actor types must be plain structs or classes"));
    return false;
  }
  if (kind != CXCursor_StructDecl && kind != CXCursor_ClassDecl) {
    s_.Error(Where(decl),
             absl::StrCat("RK_ACTOR marks ", DescribeKind(decl), ": only a struct or class can be an actor"));
    return false;
  }
  const CXCursor def = api_.clang_getCursorDefinition(decl);
  if (IsNull(def)) {
    // A declaration without a definition: fine as long as some declaration
    // with a definition exists (that one is reported or accepted on its own).
    return true;
  }
  const std::string usr = Usr(def);
  if (actors_.contains(usr)) return true;
  if (api_.clang_isInvalidDeclaration(def)) return false;
  const std::string name = QualifiedName(def);
  if (IsTemplateSpecialization(def)) {
    s_.Error(Where(def), absl::StrCat("actor '", name,
                                      "' is a template specialization: actor types must be plain "
                                      "structs or classes"));
    return false;
  }
  if (const std::string problem = PlacementProblem(def); !problem.empty()) {
    s_.Error(Where(def), absl::StrCat("actor '", name, "' ", problem,
                                      ": actor types must be declared at namespace scope, in a named namespace or "
                                      "none, so that the runtime can name them"));
    return false;
  }
  if (std::optional<Problem> p = NotDefaultConstructible(def, 0)) {
    s_.Error(Where(def), absl::StrCat("actor '", name, "' must be default-constructible, but ", p->text));
    return false;
  }
  ActorEntry entry;
  entry.info.name = name;
  entry.info.namespaces = Namespaces(def);
  const CXType type = api_.clang_getCursorType(def);
  entry.info.state_size = SizeOf(type);
  entry.info.state_alignment = AlignOf(type);
  entry.info.zero_initialized = !NeedsConstruction(def, 0).has_value();
  entry.info.location = Where(def);
  actors_.emplace(usr, std::move(entry));
  actor_order_.push_back(usr);
  return true;
}

void ModelBuilder::AddHandler(CXCursor decl, HandlerKind kind) {
  const char* macro = HandlerMacro(kind);
  const CXCursorKind decl_kind = Kind(decl);
  const CXCursor parent = Parent(decl);
  const bool member = !IsNull(parent) && (IsRecordKind(Kind(parent)) || Kind(parent) == CXCursor_ClassTemplate);
  if (decl_kind == CXCursor_FunctionTemplate && member) {
    s_.Error(Where(decl), absl::StrCat("handler '", Spelling(decl),
                                       "' is a template: a handler takes one message type, 'const M&'"));
    return;
  }
  if (decl_kind != CXCursor_CXXMethod) {
    s_.Error(Where(decl), absl::StrCat(macro, " marks ", DescribeKind(decl),
                                       ", but only a method of an RK_ACTOR "
                                       "struct can be a handler"));
    return;
  }
  const CXCursor method = api_.clang_getCanonicalCursor(decl);
  if (api_.clang_isInvalidDeclaration(method)) return;
  const CXCursor record_def = api_.clang_getCursorDefinition(parent);
  auto actor_it = actors_.find(Usr(IsNull(record_def) ? parent : record_def));
  if (actor_it == actors_.end()) {
    if (rejected_actors_.contains(Usr(parent))) return;
    s_.Error(Where(method), absl::StrCat(macro, " marks '", QualifiedName(method), "', but '", QualifiedName(parent),
                                         "' is not an actor: mark it RK_ACTOR, or remove ", macro));
    return;
  }
  ActorEntry& actor = actor_it->second;
  const std::string usr = Usr(method);
  if (!actor.handler_usrs.insert(usr).second) return;  // a redeclaration of one already seen

  const std::string name = Spelling(method);
  const SourceLocation where = Where(method);
  bool ok = true;
  auto fail = [&](SourceLocation at, std::string text) {
    s_.Error(std::move(at), std::move(text));
    ok = false;
  };
  if (api_.clang_CXXMethod_isStatic(method)) fail(where, absl::StrCat("handler '", name, "' must not be static"));
  if (api_.clang_CXXMethod_isVirtual(method)) fail(where, absl::StrCat("handler '", name, "' must not be virtual"));
  if (api_.clang_getCXXAccessSpecifier(method) != CX_CXXPublic) {
    fail(where, absl::StrCat("handler '", name, "' must be public"));
  }
  const CXType fn = api_.clang_getCursorType(method);
  const CXType result = api_.clang_getResultType(fn);
  if (Canonical(result).kind != CXType_Void) {
    fail(where, absl::StrCat("a handler must return void, but '", name, "' returns '", TypeName(result), "'"));
  }
  const int params = api_.clang_Cursor_getNumArguments(method);
  if (params != 2) {
    fail(where,
         absl::StrCat("a handler takes exactly two parameters, (const M&, rk::Ctx&), but '", name, "' has ", params));
    return;
  }
  const CXCursor message_param = api_.clang_Cursor_getArgument(method, 0);
  const CXCursor ctx_param = api_.clang_Cursor_getArgument(method, 1);
  const CXType message_ref = api_.clang_getCursorType(message_param);
  const CXType message_type = api_.clang_getPointeeType(message_ref);
  if (message_ref.kind != CXType_LValueReference || !api_.clang_isConstQualifiedType(message_type) ||
      api_.clang_isVolatileQualifiedType(message_type)) {
    fail(ExtentStart(message_param), absl::StrCat("the message parameter of a handler must be 'const M&', but '", name,
                                                  "' takes '", TypeName(message_ref), "'"));
  }
  const CXType ctx_ref = api_.clang_getCursorType(ctx_param);
  const CXType ctx_type = api_.clang_getPointeeType(ctx_ref);
  const CXCursor ctx_decl = api_.clang_getTypeDeclaration(Canonical(ctx_type));
  if (ctx_ref.kind != CXType_LValueReference || api_.clang_isConstQualifiedType(ctx_type) || IsNull(ctx_decl) ||
      !IsRkCtx(ctx_decl)) {
    fail(ExtentStart(ctx_param), absl::StrCat("the second parameter of a handler must be 'rk::Ctx&', but '", name,
                                              "' takes '", TypeName(ctx_ref), "'"));
  }
  if (!ok) return;

  const CXType message = Canonical(message_type);
  HandlerEntry handler;
  handler.info.method = name;
  handler.info.kind = kind;
  handler.info.location = where;
  if (message.kind == CXType_Record) {
    const CXCursor mdecl = api_.clang_getTypeDeclaration(message);
    const CXCursor mdef = api_.clang_getCursorDefinition(mdecl);
    handler.message_usr = Usr(IsNull(mdef) ? mdecl : mdef);
  }
  AddMessageUse(message_type, ExtentStart(message_param),
                absl::StrCat("handled by '", actor.info.name, "::", name, "' here"));
  actor.handlers.push_back(std::move(handler));
}

// ---------------------------------------------------------------------------
// Messages

void ModelBuilder::AddMessageAnnotation(CXCursor decl) {
  const CXCursorKind kind = Kind(decl);
  if (kind == CXCursor_ClassTemplate || kind == CXCursor_ClassTemplatePartialSpecialization) {
    s_.Error(Where(decl), absl::StrCat("message '", QualifiedName(decl),
                                       "' is a template: messages must be plain structs or classes"));
    return;
  }
  if (!IsRecordKind(kind)) {
    s_.Error(Where(decl),
             absl::StrCat("RK_MESSAGE marks ", DescribeKind(decl), ": only a struct or class can be a message"));
    return;
  }
  if (IsNull(api_.clang_getCursorDefinition(decl))) return;
  AddMessageUse(api_.clang_getCursorType(decl), Where(decl), "marked RK_MESSAGE here");
}

void ModelBuilder::AddMessageUse(CXType type, SourceLocation where, const std::string& note) {
  const CXType t = Canonical(type);
  if (t.kind != CXType_Record) {
    const bool is_enum = t.kind == CXType_Enum;
    s_.Error(where, absl::StrCat("message type '", TypeName(t), "' is ", is_enum ? "an enum" : "not a struct",
                                 ": messages must be structs or classes (wrap the value in one)"));
    return;
  }
  const CXCursor decl = api_.clang_getTypeDeclaration(t);
  const CXCursor def = api_.clang_getCursorDefinition(decl);
  if (IsNull(def)) {
    s_.Error(where, absl::StrCat("message type '", TypeName(t), "' is declared but never defined"));
    return;
  }
  if (api_.clang_isInvalidDeclaration(def)) return;
  const std::string usr = Usr(def);
  auto [it, inserted] = records_.try_emplace(usr);
  RecordState& state = it->second;
  if (inserted) state.def = def;
  if (!state.is_message) {
    state.is_message = true;
    state.first_use = where;
    state.use_note = note;
    message_order_.push_back(usr);
  }
}

void ModelBuilder::CheckMessage(RecordState& state) {
  if (state.message_checked) return;
  state.message_checked = true;
  const CXCursor def = state.def;
  const std::string name = QualifiedName(def);
  auto reject = [&](SourceLocation at, std::string text, bool note_use) {
    s_.Error(std::move(at), std::move(text));
    if (note_use && !state.first_use.file.empty())
      s_.Note(state.first_use, absl::StrCat("used as a message: ", state.use_note));
    state.ok = false;
  };
  const FileKind file = s_.CursorFileKind(def);
  if (file == FileKind::kEmbedded) {
    reject(state.first_use,
           absl::StrCat("'", name,
                        "' is declared by RingKernel, not by the program, and cannot be a message: "
                        "wrap it in a struct of your own"),
           false);
    return;
  }
  const SourceLocation at = IsUserFile(file) ? Where(def) : state.first_use;
  if (Kind(def) == CXCursor_UnionDecl) {
    reject(at, absl::StrCat("message type '", name, "' is a union: messages must be structs or classes"), true);
    return;
  }
  if (IsTemplateSpecialization(def)) {
    reject(state.first_use,
           absl::StrCat("message type '", TypeName(api_.clang_getCursorType(def)),
                        "' is a template specialization: messages must be plain structs or classes"),
           false);
    return;
  }
  if (const std::string problem = PlacementProblem(def); !problem.empty()) {
    reject(at,
           absl::StrCat("message '", name, "' ", problem,
                        ": messages must be declared at namespace scope, in a named namespace or none, so that "
                        "generated code and host code can name them"),
           true);
    return;
  }
  if (std::optional<Problem> p = NotTriviallyCopyable(def, 0)) {
    reject(Where(p->where), absl::StrCat("message '", name, "' is not trivially copyable: ", p->text), true);
    return;
  }
  if (!LayOut(state, name)) {
    state.ok = false;
    return;
  }
  const RecordLayout& layout = state.layout;
  if (layout.size > options_.max_payload) {
    reject(at,
           absl::StrCat("message '", name, "' is ", layout.size, " bytes, larger than the max payload of ",
                        options_.max_payload, " bytes (raise it with --max-payload)"),
           false);
  } else if (layout.alignment > kMaxMessageAlignment) {
    reject(at,
           absl::StrCat("message '", name, "' is aligned to ", layout.alignment,
                        " bytes; messages may be aligned to at most ", kMaxMessageAlignment, " bytes"),
           false);
  }
}

bool ModelBuilder::LayOut(RecordState& state, const std::string& message) {
  if (state.stage == RecordState::Stage::kDone) return state.ok;
  if (state.stage == RecordState::Stage::kInProgress) return false;  // impossible by value; be safe
  state.stage = RecordState::Stage::kInProgress;
  const CXCursor def = state.def;
  const std::string name = QualifiedName(def);
  const std::string of =
      name == message ? absl::StrCat("'", name, "'") : absl::StrCat("'", name, "' (in message '", message, "')");
  bool ok = true;

  RecordLayout& layout = state.layout;
  layout.name = name;
  layout.tag = Kind(def) == CXCursor_ClassDecl ? "class" : "struct";
  layout.namespaces = Namespaces(def);
  const CXType type = api_.clang_getCursorType(def);
  layout.size = SizeOf(type);
  layout.alignment = AlignOf(type);
  layout.location = Where(def);

  for (CXCursor child : Children(def)) {
    const CXCursorKind kind = Kind(child);
    if (kind == CXCursor_CXXBaseSpecifier) {
      // libclang 16 cannot tell where a base class lies in the derived one,
      // so a layout with bases could not be described exactly.
      s_.Error(Where(child), absl::StrCat(of, " derives from '", TypeName(api_.clang_getCursorType(child)),
                                          "': messages and the structs in them may not have base classes "
                                          "(make it a field instead)"));
      ok = false;
      continue;
    }
    if (IsRecordKind(kind) && api_.clang_Cursor_isAnonymousRecordDecl(child)) {
      s_.Error(Where(child), absl::StrCat(of, " has an anonymous ", kind == CXCursor_UnionDecl ? "union" : "struct",
                                          " member: give it a named type, declared at namespace scope, and a name"));
      ok = false;
      continue;
    }
    if (kind != CXCursor_FieldDecl) continue;

    const std::string field_name = Spelling(child);
    const CXType field_type = api_.clang_getCursorType(child);
    const std::string field_desc = absl::StrCat("field '", field_name, "' of ", of);
    if (api_.clang_Cursor_isBitField(child)) {
      s_.Error(Where(child), absl::StrCat(field_desc, " is a bit-field; messages may not have bit-fields"));
      ok = false;
      continue;
    }
    FieldLayout field;
    field.name = field_name;
    CXType t = Canonical(field_type);
    field.type = TypeName(t);
    bool field_ok = true;
    while (t.kind == CXType_ConstantArray) {
      const long long extent = api_.clang_getArraySize(t);
      if (extent <= 0) {
        field_ok = false;
        break;
      }
      field.dims.push_back(static_cast<uint64_t>(extent));
      t = Canonical(api_.clang_getArrayElementType(t));
    }
    std::optional<FieldKind> kind_of;
    CXType scalar = t;
    if (field_ok && t.kind == CXType_Enum) {
      scalar = Canonical(api_.clang_getEnumDeclIntegerType(api_.clang_getTypeDeclaration(t)));
    }
    if (field_ok) {
      switch (scalar.kind) {
        case CXType_Bool:
          kind_of = FieldKind::kBool;
          break;
        case CXType_Char_S:
        case CXType_Char_U:
          kind_of = FieldKind::kChar;
          break;
        case CXType_SChar:
          kind_of = FieldKind::kInt8;
          break;
        case CXType_UChar:
          kind_of = FieldKind::kUInt8;
          break;
        case CXType_Short:
          kind_of = FieldKind::kInt16;
          break;
        case CXType_UShort:
          kind_of = FieldKind::kUInt16;
          break;
        case CXType_Int:
          kind_of = FieldKind::kInt32;
          break;
        case CXType_UInt:
          kind_of = FieldKind::kUInt32;
          break;
        case CXType_Long:
          kind_of = SizeOf(scalar) == 8 ? FieldKind::kInt64 : FieldKind::kInt32;
          break;
        case CXType_ULong:
          kind_of = SizeOf(scalar) == 8 ? FieldKind::kUInt64 : FieldKind::kUInt32;
          break;
        case CXType_LongLong:
          kind_of = FieldKind::kInt64;
          break;
        case CXType_ULongLong:
          kind_of = FieldKind::kUInt64;
          break;
        case CXType_Float:
          kind_of = FieldKind::kFloat32;
          break;
        case CXType_Double:
          kind_of = FieldKind::kFloat64;
          break;
        default:
          break;
      }
    }
    if (field_ok && !kind_of && t.kind == CXType_Record) {
      const CXCursor rdecl = api_.clang_getTypeDeclaration(t);
      const CXCursor rdef = api_.clang_getCursorDefinition(rdecl);
      const std::string rname = IsNull(rdef) ? TypeName(t) : QualifiedName(rdef);
      std::string problem;
      if (IsNull(rdef)) {
        problem = absl::StrCat("has type '", field.type, "', which is never defined");
      } else if (IsRkActorId(rdef)) {
        kind_of = FieldKind::kActorId;
      } else if (s_.CursorFileKind(rdef) == FileKind::kEmbedded && !FromShim(rdef)) {
        problem = absl::StrCat("has type '", rname, "', one of RingKernel's own types, which messages cannot hold");
      } else if (Kind(rdef) == CXCursor_UnionDecl) {
        problem = absl::StrCat("is a union ('", rname, "'); message fields may not be unions");
      } else if (IsTemplateSpecialization(rdef)) {
        problem = absl::StrCat("has type '", field.type,
                               "', a template specialization; structs in messages must be plain structs");
      } else if (std::string where = PlacementProblem(rdef); !where.empty()) {
        problem = absl::StrCat("has type '", rname, "', which ", where,
                               "; structs in messages must be declared at namespace scope, in a named namespace or "
                               "none");
      } else if (!api_.clang_isInvalidDeclaration(rdef)) {
        auto [it, inserted] = records_.try_emplace(Usr(rdef));
        RecordState& nested = it->second;
        if (inserted) nested.def = rdef;
        if (LayOut(nested, message)) {
          kind_of = FieldKind::kRecord;
          field.record = nested.layout.name;
        } else {
          field_ok = false;  // its own fields were reported
        }
      } else {
        field_ok = false;
      }
      if (!problem.empty()) {
        s_.Error(Where(child), absl::StrCat(field_desc, " ", problem));
        ok = false;
        continue;
      }
    }
    if (kind_of && t.kind == CXType_Enum) {
      std::string problem;
      field.enum_name = AddEnum(t, *kind_of, &problem);
      if (!problem.empty()) {
        s_.Error(Where(child), absl::StrCat(field_desc, " ", problem));
        ok = false;
        continue;
      }
    }
    if (!kind_of) {
      if (field_ok) {
        s_.Error(Where(child), absl::StrCat(field_desc, " has type '", TypeName(field_type),
                                            "', which a message "
                                            "cannot hold: ",
                                            kAllowedFields));
      } else if (t.kind == CXType_ConstantArray) {
        s_.Error(Where(child), absl::StrCat(field_desc, " is an array of length zero"));
      }
      ok = false;
      continue;
    }
    field.kind = *kind_of;
    const long long offset_bits = api_.clang_Cursor_getOffsetOfField(child);
    field.offset = offset_bits > 0 ? static_cast<uint64_t>(offset_bits) / 8 : 0;
    field.size = SizeOf(field_type);
    field.element_size = SizeOf(t);
    layout.fields.push_back(std::move(field));
  }
  state.ok = ok;
  state.stage = RecordState::Stage::kDone;
  return ok;
}

std::string ModelBuilder::AddEnum(CXType t, FieldKind kind, std::string* problem) {
  const CXCursor decl = api_.clang_getTypeDeclaration(t);
  // An opaque declaration (`enum class E : int;`) is a complete type without
  // enumerators; it has no definition to prefer.
  const CXCursor found = api_.clang_getCursorDefinition(decl);
  const CXCursor def = IsNull(found) ? decl : found;
  // rk::SendStatus and the like: the host knows them from RingKernel's own
  // headers, so the host header must not declare them again.
  if (s_.CursorFileKind(def) == FileKind::kEmbedded) return "";
  const std::string usr = Usr(def);
  if (auto it = enums_.find(usr); it != enums_.end()) return it->second.name;
  const std::string spelling = Spelling(def);
  if (api_.clang_Cursor_isAnonymous(def) || spelling.empty() || spelling.find(' ') != std::string::npos) {
    *problem = absl::StrCat("has an enum type without a name ('", TypeName(t),
                            "'); the host header must name it: declare a named enum at namespace scope");
    return "";
  }
  const std::string name = QualifiedName(def);
  if (const std::string where = PlacementProblem(def); !where.empty()) {
    *problem = absl::StrCat("has type '", name, "', an enum which ", where,
                            "; enums in messages must be declared at namespace scope, in a named namespace or none, "
                            "so that the host header can declare them");
    return "";
  }
  EnumLayout e;
  e.name = name;
  e.namespaces = Namespaces(def);
  e.scoped = api_.clang_EnumDecl_isScoped(def) != 0;
  e.kind = kind;
  e.location = Where(def);
  const bool is_unsigned = kind == FieldKind::kBool || kind == FieldKind::kUInt8 || kind == FieldKind::kUInt16 ||
                           kind == FieldKind::kUInt32 || kind == FieldKind::kUInt64;
  for (CXCursor child : Children(def)) {
    if (Kind(child) != CXCursor_EnumConstantDecl) continue;
    EnumeratorLayout v;
    v.name = Spelling(child);
    // Wrapped for uint64 values above INT64_MAX, as EnumeratorLayout says.
    v.value = is_unsigned ? static_cast<int64_t>(api_.clang_getEnumConstantDeclUnsignedValue(child))
                          : static_cast<int64_t>(api_.clang_getEnumConstantDeclValue(child));
    e.enumerators.push_back(std::move(v));
  }
  enums_.emplace(usr, std::move(e));
  return name;
}

std::optional<Problem> ModelBuilder::NotTriviallyCopyable(CXCursor record, int depth) const {
  if (depth > 32) return std::nullopt;
  for (CXCursor child : Children(record)) {
    const CXCursorKind kind = Kind(child);
    const bool user_provided = !api_.clang_CXXMethod_isDefaulted(child) && !api_.clang_CXXMethod_isDeleted(child);
    switch (kind) {
      case CXCursor_CXXBaseSpecifier: {
        const std::string base = TypeName(api_.clang_getCursorType(child));
        if (api_.clang_isVirtualBase(child))
          return Problem{absl::StrCat("it has a virtual base class '", base, "'"), child};
        const CXCursor base_def = StripArrays(api_.clang_getCursorType(child), nullptr);
        if (!IsNull(base_def)) {
          if (std::optional<Problem> p = NotTriviallyCopyable(base_def, depth + 1)) {
            return Problem{absl::StrCat("its base class '", base, "' is not trivially copyable (", p->text, ")"),
                           child};
          }
        }
        break;
      }
      case CXCursor_CXXMethod:
        if (api_.clang_CXXMethod_isVirtual(child)) {
          return Problem{absl::StrCat("it has a virtual function '", Spelling(child), "'"), child};
        }
        if (api_.clang_CXXMethod_isCopyAssignmentOperator(child) && user_provided) {
          return Problem{"it has a user-provided copy assignment operator", child};
        }
        if (api_.clang_CXXMethod_isMoveAssignmentOperator(child) && user_provided) {
          return Problem{"it has a user-provided move assignment operator", child};
        }
        break;
      case CXCursor_Constructor:
        if (api_.clang_CXXConstructor_isCopyConstructor(child) && user_provided) {
          return Problem{"it has a user-provided copy constructor", child};
        }
        if (api_.clang_CXXConstructor_isMoveConstructor(child) && user_provided) {
          return Problem{"it has a user-provided move constructor", child};
        }
        break;
      case CXCursor_Destructor:
        if (api_.clang_CXXMethod_isVirtual(child)) return Problem{"it has a virtual destructor", child};
        if (api_.clang_CXXMethod_isDeleted(child)) return Problem{"its destructor is deleted", child};
        if (user_provided) return Problem{"it has a user-provided destructor", child};
        break;
      case CXCursor_FieldDecl: {
        CXType element;
        const CXCursor field_record = StripArrays(api_.clang_getCursorType(child), &element);
        if (IsNull(field_record)) break;
        if (std::optional<Problem> p = NotTriviallyCopyable(field_record, depth + 1)) {
          return Problem{absl::StrCat("field '", Spelling(child), "' of type '", TypeName(element),
                                      "' is not trivially copyable (", p->text, ")"),
                         child};
        }
        break;
      }
      default:
        break;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Actor state

std::optional<Problem> ModelBuilder::NotDefaultConstructible(CXCursor record, int depth) const {
  if (depth > 32) return std::nullopt;
  bool any_constructor = false;
  bool default_constructor = false;
  for (CXCursor child : Children(record)) {
    const CXCursorKind kind = Kind(child);
    if (kind == CXCursor_Constructor) {
      any_constructor = true;
      if (api_.clang_CXXConstructor_isDefaultConstructor(child)) {
        if (api_.clang_CXXMethod_isDeleted(child)) return Problem{"its default constructor is deleted", child};
        default_constructor = true;
      }
    } else if (kind == CXCursor_FunctionTemplate) {
      // A constructor template may well be usable as a default constructor;
      // give it the benefit of the doubt rather than a false error.
      if (Spelling(child) == Spelling(record)) default_constructor = true;
    } else if (kind == CXCursor_FieldDecl) {
      const CXType type = api_.clang_getCursorType(child);
      const std::string field = Spelling(child);
      if (HasDefaultMemberInitializer(child)) continue;
      if (type.kind == CXType_LValueReference || type.kind == CXType_RValueReference) {
        return Problem{absl::StrCat("field '", field, "' is a reference without an initialiser"), child};
      }
      CXType element;
      const CXCursor field_record = StripArrays(type, &element);
      if (IsNull(field_record) && api_.clang_isConstQualifiedType(type)) {
        return Problem{absl::StrCat("field '", field, "' is const without an initialiser"), child};
      }
      if (!IsNull(field_record)) {
        if (std::optional<Problem> p = NotDefaultConstructible(field_record, depth + 1)) {
          return Problem{absl::StrCat("field '", field, "' of type '", TypeName(element),
                                      "' is not default-constructible (", p->text, ")"),
                         child};
        }
      }
    } else if (kind == CXCursor_CXXBaseSpecifier) {
      const CXCursor base = StripArrays(api_.clang_getCursorType(child), nullptr);
      if (!IsNull(base)) {
        if (std::optional<Problem> p = NotDefaultConstructible(base, depth + 1)) {
          return Problem{absl::StrCat("its base class '", TypeName(api_.clang_getCursorType(child)),
                                      "' is not default-constructible (", p->text, ")"),
                         child};
        }
      }
    }
  }
  if (any_constructor && !default_constructor) {
    return Problem{absl::StrCat("'", Spelling(record), "' has constructors but no default constructor"), record};
  }
  return std::nullopt;
}

std::optional<Problem> ModelBuilder::NeedsConstruction(CXCursor record, int depth) const {
  if (depth > 32) return std::nullopt;
  for (CXCursor child : Children(record)) {
    switch (Kind(child)) {
      case CXCursor_CXXBaseSpecifier: {
        if (api_.clang_isVirtualBase(child)) return Problem{"virtual base class", child};
        const CXCursor base = StripArrays(api_.clang_getCursorType(child), nullptr);
        if (!IsNull(base)) {
          if (std::optional<Problem> p = NeedsConstruction(base, depth + 1)) return p;
        }
        break;
      }
      case CXCursor_CXXMethod:
      case CXCursor_Destructor:
        // A vtable pointer has to be written by a constructor.
        if (api_.clang_CXXMethod_isVirtual(child)) return Problem{"virtual function", child};
        break;
      case CXCursor_Constructor:
        if (api_.clang_CXXConstructor_isDefaultConstructor(child) && !api_.clang_CXXMethod_isDefaulted(child) &&
            !api_.clang_CXXMethod_isDeleted(child)) {
          return Problem{"user-provided default constructor", child};
        }
        break;
      case CXCursor_FieldDecl: {
        if (HasDefaultMemberInitializer(child)) return Problem{"default member initialiser", child};
        const CXCursor field_record = StripArrays(api_.clang_getCursorType(child), nullptr);
        if (!IsNull(field_record)) {
          if (std::optional<Problem> p = NeedsConstruction(field_record, depth + 1)) return p;
        }
        break;
      }
      default:
        break;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Routes

void ModelBuilder::AddRoute(CXCursor call) {
  const SourceLocation where = Where(call);
  if (api_.clang_Cursor_getNumArguments(call) != 1) return;
  CXCursor arg = api_.clang_Cursor_getArgument(call, 0);
  // Look through the implicit array-to-pointer conversion and parentheses.
  while (!IsNull(arg) && (Kind(arg) == CXCursor_UnexposedExpr || Kind(arg) == CXCursor_ParenExpr)) {
    std::vector<CXCursor> inner = Children(arg);
    if (inner.size() != 1) break;
    arg = inner[0];
  }
  if (IsNull(arg) || Kind(arg) != CXCursor_StringLiteral) {
    s_.Error(IsNull(arg) ? where : ExtentStart(arg),
             "route names must be string literals, as in rk::route(\"audit\"): the program's routes are "
             "collected when it is built");
    return;
  }
  std::string name;
  bool evaluated = false;
  if (CXEvalResult result = api_.clang_Cursor_Evaluate(arg)) {
    if (api_.clang_EvalResult_getKind(result) == CXEval_StrLiteral) {
      const char* s = api_.clang_EvalResult_getAsStr(result);
      if (s != nullptr) {
        name = s;
        evaluated = true;
      }
    }
    api_.clang_EvalResult_dispose(result);
  }
  if (!evaluated) {
    const std::string spelled = Spelling(arg);
    if (spelled.size() >= 2 && spelled.front() == '"' && spelled.back() == '"') {
      name = spelled.substr(1, spelled.size() - 2);
    }
  }
  if (name.empty()) {
    s_.Error(ExtentStart(arg), "route names must not be empty");
    return;
  }
  routes_[name].push_back(where);
}

// ---------------------------------------------------------------------------

void ModelBuilder::AssignIds(HandlerModel* model) {
  std::vector<RecordState*> messages;
  std::vector<RecordState*> nested;
  for (auto& [usr, state] : records_) {
    if (!state.ok || state.stage != RecordState::Stage::kDone) continue;
    (state.is_message ? messages : nested).push_back(&state);
  }
  auto by_name = [](const RecordState* a, const RecordState* b) { return a->layout.name < b->layout.name; };
  std::sort(messages.begin(), messages.end(), by_name);
  std::sort(nested.begin(), nested.end(), by_name);
  absl::flat_hash_map<std::string, std::pair<std::string, uint32_t>> message_ids;  // usr -> (name, id)
  uint32_t next_id = 1;
  for (RecordState* m : messages) {
    m->layout.message_id = next_id++;
    model->records.push_back(m->layout);
  }
  for (RecordState* r : nested) {
    r->layout.message_id = 0;
    model->records.push_back(r->layout);
  }
  for (auto& [usr, state] : records_) {
    if (state.is_message && state.ok && state.stage == RecordState::Stage::kDone) {
      message_ids[usr] = {state.layout.name, state.layout.message_id};
    }
  }

  // The enums the model's fields name, by name.
  std::set<std::string> used_enums;
  for (const RecordLayout& r : model->records) {
    for (const FieldLayout& f : r.fields) {
      if (!f.enum_name.empty()) used_enums.insert(f.enum_name);
    }
  }
  for (auto& [usr, e] : enums_) {
    if (used_enums.count(e.name) != 0) model->enums.push_back(e);
  }
  std::sort(model->enums.begin(), model->enums.end(),
            [](const EnumLayout& a, const EnumLayout& b) { return a.name < b.name; });

  std::vector<ActorEntry*> actors;
  for (auto& [usr, actor] : actors_) actors.push_back(&actor);
  std::sort(actors.begin(), actors.end(),
            [](const ActorEntry* a, const ActorEntry* b) { return a->info.name < b->info.name; });
  uint32_t type_id = 0;
  for (ActorEntry* actor : actors) {
    actor->info.type_id = type_id++;
    for (HandlerEntry& h : actor->handlers) {
      auto it = message_ids.find(h.message_usr);
      if (it == message_ids.end()) continue;  // the message was rejected
      h.info.message = it->second.first;
      h.info.message_id = it->second.second;
      actor->info.handlers.push_back(h.info);
    }
    std::sort(actor->info.handlers.begin(), actor->info.handlers.end(),
              [](const HandlerInfo& a, const HandlerInfo& b) { return a.message_id < b.message_id; });
    model->actors.push_back(actor->info);
  }

  uint32_t route_id = 0;
  for (auto& [name, uses] : routes_) {
    model->routes.push_back(RouteInfo{name, route_id++, uses});
  }
}

HandlerModel ModelBuilder::Build() {
  api_.clang_visitChildren(api_.clang_getTranslationUnitCursor(s_.tu()), Visit, this);

  // Actors first: handlers need to know them.
  for (const Annotated& a : annotated_) {
    if (a.annotation == kActorAnnotation) AddActor(a.decl);
  }
  for (const Annotated& a : annotated_) {
    if (a.annotation == kHandlerAnnotation || a.annotation == kBlockHandlerAnnotation) {
      const bool thread = a.annotation == kHandlerAnnotation;
      const char* other = thread ? kBlockHandlerAnnotation : kHandlerAnnotation;
      const bool both = std::any_of(annotated_.begin(), annotated_.end(), [&](const Annotated& b) {
        return b.annotation == other && api_.clang_equalCursors(b.decl, a.decl);
      });
      if (both) {
        // Reported once, and the method still counts as the actor's handler.
        if (!thread) continue;
        s_.Error(Where(a.decl),
                 absl::StrCat("'", Spelling(a.decl), "' is marked both RK_HANDLER and RK_BLOCK_HANDLER; choose one"));
      }
      AddHandler(a.decl, thread ? HandlerKind::kThread : HandlerKind::kBlock);
    } else if (a.annotation == kMessageAnnotation) {
      AddMessageAnnotation(a.decl);
    } else if (a.annotation == kGlobalAnnotation) {
      s_.Error(Where(a.decl), absl::StrCat("'", Spelling(a.decl),
                                           "' is a __global__ function, but fragments cannot define kernels: the "
                                           "runtime launches the only kernel. Put the work in an actor's handler"));
    }
  }
  for (const MessageUse& use : sends_) {
    AddMessageUse(use.type, ExtentStart(use.argument), absl::StrCat(use.how, " here"));
  }

  // Every actor needs a handler, and one per message type.
  for (const std::string& usr : actor_order_) {
    ActorEntry& actor = actors_.at(usr);
    if (actor.handler_usrs.empty()) {
      s_.Error(actor.info.location, absl::StrCat("actor '", actor.info.name,
                                                 "' has no handlers: mark at least one method RK_HANDLER or "
                                                 "RK_BLOCK_HANDLER, void NAME(const M&, rk::Ctx&)"));
      continue;
    }
    absl::flat_hash_map<std::string, const HandlerEntry*> by_message;
    for (const HandlerEntry& h : actor.handlers) {
      if (h.message_usr.empty()) continue;
      auto [it, inserted] = by_message.try_emplace(h.message_usr, &h);
      if (!inserted) {
        auto record = records_.find(h.message_usr);
        const std::string message = record != records_.end() ? QualifiedName(record->second.def) : std::string("?");
        s_.Error(h.info.location, absl::StrCat("actor '", actor.info.name, "' has two handlers for message '", message,
                                               "': an actor handles each message type in one handler"));
        s_.Note(it->second->info.location, absl::StrCat("the first handler for '", message, "' is here"));
      }
    }
  }

  for (const std::string& usr : message_order_) CheckMessage(records_.at(usr));
  for (CXCursor call : route_calls_) AddRoute(call);

  HandlerModel model;
  model.max_payload = options_.max_payload;
  AssignIds(&model);
  return model;
}

}  // namespace

HandlerModel BuildModel(ParseSession& session, const FrontendOptions& options) {
  return ModelBuilder(session, options).Build();
}

}  // namespace rk::jit::frontend_internal
