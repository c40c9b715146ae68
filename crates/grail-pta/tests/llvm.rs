//! Constraints from LLVM IR: hand-written snippets in the shape clang writes (tests/llvm/*.ll,
//! checked with `llvm-as` where it is installed, and newer syntax inline), extracted, solved, and
//! checked by the names of what each pointer may point to.

use grail_pta::{Constraints, PointsTo, PtaError, Warning, extract_llvm, solve_sequential};
use proptest::prelude::*;

const SWAP: &str = include_str!("llvm/swap.ll");
const FNPTR: &str = include_str!("llvm/fnptr.ll");
const HEAP: &str = include_str!("llvm/heap.ll");
const PHI_SELECT: &str = include_str!("llvm/phi_select.ll");
const MEMCPY: &str = include_str!("llvm/memcpy.ll");
const WARNINGS: &str = include_str!("llvm/warnings.ll");
const TYPED: &str = include_str!("llvm/typed.ll");
const CALLS: &str = include_str!("llvm/calls.ll");

struct Solved {
    c: Constraints,
    pts: PointsTo,
    warnings: Vec<Warning>,
}

impl Solved {
    fn new(text: &str) -> Solved {
        let (c, warnings) = extract_llvm(text, "test.ll").unwrap_or_else(|e| panic!("{e}"));
        let pts = solve_sequential(&c);
        Solved { c, pts, warnings }
    }

    /// The names of what `var` may point to, sorted.
    fn targets(&self, var: &str) -> Vec<&str> {
        let Some(v) = self.c.id(var) else {
            panic!("no variable `{var}`; there are {:?}", self.c.names().collect::<Vec<_>>())
        };
        let mut names: Vec<&str> = self.pts.get(v).iter().map(|&t| self.c.name(t)).collect();
        names.sort();
        names
    }

    fn has(&self, constraint: &str) -> bool {
        self.c.constraints().iter().any(|&k| self.c.show(k).to_string() == constraint)
    }

    fn messages(&self) -> Vec<(usize, usize, &str)> {
        self.warnings.iter().map(|w| (w.line, w.count, w.message.as_str())).collect()
    }
}

#[test]
fn a_pointer_swap_through_a_function() {
    let s = Solved::new(SWAP);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // Arguments are copied into the parameters, which point to main's stack slots.
    assert!(s.has("swap.%a = main.%p") && s.has("swap.%b = main.%q"));
    assert!(s.has("main.%p = &main.p") && s.has("*main.%p = main.%x"));
    assert_eq!(s.targets("swap.%a"), ["main.p"]);
    assert_eq!(s.targets("swap.%b"), ["main.q"]);
    assert_eq!(s.targets("swap.a.addr"), ["main.p"]);
    // Flow-insensitively, after the swap either pointer may hold either address.
    for v in ["main.p", "main.q", "swap.t", "swap.%1", "swap.%3", "main.%0"] {
        assert_eq!(s.targets(v), ["main.x", "main.y"], "{v}");
    }
    assert_eq!(s.targets("main.%x"), ["main.x"]);
    // Integers are no variables of interest: `main.retval` holds an `i32`.
    assert!(s.targets("main.retval").is_empty());
    assert!(s.c.id("main.%1").is_none(), "the loaded i32 gets no variable");
}

#[test]
fn function_pointers_in_globals_and_indirect_calls() {
    let s = Solved::new(FNPTR);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // Initializers holding function addresses.
    assert_eq!(s.targets("@table"), ["@get_a", "@get_b"]);
    assert_eq!(s.targets("@handler"), ["@id"]);
    assert_eq!(s.targets("main.%0"), ["@get_a", "@get_b"], "loaded through a constant getelementptr");
    assert_eq!(s.targets("main.%1"), ["@id"]);
    // `table[1]()`: every address-taken function without parameters may be called.
    assert_eq!(s.targets("main.%call"), ["@a", "@b"]);
    assert_eq!(s.targets("main.r"), ["@a", "@b"]);
    // `handler(&b)`: `id` is the one address-taken function of one parameter; `never_taken`
    // is only called directly, so the indirect call passes nothing to it.
    assert_eq!(s.targets("id.%p"), ["@b"]);
    assert_eq!(s.targets("main.%call1"), ["@b"]);
    assert_eq!(s.targets("never_taken.%p"), ["@a"]);
    assert_eq!(s.targets("main.%call2"), ["@a"]);
    // A function's address stored through a pointer goes through `<&@f>`.
    assert!(s.has("<&@get_a> = &@get_a") && s.has("*install.%slot = <&@get_a>"));
    assert_eq!(s.targets("@slot"), ["@get_a"]);
    assert_eq!(s.targets("main.%2"), ["@get_a"]);
    // The call through `slot` is resolved by arity, so it is an over-approximation: `get_b`
    // is address-taken and takes no arguments too.
    assert_eq!(s.targets("main.%call3"), ["@a", "@b"]);
}

#[test]
fn allocation_sites_are_objects() {
    let s = Solved::new(HEAP);
    // With `!dbg`: named by the source line; without: numbered per allocator and function.
    assert_eq!(s.targets("make.%call"), ["malloc@make:4"]);
    assert_eq!(s.targets("make.%call1"), ["malloc@make:5"]);
    assert_eq!(s.targets("malloc@make:4"), ["malloc@make:5"], "n->next = malloc(8)");
    // Context-insensitive: both calls of `make` return the same object.
    assert_eq!(s.targets("main.%p"), ["malloc@make:4"]);
    assert_eq!(s.targets("main.%q"), ["malloc@make:4"]);
    assert_eq!(s.targets("main.%c"), ["calloc@main#1"]);
    assert_eq!(s.targets("main.%c2"), ["calloc@main#2"]);
    assert_eq!(s.targets("calloc@main#1"), ["malloc@make:4"]);
    // `realloc` makes a new object holding what the old one held.
    assert_eq!(s.targets("main.%r"), ["realloc@main#1"]);
    assert_eq!(s.targets("realloc@main#1"), ["malloc@make:4"]);
    assert_eq!(s.targets("main.%s"), ["strdup@main#1"]);
    // `invoke` of `operator new`, over two lines.
    assert_eq!(s.targets("main.%n"), ["_Znwm@main#1"]);
    // `posix_memalign` stores its object through its first argument, by way of `<&o>`.
    assert_eq!(s.targets("main.pm"), ["posix_memalign@main#1"]);
    assert!(s.has("*main.%pm = <&posix_memalign@main#1>"));
    // Debug intrinsics, metadata, attributes and declarations leave nothing behind.
    assert!(s.c.names().all(|n| !n.contains("llvm") && !n.contains("dbg")), "{:?}", s.c.names().collect::<Vec<_>>());
    assert_eq!(s.messages(), [(41, 1, "opcode `landingpad` is not modelled")]);
}

#[test]
fn phi_select_casts_and_aggregates_copy() {
    let s = Solved::new(PHI_SELECT);
    assert_eq!(s.targets("choose.%a"), ["@y"]);
    assert_eq!(s.targets("choose.%p"), ["@x", "@y"]);
    assert_eq!(s.targets("choose.%q"), ["@x", "@y", "@z"]);
    // Through ptrtoint/inttoptr and a struct value.
    assert_eq!(s.targets("choose.%r"), ["@x", "@y", "@z"]);
    assert_eq!(s.targets("choose.%e"), ["@x", "@y", "@z"]);
    assert_eq!(s.targets("main.%r"), ["@x", "@y", "@z"]);
    // Vectors of pointers, shuffled and frozen.
    assert_eq!(s.targets("vectors.%f"), ["@w", "@x"]);
    assert_eq!(s.targets("main.%t"), ["@w", "@x"]);
    // An address computed with integer arithmetic is not followed, and says so.
    assert!(s.targets("main.%u").is_empty());
    assert_eq!(
        s.messages(),
        [(41, 1, "`inttoptr` of a value not known to hold a pointer: what it points to is not modelled")]
    );
}

#[test]
fn memcpy_copies_contents() {
    let s = Solved::new(MEMCPY);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert!(s.has("f.<memcpy#1> = *f.%a") && s.has("*f.%b = f.<memcpy#1>"));
    assert_eq!(s.targets("f.a"), ["@g"]);
    assert_eq!(s.targets("f.b"), ["@g"], "a struct copied by memcpy");
    assert_eq!(s.targets("f.%v"), ["@g"]);
    assert_eq!(s.targets("f.<ret>"), ["@g"]);
    // From a constant global: its contents directly, no variable in between.
    assert!(s.has("*f.%c = @init"));
    assert_eq!(s.targets("@init"), ["@h"]);
    // The library `memmove` copies too, and returns its destination.
    assert_eq!(s.targets("f.c"), ["@g", "@h"]);
    assert_eq!(s.targets("f.%d"), ["f.c"]);
    // `strchr` returns a pointer into its argument; `strtol` stores one through `endptr`.
    assert_eq!(s.targets("f.%ch"), ["f.c"]);
    assert_eq!(s.targets("f.end"), ["f.c"]);
}

#[test]
fn what_is_not_modelled_is_reported() {
    let s = Solved::new(WARNINGS);
    assert_eq!(
        s.messages(),
        [
            (12, 1, "variadic arguments of `@sum` are not modelled"),
            (13, 1, "`va_arg` of a pointer: variadic arguments are not modelled"),
            (20, 2, "external function `@getenv` returns a pointer: its result points to nothing here"),
            (22, 1, "function `@cmp` is passed to external function `@qsort`, whose calls of it are not modelled"),
            (23, 1, "inline assembly is not modelled"),
            (24, 1, "`inttoptr` of a constant that names no global: what it points to is not modelled"),
            (26, 1, "an indirect call with 3 arguments: no address-taken function takes them"),
        ]
    );
    let shown = s.warnings[2].to_string();
    assert_eq!(
        shown,
        "test.ll:20: external function `@getenv` returns a pointer: its result points to nothing here (2 times)"
    );
    // cmpxchg stores the new value and loads the old one.
    assert!(s.has("*main.%base = main.%i") && s.has("main.%pair = *main.%base"));
}

#[test]
fn typed_pointers_as_older_clang_writes_them() {
    let s = Solved::new(TYPED);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.targets("@gp"), ["@g"]);
    assert_eq!(s.targets("@elem"), ["@arr"], "a constant getelementptr into an array");
    assert_eq!(s.targets("@fp"), ["@id"]);
    assert_eq!(s.targets("use.s"), ["@g", "malloc@use#1"], "both fields of the struct, field-insensitively");
    assert_eq!(s.targets("use.%f"), ["@id"]);
    assert_eq!(s.targets("use.%r"), ["@g"]);
    assert_eq!(s.targets("use.%e"), ["@arr"]);
    // A call through a constant cast of a function is a direct call of it.
    assert_eq!(s.targets("h.%q"), ["use.s"]);
    assert!(s.c.id("<&@h>").is_none() && s.targets("use.%f") == ["@id"]);
}

#[test]
fn calls_with_function_types_and_struct_results() {
    let s = Solved::new(CALLS);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // `%struct.T (ptr, ...)` is the callee's type, not a call of `%struct.T`; the variadic `mk`
    // takes the indirect call's three arguments.
    assert_eq!(s.targets("user.%f"), ["@mk"]);
    assert_eq!(s.targets("mk.%p"), ["@g"]);
    assert_eq!(s.targets("user.%t"), ["@g"]);
    assert_eq!(s.targets("user.%p"), ["@g"]);
    assert_eq!(s.targets("user.%d"), ["@g"]);
}

/// What clang 19 writes (newer than the installed `llvm-as`): debug records, `range` and
/// `captures` attributes, `nuw` on getelementptr, pointer `atomicrmw`, `llvm.threadlocal.address`;
/// and quoted names, aliases, an unnamed entry block and parameters, a `switch` over lines.
const NEWER: &str = r#"
; ModuleID = 'new.c'
source_filename = "new.c"
target triple = "x86_64-unknown-linux-gnu"

%struct.S = type { ptr, [2 x ptr] }
%struct.opaque = type opaque

$comdat_fn = comdat any

@tls = dso_local thread_local global ptr null, align 8
@"odd name" = dso_local global ptr @g, align 8
@g = dso_local global i32 0, align 4
@arr = dso_local global [4 x i32] zeroinitializer, align 16
@p2 = dso_local global ptr getelementptr inbounds nuw (i8, ptr @arr, i64 8), align 8
@alias = dso_local alias i32, ptr @g
@vt = dso_local unnamed_addr constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr @m1, ptr @"m 2"] }, comdat($comdat_fn), align 8
@llvm.used = appending global [1 x ptr] [ptr @m1], section "llvm.metadata"

define dso_local noundef range(i32 0, 2) i32 @m1(ptr noundef captures(none) %this) {
entry:
  ret i32 0
}

define internal i32 @"m 2"(ptr noundef %this) comdat($comdat_fn) {
entry:
  ret i32 1
}

; Function Attrs: noinline nounwind optnone uwtable
define dso_local ptr @f(ptr noundef %0, i32 noundef %1) #0 !dbg !10 {
  %3 = alloca ptr, align 8
  %"a b" = alloca ptr, align 8
  store ptr %0, ptr %3, align 8
    #dbg_declare(ptr %3, !15, !DIExpression(), !16)
  %4 = call align 8 ptr @llvm.threadlocal.address.p0(ptr align 8 @tls)
  store ptr @alias, ptr %4, align 8, !dbg !16
  %5 = load ptr, ptr %4, align 8
  %6 = atomicrmw xchg ptr %3, ptr %5 seq_cst, align 8
  store ptr @"odd name", ptr %"a b", align 8
  switch i32 %1, label %7 [
    i32 0, label %8
    i32 1, label %9
  ]

7:                                                ; preds = %2
  br label %9

8:                                                ; preds = %2
  %10 = getelementptr inbounds nuw %struct.S, ptr %5, i32 0, i32 1
  br label %9

9:                                                ; preds = %8, %7, %2
  %11 = phi ptr [ %6, %7 ], [ %10, %8 ], [ %5, %2 ]
  %12 = call noalias ptr @malloc(i64 noundef 8) #2, !dbg !17
  %13 = call noalias ptr @malloc(i64 noundef 8) #2, !dbg !17
  ret ptr %11, !dbg !17
}

define void @tiny(ptr) { ret void }

define void @caller() {
  call void @tiny(ptr @g)
  ret void
}

declare noalias ptr @malloc(i64 noundef) #1
declare nonnull ptr @llvm.threadlocal.address.p0(ptr nonnull)

attributes #0 = { noinline nounwind optnone uwtable "frame-pointer"="all" }
attributes #1 = { nounwind allocsize(0) }
attributes #2 = { nounwind allocsize(0) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "clang version 19.1.7", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "new.c", directory: "/src")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!10 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 5, type: !11, scopeLine: 5, spFlags: DISPFlagDefinition, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{null}
!15 = !DILocalVariable(name: "p", arg: 1, scope: !10, file: !1, line: 5, type: !18)
!16 = !DILocation(line: 5, column: 13, scope: !10)
!17 = !DILocation(line: 7, column: 3, scope: !10)
!18 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: null, size: 64)
"#;

#[test]
fn newer_syntax_quoted_names_and_aliases() {
    let s = Solved::new(NEWER);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // Quoted names keep their quotes, with whitespace escaped so that the name is one token.
    assert_eq!(s.targets("@\"odd\\20name\""), ["@g"]);
    assert_eq!(s.targets("f.\"a\\20b\""), ["@\"odd\\20name\""]);
    assert_eq!(s.targets("f.%\"a\\20b\""), ["f.\"a\\20b\""]);
    assert_eq!(s.targets("@vt"), ["@\"m\\202\"", "@m1"]);
    assert_eq!(s.targets("@p2"), ["@arr"]);
    // `@alias` is `@g`; the thread-local is reached through `llvm.threadlocal.address`.
    assert_eq!(s.targets("f.%4"), ["@tls"]);
    assert_eq!(s.targets("@tls"), ["@g"]);
    assert!(s.c.id("@alias").is_none());
    // `atomicrmw xchg` stores the new pointer and returns the old.
    assert_eq!(s.targets("f.3"), ["@g"]);
    assert_eq!(s.targets("f.%6"), ["@g"]);
    // The phi's incoming block `%2` is the unnamed entry block.
    assert_eq!(s.targets("f.%11"), ["@g"]);
    // Two allocations on one source line: the second name gets `#2`.
    assert_eq!(s.targets("f.%12"), ["malloc@f:7"]);
    assert_eq!(s.targets("f.%13"), ["malloc@f:7#2"]);
    // An unnamed parameter is `%0`; a whole function on one line is read.
    assert_eq!(s.targets("tiny.%0"), ["@g"]);
    // `@llvm.used` is no object, and does not make `@m1` address-taken by itself.
    assert!(s.c.names().all(|n| !n.contains("llvm")));
}

#[test]
fn objects_with_one_name_are_told_apart() {
    // `@f.a` with `%b = alloca` and `@f` with `%a.b = alloca` both make `f.a.b`.
    let text = "define void @f.a() {\n  %b = alloca ptr\n  store ptr %b, ptr %b\n  ret void\n}\n\
                define void @f() {\n  %a.b = alloca ptr\n  store ptr @g, ptr %a.b\n  ret void\n}\n\
                @g = global i32 0\n";
    let s = Solved::new(text);
    assert_eq!(s.targets("f.a.b"), ["f.a.b"]);
    assert_eq!(s.targets("f.a.b#2"), ["@g"]);
    assert_eq!(s.targets("f.a.%b"), ["f.a.b"]);
    assert_eq!(s.targets("f.%a.b"), ["f.a.b#2"]);
}

#[test]
fn constraints_extracted_are_written_and_read_back() {
    let (c, _) = extract_llvm(NEWER, "new.ll").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.txt");
    grail_pta::write_constraints(&c, &path).unwrap();
    assert_eq!(grail_pta::read_constraints(&path).unwrap(), c);
}

#[test]
fn malformed_ir_names_the_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("@s = global [2 x i8] c\"ab\n", 1, "a string that is never closed"),
        ("@g = global [2 x ptr] [ptr null,\n ptr null\n", 1, "`[` is never closed"),
        ("define void @f() {\nentry:\n  ret void\n", 1, "the body of `@f` is never closed with `}`"),
        ("define void @f() {\n  ret void\n\ndefine void @g() {\n  ret void\n}\n", 1, "never closed"),
        ("define void @f(ptr %p {\n  ret void\n}\n", 1, "the parameter list of `@f` is never closed"),
        ("define void @f()\n", 1, "has no body"),
        ("define void {\n}\n", 1, "`define` without a function name"),
        ("define @f() {\n  ret void\n}\n", 1, "expected a return type before `@f`"),
        ("define void @f() {\n  %x = load ptr\n  ret void\n}\n", 2, "`load`: expected a pointer operand"),
        ("define void @f() {\n  %x = load\n}\n", 2, "`load`: expected the type loaded"),
        ("define void @f(ptr %p) {\n  store ptr %p\n  ret void\n}\n", 2, "`store`: expected a pointer operand"),
        ("define void @f() {\n\n  call void @g\n  ret void\n}\n", 3, "`call`: expected a callee and its arguments"),
        ("define void @f() {\n  call void @g(ptr null\n}\n", 2, "never closed"),
        (
            "define void @f() {\n  %p = bitcast ptr\n  ret void\n}\n",
            2,
            "`bitcast`: expected `<type> <value> to <type>`",
        ),
        ("define void @f() {\n  ret ptr\n}\n", 2, "`ret`: expected the value returned"),
        ("declare void @f(ptr, 17)\n", 1, "a parameter of `@f`: expected a type, found `17`"),
    ];
    for &(text, line, expected) in cases {
        match extract_llvm(text, "bad.ll") {
            Err(PtaError::Malformed { path, line: at, message }) => {
                assert_eq!((path.as_str(), at), ("bad.ll", line), "{text:?}: {message}");
                assert!(message.contains(expected), "{text:?}: `{message}` lacks `{expected}`");
            }
            other => panic!("{text:?}: expected a malformed-file error, got {other:?}"),
        }
    }
    // Unknown things that are not malformed are skipped with a warning instead.
    let (_, warnings) =
        extract_llvm("frobnicate 3\ndefine void @f() {\n  %x = wibble ptr null\n  ret void\n}\n", "odd.ll").unwrap();
    let messages: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        messages,
        ["a top-level line starting with `frobnicate` is not understood: skipped", "opcode `wibble` is not modelled"]
    );
}

/// The snippets are valid IR for `llvm-as`, where one is installed (opaque pointers need
/// `-opaque-pointers` before LLVM 15, and typed pointers an LLVM before 17).
#[test]
fn snippets_are_valid_ir() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/llvm");
    let Ok(version) = std::process::Command::new("llvm-as").arg("--version").output() else {
        eprintln!("llvm-as is not installed: the snippets are not checked");
        return;
    };
    let version = String::from_utf8_lossy(&version.stdout).to_string();
    let major: u32 = version
        .split("version ")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let typed = path.file_name().is_some_and(|n| n == "typed.ll");
        if typed && major >= 17 {
            continue;
        }
        let mut command = std::process::Command::new("llvm-as");
        if !typed && major < 15 {
            command.arg("-opaque-pointers");
        }
        let out = command.arg(&path).arg("-o").arg("/dev/null").output().unwrap();
        assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    }
}

fn snippets() -> [&'static str; 9] {
    [SWAP, FNPTR, HEAP, PHI_SELECT, MEMCPY, WARNINGS, TYPED, CALLS, NEWER]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any prefix, and any text with a few bytes changed, gives constraints or an error.
    #[test]
    fn damaged_input_never_panics(
        which in 0usize..9,
        cut in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..25), 0..6),
    ) {
        let text = snippets()[which];
        let mut bytes = text.as_bytes()[..cut.index(text.len() + 1).min(text.len())].to_vec();
        for (at, what) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            bytes[i] = b"\"(){}[]<>,=%@!#;:\n *x0-.c"[what];
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = extract_llvm(&text, "damaged.ll") {
            prop_assert!(matches!(e, PtaError::Malformed { .. }), "{}", e);
        }
    }

    #[test]
    fn token_soup_never_panics(soup in proptest::collection::vec(prop::sample::select(vec![
        "define", "declare", "ptr", "i32", "@g", "%x", "=", ",", "(", ")", "{", "}", "[", "]", "<", ">", "x", "4",
        "load", "store", "call", "ret", "alloca", "phi", "select", "getelementptr", "bitcast", "to", "\n",
        "global", "type", "!dbg", "!0", "#0", "...", "void", "invoke", "label", "inttoptr", "\"s\"", "c\"t\"",
    ]), 0..80)) {
        let text = soup.join(" ");
        if let Err(e) = extract_llvm(&text, "soup.ll") {
            prop_assert!(matches!(e, PtaError::Malformed { .. }), "{}", e);
        }
    }
}
