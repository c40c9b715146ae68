//! Constraints from textual LLVM IR, as `clang -S -emit-llvm` writes it (clang 14 to 19: opaque
//! `ptr` pointers, and typed pointers such as `i8*` as well). The model is field-insensitive (an
//! object is one variable, whatever its fields or elements) and context-insensitive (a
//! function's parameters and return value are one variable each, shared by every call), the
//! classic setting of Andersen's analysis.
//!
//! # Variables
//!
//! | what | name | examples |
//! |---|---|---|
//! | a global variable or a function (the object) | `@name` | `@g`, `@main` |
//! | SSA value or parameter `%x` of function `@f` | `f.%x` | `main.%p`, `main.%0` |
//! | the stack object of `%x = alloca` in `@f` | `f.x` | `main.p` |
//! | the heap object of an allocation call in `@f` | `ALLOC@f:LINE`, `ALLOC@f#N` | `malloc@main:12`, `_Znwm@main#1` |
//! | the return value of `@f` | `f.<ret>` | `make.<ret>` |
//! | the address of object `o`, where a variable must hold it | `<&o>` | `<&@handler>` |
//! | the data moved by the `N`-th `memcpy`/`memmove` in `@f` | `f.<memcpy#N>` | `main.<memcpy#1>` |
//!
//! `LINE` is the source line of the call's `!dbg` location; without one, `N` counts that
//! allocator's calls in the function. Names are LLVM's, quoted names canonical: `@"g"` is `@g`,
//! and a name that needs quotes keeps them with whitespace, `=`, `"`, `\` and non-ASCII bytes
//! written `\XX` (`@"a b"` is `@"a\20b"`), so every name is a token of the text format. SSA
//! values are told from objects by their `%`, and the synthetic variables by `<...>`, which LLVM
//! names never hold unquoted; should two objects still get one name (`@f.a` with `%b = alloca`
//! and `@f` with `%a.b = alloca` are both `f.a.b`), the later gets `#2`, `#3`, ... appended.
//!
//! # Constraints
//!
//! A global's name as an operand is its address, so constant addresses are folded into the
//! constraints: `%q = getelementptr ..., ptr @g, ...` gives `f.%q = &@g`, `store ptr %x, ptr @g`
//! gives `@g = f.%x`, `%v = load ptr, ptr @g` gives `f.%v = @g`; only an address stored through
//! a pointer (`store ptr @g, ptr %p`) needs the variable `<&@g>` (`<&@g> = &@g`, `*f.%p = <&@g>`).
//! Global initializers give `@g = &@x` for every global or function `@x` they mention.
//!
//! - `%p = alloca T` gives `f.%p = &f.p`; allocation calls (`malloc`, `calloc`, `realloc`,
//!   `reallocarray`, `strdup`, `strndup`, `aligned_alloc`, `memalign`, `valloc`, `pvalloc`,
//!   `posix_memalign` and C++ `operator new`: `_Znwm`, `_Znam` and their `nothrow`/aligned/32-bit
//!   variants) give a fresh object per call site; `realloc` also copies the old object's contents
//!   into it. (These and the library functions below are recognised only where the module does
//!   not define a function of that name: a definition is analysed as code.)
//! - `load` gives `p = *q` and `store` gives `*p = q`, for pointer-holding types only (a pointer,
//!   or a vector, array or struct holding one).
//! - `getelementptr`, `bitcast`, `addrspacecast`, `ptrtoint`, `inttoptr`, `freeze`,
//!   `extractvalue`/`insertvalue`, `extractelement`/`insertelement`/`shufflevector`, and each
//!   incoming pointer of `phi` and `select`, give copies. An `inttoptr` of anything but a
//!   `ptrtoint` result (or a constant that names a global) warns: arithmetic on integers is
//!   not followed.
//! - `atomicrmw xchg` and `cmpxchg` of pointers store the new value and load the old one.
//! - A call or `invoke` of a defined function copies each pointer argument into the
//!   parameter (`f.%a = main.%x`) and the return value into the result (`main.%r = f.<ret>`);
//!   `ret ptr %x` gives `f.<ret> = f.%x`.
//! - `memcpy`/`memmove` (the intrinsics and the library functions) give `*dst = *src` through a
//!   variable, `f.<memcpy#N> = *src` and `*dst = f.<memcpy#N>`; `llvm.va_copy` likewise.
//! - A few library functions return (part of) an argument: `strcpy`, `strncpy`, `strcat`,
//!   `strncat`, `stpcpy`, `memset`, `strchr`, `strrchr`, `strstr`, `strpbrk`, `memchr`, `fgets`
//!   and the intrinsics `llvm.ptrmask`, `llvm.threadlocal.address`,
//!   `llvm.launder.invariant.group`, `llvm.strip.invariant.group`; `strtol` and its kin store
//!   their string argument through `endptr`.
//!
//! # Indirect calls
//!
//! The constraint language has the four kinds only, so that a solver (and the grail program)
//! needs nothing else. An indirect call therefore cannot wait for the solver to say what the
//! function pointer holds: it is resolved by signature instead. Each call through a pointer
//! gets the argument and return copies of *every address-taken function of matching arity*
//! (as many parameters as the call has arguments, or at most as many for a variadic function),
//! exactly as if it called each of them directly. A function is address-taken if its name occurs
//! anywhere but as the callee of a direct call (global initializers, stores, arguments, ...).
//! Every function a pointer can hold is address-taken and a call through it passes as many
//! arguments as the function takes, so this is a sound over-approximation (a call through a
//! pointer cast to another arity is undefined in C); the points-to set of the function pointer
//! itself, after solving, says which of them it may really call. An address-taken allocator or
//! library function is modelled as when called directly.
//!
//! # Not modelled
//!
//! Each of these gives a [`Warning`] (one per kind, with where it first happened and how often),
//! never silence: opcodes that are not modelled (`landingpad`, `va_arg`, the Windows exception
//! pads, and anything unknown; integer and floating-point arithmetic, comparisons, non-pointer
//! casts, branches, `fence`, `resume` and `unreachable` move no pointers and give none),
//! `inttoptr` of unknown origin, external functions returning a pointer (the result points to
//! nothing), functions handed to external code (which may call them: those calls are not seen),
//! variadic arguments (`llvm.va_start`), inline assembly, intrinsics returning pointers that
//! are not listed above, indirect calls no function matches, and top-level lines that are not
//! understood. Also outside the model, without warnings: exceptions in flight, `byval`
//! arguments (the parameter points to the caller's object rather than to a copy, which is
//! sound), `blockaddress`, values of instructions written without a `%name =` (clang always
//! writes one), and whatever external code does to memory it is given.
//!
//! Debug records (`#dbg_value`), metadata, attribute groups, comdats, declarations, type
//! definitions, `uselistorder` directives and summaries are read past. Malformed input (an
//! unterminated string or bracket, an instruction missing operands the model needs) is an error
//! naming the file and line; nothing panics.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::{Constraint, Constraints, PtaError, Result, VarId};

/// Something the extraction left out or over-approximated: where it first happened, how often,
/// and what it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    pub line: usize,
    pub count: usize,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        Ok(())
    }
}

/// Extracts constraints from LLVM IR text; `file_name` is what errors and warnings call it.
/// Returns the constraints and the warnings, ordered by the line they first happened on.
pub fn extract_llvm(text: &str, file_name: &str) -> Result<(Constraints, Vec<Warning>)> {
    let fail = |(line, message): Bad| PtaError::Malformed { path: file_name.to_string(), line, message };
    let tokens = lex(text).map_err(fail)?;
    let module = split_module(&tokens).map_err(fail)?;
    let mut builder = Builder::new(file_name);
    builder.scan(&module).map_err(fail)?;
    builder.emit(&module).map_err(fail)?;
    Ok(builder.finish())
}

/// Reads an LLVM IR file and extracts its constraints ([`extract_llvm`], errors and warnings
/// naming the file as given).
pub fn read_llvm(path: &std::path::Path) -> Result<(Constraints, Vec<Warning>)> {
    extract_llvm(&crate::read_text(path)?, &path.display().to_string())
}

/// An error: the line and what is wrong.
type Bad = (usize, String);
type Parsed<T> = std::result::Result<T, Bad>;

/// How deep types and constants may nest (deeper input is malformed, not a stack overflow).
const MAX_DEPTH: usize = 200;

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `@name`, `@"name"`, `@0`
    Global,
    /// `%name`, `%"name"`, `%0`
    Local,
    /// `!name`, `!0` (metadata names and references)
    Meta,
    /// `#0`
    AttrGroup,
    /// `#dbg_value` and the like (debug records)
    Record,
    /// `$name`
    Comdat,
    /// `name:` (the text without the colon)
    Label,
    /// keywords, types (`i32`, `ptr`), and `...`
    Ident,
    Number,
    Str,
    /// `c"..."`
    CStr,
    Punct,
}

#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    kind: Kind,
    text: &'a str,
    line: usize,
    /// The first token on its line.
    first: bool,
}

impl Tok<'_> {
    fn is(&self, punct: &str) -> bool {
        self.kind == Kind::Punct && self.text == punct
    }

    fn ident(&self, word: &str) -> bool {
        self.kind == Kind::Ident && self.text == word
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'$' | b'.' | b'_' | b'-')
}

fn lex(src: &str) -> Parsed<Vec<Tok<'_>>> {
    let bytes = src.as_bytes();
    let word_end = |mut j: usize| {
        while j < bytes.len() && is_word_byte(bytes[j]) {
            j += 1;
        }
        j
    };
    let mut tokens = Vec::new();
    let (mut i, mut line, mut first) = (0, 1, true);
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            line += 1;
            first = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b';' {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let (start, at) = (i, line);
        let mut text_end = None;
        let kind = match c {
            b'"' => {
                i = string_end(bytes, i, &mut line)?;
                if bytes.get(i) == Some(&b':') {
                    text_end = Some(i);
                    i += 1;
                    Kind::Label
                } else {
                    Kind::Str
                }
            }
            b'@' | b'%' | b'$' => {
                i += 1;
                i = if bytes.get(i) == Some(&b'"') { string_end(bytes, i, &mut line)? } else { word_end(i) };
                match c {
                    _ if i == start + 1 => Kind::Punct,
                    b'@' => Kind::Global,
                    b'%' => Kind::Local,
                    _ => Kind::Comdat,
                }
            }
            b'!' | b'#' => {
                let end = word_end(i + 1);
                if end == i + 1 {
                    i += 1;
                    Kind::Punct
                } else {
                    i = end;
                    match (c, bytes[start + 1].is_ascii_digit()) {
                        (b'!', _) => Kind::Meta,
                        (_, true) => Kind::AttrGroup,
                        _ => Kind::Record,
                    }
                }
            }
            b'c' if bytes.get(i + 1) == Some(&b'"') => {
                i = string_end(bytes, i + 1, &mut line)?;
                Kind::CStr
            }
            _ if is_word_byte(c) => {
                i = word_end(i);
                let word = &bytes[start..i];
                let numeric =
                    word[0].is_ascii_digit() || (word.len() > 1 && word[0] == b'-' && word[1].is_ascii_digit());
                // The exponent of `1.5e+10`.
                if numeric && matches!(word.last(), Some(b'e' | b'E')) && matches!(bytes.get(i), Some(b'+' | b'-')) {
                    i = word_end(i + 1);
                }
                if bytes.get(i) == Some(&b':') {
                    text_end = Some(i);
                    i += 1;
                    Kind::Label
                } else if numeric {
                    Kind::Number
                } else {
                    Kind::Ident
                }
            }
            _ => {
                i += src[i..].chars().next().map_or(1, char::len_utf8);
                Kind::Punct
            }
        };
        tokens.push(Tok { kind, text: &src[start..text_end.unwrap_or(i)], line: at, first });
        first = false;
    }
    Ok(tokens)
}

/// The index after the string that opens at `open` (LLVM strings have no escaped quotes: a
/// quote inside is written `\22`).
fn string_end(bytes: &[u8], open: usize, line: &mut usize) -> Parsed<usize> {
    let start_line = *line;
    for (j, &b) in bytes.iter().enumerate().skip(open + 1) {
        match b {
            b'"' => return Ok(j + 1),
            b'\n' => *line += 1,
            _ => {}
        }
    }
    Err((start_line, "a string that is never closed with `\"`".into()))
}

/// +1 for an opening bracket, -1 for a closing one; `angles` counts `<` and `>` too (they
/// bracket vector types and constants, and nothing else in IR).
fn bracket(t: &Tok, angles: bool) -> i32 {
    if t.kind != Kind::Punct {
        return 0;
    }
    match t.text {
        "(" | "[" | "{" => 1,
        ")" | "]" | "}" => -1,
        "<" if angles => 1,
        ">" if angles => -1,
        _ => 0,
    }
}

/// The index of the bracket that closes the one at `open`.
fn matching(toks: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        depth += bracket(t, true);
        if depth <= 0 {
            return (depth == 0 && j > open).then_some(j);
        }
    }
    None
}

/// `toks` split at the commas outside brackets.
fn split_commas<'t, 'a>(toks: &'t [Tok<'a>]) -> Vec<&'t [Tok<'a>]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (j, t) in toks.iter().enumerate() {
        if depth == 0 && t.is(",") {
            parts.push(&toks[start..j]);
            start = j + 1;
        }
        depth = (depth + bracket(t, true)).max(0);
    }
    if start < toks.len() || !parts.is_empty() {
        parts.push(&toks[start..]);
    }
    parts
}

// ---------------------------------------------------------------------------------------------
// Names

/// An LLVM identifier (what follows `@` or `%`) as a name component: unquoted if LLVM would
/// write it so, else quoted with the bytes a name cannot hold written `\XX`.
fn ident_name(raw: &str) -> String {
    let Some(quoted) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return raw.to_string();
    };
    let mut bytes = Vec::with_capacity(quoted.len());
    let q = quoted.as_bytes();
    let mut i = 0;
    while i < q.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if q[i] == b'\\' {
            if q.get(i + 1) == Some(&b'\\') {
                bytes.push(b'\\');
                i += 2;
                continue;
            }
            if let (Some(h), Some(l)) = (q.get(i + 1).and_then(|&b| hex(b)), q.get(i + 2).and_then(|&b| hex(b))) {
                bytes.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        bytes.push(q[i]);
        i += 1;
    }
    // What LLVM writes unquoted: `[-a-zA-Z$._][-a-zA-Z$._0-9]*`, or a number.
    let plain = !bytes.is_empty()
        && (bytes.iter().all(u8::is_ascii_digit)
            || (!bytes[0].is_ascii_digit() && bytes.iter().all(|&b| is_word_byte(b))));
    if plain {
        return String::from_utf8(bytes).unwrap_or_default();
    }
    let mut out = String::from("\"");
    for b in bytes {
        if b.is_ascii_graphic() && !matches!(b, b'"' | b'\\' | b'=') {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{b:02X}"));
        }
    }
    out.push('"');
    out
}

/// `@name` of a global token.
fn global_name(t: &Tok) -> String {
    format!("@{}", ident_name(&t.text[1..]))
}

/// The name component of a local token (`%x` is `x`).
fn local_name(t: &Tok) -> String {
    ident_name(&t.text[1..])
}

// ---------------------------------------------------------------------------------------------
// Module structure

enum Top<'t, 'a> {
    Statement(&'t [Tok<'a>]),
    Function { header: &'t [Tok<'a>], body: Vec<&'t [Tok<'a>]> },
}

fn split_module<'t, 'a>(toks: &'t [Tok<'a>]) -> Parsed<Vec<Top<'t, 'a>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i].ident("define") {
            let (top, next) = split_function(toks, i)?;
            out.push(top);
            i = next;
        } else {
            let end = statement_end(toks, i, |_| true)?;
            out.push(Top::Statement(&toks[i..end]));
            i = end;
        }
    }
    Ok(out)
}

/// Where the statement starting at `start` ends: at the next token that begins a line outside
/// brackets and that `starts` accepts, or at a `}` that closes nothing (a function body's). A
/// bracket closed by one of another kind, or never, and a bracket that closes nothing, are
/// errors.
fn statement_end(toks: &[Tok], start: usize, starts: impl Fn(&Tok) -> bool) -> Parsed<usize> {
    let mut open: Vec<&Tok> = Vec::new();
    for (j, t) in toks.iter().enumerate().skip(start) {
        if j > start && open.is_empty() && t.first && starts(t) {
            return Ok(j);
        }
        match bracket(t, false) {
            1 => open.push(t),
            -1 => match open.pop() {
                None if t.text == "}" && j > start => return Ok(j),
                None => return Err((t.line, format!("`{}` closes nothing", t.text))),
                Some(o) if matches!((o.text, t.text), ("(", ")") | ("[", "]") | ("{", "}")) => {}
                Some(o) => {
                    return Err((o.line, format!("`{}` is never closed (`{}` on line {})", o.text, t.text, t.line)));
                }
            },
            _ => {}
        }
    }
    match open.last() {
        Some(o) => Err((o.line, format!("`{}` is never closed", o.text))),
        None => Ok(toks.len()),
    }
}

fn is_top_keyword(t: &Tok) -> bool {
    t.first && (t.ident("define") || t.ident("declare"))
}

/// A function definition from its `define`: the header and the body's statements.
fn split_function<'t, 'a>(toks: &'t [Tok<'a>], start: usize) -> Parsed<(Top<'t, 'a>, usize)> {
    let line = toks[start].line;
    let mut j = start + 1;
    let name_at = loop {
        match (toks.get(j), toks.get(j + 1)) {
            (Some(t), Some(n)) if t.kind == Kind::Global && n.is("(") => break j,
            (Some(t), _) if !is_top_keyword(t) => j += 1,
            _ => return Err((line, "`define` without a function name and `(`".into())),
        }
    };
    let name = toks[name_at].text;
    let close =
        matching(toks, name_at + 1).ok_or_else(|| (line, format!("the parameter list of `{name}` is never closed")))?;
    let mut k = close + 1;
    let mut depth = 0;
    let open = loop {
        match toks.get(k) {
            Some(t) if depth == 0 && t.is("{") => break k,
            Some(t) if !is_top_keyword(t) => {
                if t.is("(") || t.is("[") {
                    depth += 1;
                } else if t.is(")") || t.is("]") {
                    depth -= 1;
                }
            }
            _ => return Err((line, format!("the definition of `{name}` has no body `{{`"))),
        }
        k += 1;
    };
    let mut body = Vec::new();
    let mut j = open + 1;
    loop {
        match toks.get(j) {
            Some(t) if t.is("}") => {
                return Ok((Top::Function { header: &toks[start..open], body }, j + 1));
            }
            Some(t) if !is_top_keyword(t) => {
                let end = statement_end(toks, j, |t| {
                    !(t.kind == Kind::Ident && matches!(t.text, "to" | "unwind" | "catch" | "filter" | "cleanup"))
                })?;
                body.push(&toks[j..end]);
                j = end;
            }
            _ => return Err((line, format!("the body of `{name}` is never closed with `}}`"))),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Types

#[derive(Clone, Debug)]
enum Ty {
    Ptr,
    /// Integers, floating point, `void`, labels, metadata, tokens: nothing that holds a pointer.
    Other,
    /// An array, vector or struct, by its element types (field-insensitive: which is which does
    /// not matter).
    Agg(Vec<Ty>),
    Named(String),
    /// A function type, by its return type.
    Func {
        ret: Box<Ty>,
    },
}

fn is_simple_type(s: &str) -> bool {
    matches!(
        s,
        "void"
            | "half"
            | "bfloat"
            | "float"
            | "double"
            | "fp128"
            | "x86_fp80"
            | "ppc_fp128"
            | "x86_mmx"
            | "x86_amx"
            | "label"
            | "metadata"
            | "token"
            | "opaque"
    ) || s.strip_prefix('i').is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
}

/// Past an `addrspace(N)` at `j`, if there is one.
fn skip_addrspace(toks: &[Tok], j: usize) -> usize {
    match (toks.get(j), toks.get(j + 1)) {
        (Some(t), Some(p)) if t.ident("addrspace") && p.is("(") => matching(toks, j + 1).map_or(j, |c| c + 1),
        _ => j,
    }
}

/// The type at `pos` and the index after it.
fn parse_type(toks: &[Tok], pos: usize) -> Option<(Ty, usize)> {
    parse_type_at(toks, pos, 0)
}

fn parse_type_at(toks: &[Tok], pos: usize, depth: usize) -> Option<(Ty, usize)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let t = toks.get(pos)?;
    let (mut ty, mut j) = match t.kind {
        Kind::Ident => match t.text {
            "ptr" => (Ty::Ptr, skip_addrspace(toks, pos + 1)),
            "target" if toks.get(pos + 1).is_some_and(|p| p.is("(")) => (Ty::Other, matching(toks, pos + 1)? + 1),
            s if is_simple_type(s) => (Ty::Other, pos + 1),
            _ => return None,
        },
        Kind::Local => (Ty::Named(local_name(t)), pos + 1),
        Kind::Punct => match t.text {
            "[" => {
                let (elem, j) = parse_sized(toks, pos + 1, depth)?;
                (Ty::Agg(vec![elem]), expect(toks, j, "]")?)
            }
            "<" if toks.get(pos + 1).is_some_and(|t| t.is("{")) => {
                let (s, j) = parse_struct(toks, pos + 1, depth)?;
                (s, expect(toks, j, ">")?)
            }
            "<" => {
                let scalable = toks.get(pos + 1).is_some_and(|t| t.ident("vscale"));
                let (elem, j) = parse_sized(toks, pos + if scalable { 3 } else { 1 }, depth)?;
                (Ty::Agg(vec![elem]), expect(toks, j, ">")?)
            }
            "{" => parse_struct(toks, pos, depth)?,
            _ => return None,
        },
        _ => return None,
    };
    loop {
        match toks.get(j) {
            Some(t) if t.is("*") => {
                ty = Ty::Ptr;
                j += 1;
            }
            Some(t) if t.ident("addrspace") => {
                let k = skip_addrspace(toks, j);
                if k == j || !toks.get(k).is_some_and(|t| t.is("*")) {
                    break;
                }
                ty = Ty::Ptr;
                j = k + 1;
            }
            Some(t) if t.is("(") => match parse_params(toks, j, depth) {
                Some(k) => {
                    ty = Ty::Func { ret: Box::new(ty) };
                    j = k;
                }
                None => break,
            },
            _ => break,
        }
    }
    Some((ty, j))
}

fn expect(toks: &[Tok], j: usize, punct: &str) -> Option<usize> {
    toks.get(j).is_some_and(|t| t.is(punct)).then_some(j + 1)
}

/// `N x T` (of an array or vector type).
fn parse_sized(toks: &[Tok], j: usize, depth: usize) -> Option<(Ty, usize)> {
    if toks.get(j)?.kind != Kind::Number || !toks.get(j + 1)?.ident("x") {
        return None;
    }
    parse_type_at(toks, j + 2, depth + 1)
}

/// `{ T, T, ... }` from its `{`.
fn parse_struct(toks: &[Tok], open: usize, depth: usize) -> Option<(Ty, usize)> {
    let mut fields = Vec::new();
    if toks.get(open + 1)?.is("}") {
        return Some((Ty::Agg(fields), open + 2));
    }
    let mut j = open + 1;
    loop {
        let (field, k) = parse_type_at(toks, j, depth + 1)?;
        fields.push(field);
        match toks.get(k)? {
            t if t.is(",") => j = k + 1,
            t if t.is("}") => return Some((Ty::Agg(fields), k + 1)),
            _ => return None,
        }
    }
}

/// Past the parameter types of a function type, from its `(`.
fn parse_params(toks: &[Tok], open: usize, depth: usize) -> Option<usize> {
    if toks.get(open + 1)?.is(")") {
        return Some(open + 2);
    }
    let mut j = open + 1;
    loop {
        if toks.get(j)?.ident("...") {
            return expect(toks, j + 1, ")");
        }
        let (_, k) = parse_type_at(toks, j, depth + 1)?;
        match toks.get(k)? {
            t if t.is(",") => j = k + 1,
            t if t.is(")") => return Some(k + 1),
            _ => return None,
        }
    }
}

/// The type that ends `toks` exactly (what precedes a function's name: linkage, attributes,
/// calling convention, then the return type).
fn trailing_type(toks: &[Tok]) -> Option<Ty> {
    (0..toks.len()).find_map(|s| parse_type(toks, s).filter(|&(_, end)| end == toks.len()).map(|(ty, _)| ty))
}

/// Idents that begin a constant rather than name an attribute.
fn is_value_keyword(s: &str) -> bool {
    is_constexpr(s)
        || matches!(
            s,
            "null"
                | "undef"
                | "poison"
                | "zeroinitializer"
                | "true"
                | "false"
                | "none"
                | "asm"
                | "blockaddress"
                | "dso_local_equivalent"
                | "no_cfi"
                | "splat"
        )
}

fn is_constexpr(s: &str) -> bool {
    matches!(
        s,
        "getelementptr"
            | "bitcast"
            | "addrspacecast"
            | "inttoptr"
            | "ptrtoint"
            | "trunc"
            | "zext"
            | "sext"
            | "fptrunc"
            | "fpext"
            | "fptoui"
            | "fptosi"
            | "uitofp"
            | "sitofp"
            | "select"
            | "add"
            | "sub"
            | "mul"
            | "shl"
            | "lshr"
            | "ashr"
            | "and"
            | "or"
            | "xor"
            | "icmp"
            | "fcmp"
            | "extractelement"
            | "insertelement"
            | "shufflevector"
            | "extractvalue"
            | "insertvalue"
            | "ptrauth"
    )
}

/// Past the parameter attributes at `k` (`noundef`, `align 8`, `dereferenceable(16)`, ...), to
/// where the value begins.
fn skip_attrs(toks: &[Tok], mut k: usize) -> usize {
    while let Some(t) = toks.get(k) {
        let next = toks.get(k + 1);
        match t.kind {
            Kind::Ident if !is_value_keyword(t.text) => {
                k = if t.text == "align" && next.is_some_and(|n| n.kind == Kind::Number) {
                    k + 2
                } else if next.is_some_and(|n| n.is("(")) {
                    matching(toks, k + 1).map_or(toks.len(), |c| c + 1)
                } else {
                    k + 1
                };
            }
            // String attributes, `"key"` or `"key"="value"`.
            Kind::Str => k += if next.is_some_and(|n| n.is("=")) { 3 } else { 1 },
            _ => break,
        }
    }
    k
}

// ---------------------------------------------------------------------------------------------
// The extraction

/// What a value may be: the contents of a variable, or the address of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Var(VarId),
    Addr(VarId),
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    ty: Ty,
}

#[derive(Clone, Debug)]
struct FnInfo {
    params: Vec<Param>,
    variadic: bool,
    ret: Ty,
    defined: bool,
}

/// An actual argument: whether its type holds pointers, and what it may be.
#[derive(Clone, Debug)]
struct Arg {
    ptr: bool,
    srcs: Vec<Src>,
}

/// A call site's effects, as applied to each function it may call.
#[derive(Clone, Debug)]
struct Site {
    /// The calling function's name component.
    caller: String,
    args: Vec<Arg>,
    /// The variable of the result, where it holds pointers.
    result: Option<VarId>,
    line: usize,
    /// The source line of the call's `!dbg` location.
    source_line: Option<usize>,
}

/// The function being read.
struct FnCtx {
    /// Its name component (`@main` is `main`).
    comp: String,
    name: String,
    /// SSA values defined by `ptrtoint`.
    from_pointers: HashSet<String>,
    /// `inttoptr` operands to check once all definitions are seen: (value, line).
    int_to_ptr: Vec<(String, usize)>,
}

enum Library {
    /// Returns a fresh object.
    Alloc,
    /// A fresh object holding what the object of argument 0 held.
    Realloc,
    /// Stores a fresh object through argument 0.
    PosixMemalign,
    /// Returns (a pointer into) argument k.
    ReturnsArg(usize),
    /// Copies the contents of argument 1 into argument 0 and returns argument 0.
    CopiesContents,
    /// Stores argument 0 (or a pointer into it) through argument 1.
    StoresArg0ThroughArg1,
}

fn library(name: &str) -> Option<Library> {
    Some(match name {
        "malloc"
        | "calloc"
        | "strdup"
        | "strndup"
        | "aligned_alloc"
        | "memalign"
        | "valloc"
        | "pvalloc"
        | "_Znwm"
        | "_Znam"
        | "_Znwj"
        | "_Znaj"
        | "_ZnwmRKSt9nothrow_t"
        | "_ZnamRKSt9nothrow_t"
        | "_ZnwmSt11align_val_t"
        | "_ZnamSt11align_val_t"
        | "_ZnwmSt11align_val_tRKSt9nothrow_t"
        | "_ZnamSt11align_val_tRKSt9nothrow_t" => Library::Alloc,
        "realloc" | "reallocarray" => Library::Realloc,
        "posix_memalign" => Library::PosixMemalign,
        "strcpy" | "strncpy" | "strcat" | "strncat" | "stpcpy" | "memset" | "strchr" | "strrchr" | "strstr"
        | "strpbrk" | "memchr" | "fgets" => Library::ReturnsArg(0),
        "memcpy" | "memmove" => Library::CopiesContents,
        "strtol" | "strtoul" | "strtoll" | "strtoull" | "strtod" | "strtof" | "strtold" => {
            Library::StoresArg0ThroughArg1
        }
        _ => return None,
    })
}

/// Warnings, one per message, counted.
#[derive(Default)]
struct Warnings {
    list: Vec<Warning>,
    index: HashMap<String, usize>,
}

struct Builder<'a> {
    file: &'a str,
    c: Constraints,
    seen: HashSet<Constraint>,
    warnings: Warnings,
    types: HashMap<String, Ty>,
    /// Whether each named type holds pointers (filled in once all are known).
    type_has_ptr: HashMap<String, bool>,
    /// Functions by `@name`, defined and declared.
    functions: HashMap<String, FnInfo>,
    /// Global variables by `@name`, with their initializer (type and value) and line.
    globals: Vec<(String, Vec<Tok<'a>>, usize)>,
    aliases: HashMap<String, String>,
    /// `!dbg` locations: metadata reference (`!12`) to source line.
    locations: HashMap<&'a str, usize>,
    /// Address-taken functions in the order their addresses were first taken.
    taken: Vec<String>,
    taken_set: HashSet<String>,
    indirect: Vec<Site>,
    address_vars: HashMap<VarId, VarId>,
    /// Allocation calls without a line so far, per (allocator, function).
    unnamed_sites: HashMap<(String, String), usize>,
    /// `memcpy` variables so far, per function.
    temps: HashMap<String, usize>,
    /// The line of the statement being read, for errors.
    line: usize,
}

impl<'a> Builder<'a> {
    fn new(file: &'a str) -> Builder<'a> {
        Builder {
            file,
            c: Constraints::new(),
            seen: HashSet::new(),
            warnings: Warnings::default(),
            types: HashMap::new(),
            type_has_ptr: HashMap::new(),
            functions: HashMap::new(),
            globals: Vec::new(),
            aliases: HashMap::new(),
            locations: HashMap::new(),
            taken: Vec::new(),
            taken_set: HashSet::new(),
            indirect: Vec::new(),
            address_vars: HashMap::new(),
            unnamed_sites: HashMap::new(),
            temps: HashMap::new(),
            line: 0,
        }
    }

    fn warn(&mut self, line: usize, message: String) {
        let w = &mut self.warnings;
        if let Some(&i) = w.index.get(&message) {
            w.list[i].count += 1;
        } else {
            w.index.insert(message.clone(), w.list.len());
            w.list.push(Warning { file: self.file.to_string(), line, count: 1, message });
        }
    }

    fn finish(mut self) -> (Constraints, Vec<Warning>) {
        self.warnings.list.sort_by_key(|w| w.line);
        (self.c, self.warnings.list)
    }

    fn var(&mut self, name: &str) -> Parsed<VarId> {
        self.c.var(name).map_err(|e| (self.line, e.to_string()))
    }

    /// A variable for a new object: `base`, or `base#2`, `base#3`, ... if that is taken.
    fn fresh(&mut self, base: &str) -> Parsed<VarId> {
        if self.c.id(base).is_none() {
            return self.var(base);
        }
        let mut k = 2usize;
        loop {
            let name = format!("{base}#{k}");
            if self.c.id(&name).is_none() {
                return self.var(&name);
            }
            k += 1;
        }
    }

    fn add(&mut self, c: Constraint) {
        if matches!(c, Constraint::Copy { dst, src } if dst == src) || !self.seen.insert(c) {
            return;
        }
        let pushed = self.c.push(c);
        debug_assert!(pushed.is_ok());
    }

    /// `dst` includes each of `srcs`.
    fn assign(&mut self, dst: VarId, srcs: &[Src]) {
        for &s in srcs {
            self.add(match s {
                Src::Var(q) => Constraint::Copy { dst, src: q },
                Src::Addr(o) => Constraint::AddressOf { dst, src: o },
            });
        }
    }

    /// `dst` includes what the pointers `ptrs` point to.
    fn load(&mut self, dst: VarId, ptrs: &[Src]) {
        for &p in ptrs {
            self.add(match p {
                Src::Var(q) => Constraint::Load { dst, src: q },
                Src::Addr(o) => Constraint::Copy { dst, src: o },
            });
        }
    }

    /// What the pointers `ptrs` point to includes each of `vals`.
    fn store(&mut self, ptrs: &[Src], vals: &[Src]) -> Parsed<()> {
        for &p in ptrs {
            for &v in vals {
                match (p, v) {
                    (Src::Var(p), Src::Var(q)) => self.add(Constraint::Store { dst: p, src: q }),
                    (Src::Var(p), Src::Addr(o)) => {
                        let a = self.address_var(o)?;
                        self.add(Constraint::Store { dst: p, src: a });
                    }
                    (Src::Addr(o), v) => self.assign(o, &[v]),
                }
            }
        }
        Ok(())
    }

    /// The variable `<&o>` that holds the address of object `o` (a global, or the object of
    /// `posix_memalign`).
    fn address_var(&mut self, o: VarId) -> Parsed<VarId> {
        if let Some(&a) = self.address_vars.get(&o) {
            return Ok(a);
        }
        let name = format!("<&{}>", self.c.name(o));
        let a = self.var(&name)?;
        self.add(Constraint::AddressOf { dst: a, src: o });
        self.address_vars.insert(o, a);
        Ok(a)
    }

    /// `*dst = *src`, through a new variable where `src` is not a constant address.
    fn copy_contents(&mut self, caller: &str, dst: &[Src], src: &[Src]) -> Parsed<()> {
        let mut contents = Vec::new();
        let mut temp = None;
        for &s in src {
            match s {
                Src::Addr(o) => contents.push(Src::Var(o)),
                Src::Var(q) => {
                    let t = match temp {
                        Some(t) => t,
                        None => {
                            let n = self.temps.entry(caller.to_string()).or_insert(0);
                            *n += 1;
                            let n = *n;
                            let t = self.fresh(&format!("{caller}.<memcpy#{n}>"))?;
                            contents.push(Src::Var(t));
                            temp = Some(t);
                            t
                        }
                    };
                    self.add(Constraint::Load { dst: t, src: q });
                }
            }
        }
        self.store(dst, &contents)
    }

    fn has_ptr(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Ptr => true,
            Ty::Other | Ty::Func { .. } => false,
            Ty::Agg(elems) => elems.iter().any(|e| self.has_ptr(e)),
            // A type never defined could hold anything.
            Ty::Named(n) => self.type_has_ptr.get(n).copied().unwrap_or(true),
        }
    }

    /// Whether named type `name` holds pointers, for `type_has_ptr` (by-value nesting cannot
    /// be cyclic in valid IR; a cycle in invalid IR counts as no pointer).
    fn compute_has_ptr(&mut self, name: &str, depth: usize) -> bool {
        if let Some(&known) = self.type_has_ptr.get(name) {
            return known;
        }
        let Some(ty) = self.types.get(name).cloned() else { return true };
        if depth > MAX_DEPTH {
            return true;
        }
        self.type_has_ptr.insert(name.to_string(), false);
        let result = self.ty_has_ptr_computing(&ty, depth);
        self.type_has_ptr.insert(name.to_string(), result);
        result
    }

    fn ty_has_ptr_computing(&mut self, ty: &Ty, depth: usize) -> bool {
        match ty {
            Ty::Ptr => true,
            Ty::Other | Ty::Func { .. } => false,
            Ty::Agg(elems) => elems.iter().any(|e| self.ty_has_ptr_computing(e, depth + 1)),
            Ty::Named(n) => self.compute_has_ptr(n, depth + 1),
        }
    }

    fn resolve_alias(&self, name: String) -> String {
        let mut name = name;
        for _ in 0..64 {
            match self.aliases.get(&name) {
                Some(target) if *target != name => name = target.clone(),
                _ => break,
            }
        }
        name
    }

    /// The object a global token names (none for `@llvm.*`); a function named here has its
    /// address taken.
    fn object(&mut self, t: &Tok) -> Parsed<Option<VarId>> {
        let name = self.resolve_alias(global_name(t));
        if name.starts_with("@llvm.") {
            return Ok(None);
        }
        let id = self.var(&name)?;
        if self.functions.contains_key(&name) && self.taken_set.insert(name.clone()) {
            self.taken.push(name);
        }
        Ok(Some(id))
    }

    /// The variable of SSA value `local` (a token `%x`) in the function `comp`.
    fn reg(&mut self, comp: &str, local: &Tok) -> Parsed<VarId> {
        self.reg_named(comp, &local_name(local))
    }

    fn reg_named(&mut self, comp: &str, local: &str) -> Parsed<VarId> {
        self.var(&format!("{comp}.%{local}"))
    }

    /// The variable of function `@f`'s return value.
    fn ret_var(&mut self, function: &str) -> Parsed<VarId> {
        self.var(&format!("{}.<ret>", &function[1..]))
    }

    /// What a value (no type before it) may be. `comp` is the function it is in (`None` in a
    /// global initializer).
    fn eval_value(&mut self, comp: Option<&str>, toks: &[Tok], depth: usize, out: &mut Vec<Src>) -> Parsed<()> {
        let Some(t) = toks.first() else { return Ok(()) };
        if depth > MAX_DEPTH {
            return Err((t.line, "constants nested too deeply".into()));
        }
        match t.kind {
            Kind::Global => {
                if let Some(o) = self.object(t)? {
                    out.push(Src::Addr(o));
                }
            }
            Kind::Local => {
                if let Some(comp) = comp {
                    out.push(Src::Var(self.reg(comp, t)?));
                }
            }
            Kind::Punct if matches!(t.text, "{" | "[" | "<") => {
                let close = matching(toks, 0).unwrap_or(toks.len());
                for element in split_commas(&toks[1..close]) {
                    self.eval_typed(comp, element, depth + 1, out)?;
                }
            }
            Kind::Ident => match t.text {
                "dso_local_equivalent" | "no_cfi" => self.eval_value(comp, &toks[1..], depth + 1, out)?,
                "splat" => {
                    if let Some(close) = matching(toks, 1) {
                        self.eval_typed(comp, &toks[2..close], depth + 1, out)?;
                    }
                }
                kw if is_constexpr(kw) => {
                    // Flags (`inbounds`, `nuw`, `inrange(...)`, predicates) up to the operands.
                    let mut j = 1;
                    while let Some(u) = toks.get(j) {
                        if u.is("(") {
                            break;
                        }
                        j = if u.ident("inrange") && toks.get(j + 1).is_some_and(|p| p.is("(")) {
                            matching(toks, j + 1).map_or(toks.len(), |c| c + 1)
                        } else {
                            j + 1
                        };
                    }
                    if let Some(close) = matching(toks, j) {
                        for operand in split_commas(&toks[j + 1..close]) {
                            let operand = match operand.iter().position(|u| u.ident("to")) {
                                Some(to) => &operand[..to],
                                None => operand,
                            };
                            self.eval_typed(comp, operand, depth + 1, out)?;
                        }
                    }
                }
                // `null`, `undef`, `blockaddress(...)` (not an object), numbers' kin.
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    /// What a typed value (`ptr %x`, `[2 x ptr] [ptr @a, ptr @b]`) may be.
    fn eval_typed(&mut self, comp: Option<&str>, toks: &[Tok], depth: usize, out: &mut Vec<Src>) -> Parsed<()> {
        match parse_type(toks, 0) {
            Some((_, k)) => self.eval_value(comp, &toks[skip_attrs(toks, k)..], depth, out),
            None => self.eval_value(comp, toks, depth, out),
        }
    }

    /// A typed operand: whether its type holds pointers, and what it may be (evaluated only if
    /// it does). `what` says which operand, for errors.
    fn operand(&mut self, comp: &str, toks: Option<&[Tok]>, opcode: &Tok, what: &str) -> Parsed<(bool, Vec<Src>)> {
        let parsed = toks.and_then(|t| Some((t, parse_type(t, 0)?))).map(|(t, (ty, k))| (ty, &t[skip_attrs(t, k)..]));
        let Some((ty, value)) = parsed.filter(|(_, value)| !value.is_empty()) else {
            return Err((opcode.line, format!("`{}`: expected {what} (a type and a value)", opcode.text)));
        };
        let mut srcs = Vec::new();
        let ptr = self.has_ptr(&ty);
        if ptr {
            self.eval_value(Some(comp), value, 0, &mut srcs)?;
        }
        Ok((ptr, srcs))
    }

    // -----------------------------------------------------------------------------------------
    // Pass 1: what the module declares.

    fn scan(&mut self, module: &[Top<'_, 'a>]) -> Parsed<()> {
        for top in module {
            match top {
                Top::Function { header, .. } => {
                    self.line = header[0].line;
                    let (name, mut info) = self.header(header)?;
                    info.defined = true;
                    self.var(&name)?;
                    self.functions.insert(name, info);
                }
                Top::Statement(st) => self.scan_statement(st)?,
            }
        }
        let names: Vec<String> = self.types.keys().cloned().collect();
        for name in names {
            self.compute_has_ptr(&name, 0);
        }
        Ok(())
    }

    fn scan_statement(&mut self, st: &[Tok<'a>]) -> Parsed<()> {
        let t = st[0];
        self.line = t.line;
        let assigns = st.get(1).is_some_and(|e| e.is("="));
        match t.kind {
            Kind::Ident if t.text == "declare" => {
                let (name, info) = self.header(st)?;
                if !name.starts_with("@llvm.") {
                    self.functions.entry(name).or_insert(info);
                }
            }
            Kind::Ident
                if matches!(
                    t.text,
                    "source_filename" | "target" | "attributes" | "module" | "uselistorder" | "uselistorder_bb"
                ) => {}
            Kind::Comdat | Kind::Meta | Kind::AttrGroup => {
                if t.kind == Kind::Meta && assigns {
                    self.scan_metadata(st);
                }
            }
            Kind::Punct if t.text == "^" => {}
            Kind::Local if assigns && st.get(2).is_some_and(|k| k.ident("type")) => {
                let ty = parse_type(st, 3).map_or(Ty::Other, |(ty, _)| ty);
                self.types.insert(local_name(&t), ty);
            }
            Kind::Global if assigns => self.scan_global(st)?,
            _ => self.warn(t.line, format!("a top-level line starting with `{}` is not understood: skipped", t.text)),
        }
        Ok(())
    }

    /// `!N = !DILocation(line: L, ...)`: the line of `!dbg !N`.
    fn scan_metadata(&mut self, st: &[Tok<'a>]) {
        let Some(at) = st.iter().position(|t| t.kind == Kind::Meta && t.text == "!DILocation") else { return };
        let line = st[at..]
            .windows(2)
            .find(|w| w[0].kind == Kind::Label && w[0].text == "line")
            .and_then(|w| w[1].text.parse::<usize>().ok());
        if let Some(line) = line.filter(|&l| l > 0) {
            self.locations.insert(st[0].text, line);
        }
    }

    fn scan_global(&mut self, st: &[Tok<'a>]) -> Parsed<()> {
        let name = global_name(&st[0]);
        let line = st[0].line;
        let mut depth = 0;
        let mut keyword = None;
        for (j, t) in st.iter().enumerate().skip(2) {
            if depth == 0 && t.kind == Kind::Ident && matches!(t.text, "global" | "constant" | "alias" | "ifunc") {
                keyword = Some(j);
                break;
            }
            depth += bracket(t, true);
        }
        let Some(k) = keyword else {
            self.warn(line, format!("`{name} = ...` is neither a global, an alias nor an ifunc: skipped"));
            return Ok(());
        };
        match st[k].text {
            "alias" => {
                let target = split_commas(&st[k + 1..]).get(1).and_then(|v| v.iter().find(|t| t.kind == Kind::Global));
                if let Some(target) = target {
                    self.aliases.insert(name, global_name(target));
                }
            }
            "ifunc" => {
                let info = FnInfo { params: Vec::new(), variadic: true, ret: Ty::Ptr, defined: false };
                self.functions.insert(name, info);
            }
            _ => {
                if name.starts_with("@llvm.") {
                    return Ok(());
                }
                self.var(&name)?;
                let value = split_commas(&st[k + 1..]).first().map(|v| v.to_vec()).unwrap_or_default();
                self.globals.push((name, value, line));
            }
        }
        Ok(())
    }

    /// A `define` or `declare` header: the function's `@name` and signature.
    fn header(&self, st: &[Tok]) -> Parsed<(String, FnInfo)> {
        let line = st[0].line;
        let at = st
            .windows(2)
            .position(|w| w[0].kind == Kind::Global && w[1].is("("))
            .ok_or_else(|| (line, format!("`{}` without a function name and `(`", st[0].text)))?;
        let name = global_name(&st[at]);
        let ret = trailing_type(&st[1..at])
            .ok_or_else(|| (line, format!("`{}`: expected a return type before `{name}`", st[0].text)))?;
        let close =
            matching(st, at + 1).ok_or_else(|| (line, format!("the parameter list of `{name}` is never closed")))?;
        let mut info = FnInfo { params: Vec::new(), variadic: false, ret, defined: false };
        let mut unnamed = 0;
        for param in split_commas(&st[at + 2..close]) {
            if param.first().is_some_and(|t| t.ident("...")) {
                info.variadic = true;
                continue;
            }
            let (ty, k) = parse_type(param, 0)
                .ok_or_else(|| (line, format!("a parameter of `{name}`: expected a type, found `{}`", show(param))))?;
            // The parameter's name: the last local outside brackets after the type.
            let mut depth = 0;
            let mut local = None;
            for t in &param[k..] {
                if depth == 0 && t.kind == Kind::Local {
                    local = Some(local_name(t));
                }
                depth += bracket(t, true);
            }
            let name = local.unwrap_or_else(|| {
                unnamed += 1;
                (unnamed - 1).to_string()
            });
            info.params.push(Param { name, ty });
        }
        Ok((name, info))
    }

    // -----------------------------------------------------------------------------------------
    // Pass 2: the constraints.

    fn emit(&mut self, module: &[Top<'_, 'a>]) -> Parsed<()> {
        for (name, value, line) in std::mem::take(&mut self.globals) {
            self.line = line;
            let object = self.var(&name)?;
            let mut srcs = Vec::new();
            self.eval_typed(None, &value, 0, &mut srcs)?;
            self.assign(object, &srcs);
        }
        for top in module {
            if let Top::Function { header, body } = top {
                self.function(header, body)?;
            }
        }
        // The address-taken functions each number of arguments may call, found once per number.
        let mut by_arity: HashMap<usize, Vec<String>> = HashMap::new();
        for site in std::mem::take(&mut self.indirect) {
            let arity = site.args.len();
            let targets = by_arity
                .entry(arity)
                .or_insert_with(|| {
                    let takes = |i: &FnInfo| i.params.len() == arity || (i.variadic && i.params.len() <= arity);
                    self.taken.iter().filter(|f| self.functions.get(*f).is_some_and(takes)).cloned().collect()
                })
                .clone();
            if targets.is_empty() {
                self.warn(
                    site.line,
                    format!("an indirect call with {arity} arguments: no address-taken function takes them"),
                );
            }
            for target in targets {
                self.line = site.line;
                self.apply_call(&site, &target)?;
            }
        }
        Ok(())
    }

    fn function(&mut self, header: &[Tok], body: &[&[Tok<'a>]]) -> Parsed<()> {
        self.line = header[0].line;
        let (name, _) = self.header(header)?;
        let mut f = FnCtx { comp: name[1..].to_string(), name, from_pointers: HashSet::new(), int_to_ptr: Vec::new() };
        for st in body {
            // Labels, possibly with an instruction after them on the line.
            let start = st.iter().position(|t| t.kind != Kind::Label).unwrap_or(st.len());
            if start < st.len() {
                self.instruction(&mut f, &st[start..])?;
            }
        }
        for (value, line) in std::mem::take(&mut f.int_to_ptr) {
            if !f.from_pointers.contains(&value) {
                self.warn(
                    line,
                    "`inttoptr` of a value not known to hold a pointer: what it points to is not modelled".into(),
                );
            }
        }
        Ok(())
    }

    fn instruction(&mut self, f: &mut FnCtx, st: &[Tok]) -> Parsed<()> {
        let first = st[0];
        self.line = first.line;
        if first.kind == Kind::Record || first.ident("uselistorder") || first.ident("uselistorder_bb") {
            return Ok(());
        }
        let (result, mut at) = match st {
            [r, eq, ..] if r.kind == Kind::Local && eq.is("=") => (Some(r), 2),
            _ => (None, 0),
        };
        if st.get(at).is_some_and(|t| matches!(t.text, "tail" | "musttail" | "notail")) {
            at += 1;
        }
        let Some(&op) = st.get(at).filter(|t| t.kind == Kind::Ident) else {
            let found = st.get(at).map_or("nothing", |t| t.text);
            self.warn(first.line, format!("`{found}` does not begin an instruction: the line is skipped"));
            return Ok(());
        };
        let rest = &st[at + 1..];
        let groups = split_commas(rest);
        let comp = f.comp.clone();
        let comp = comp.as_str();
        // The result's variable, made only where the result holds pointers.
        let res = |b: &mut Self, ptr: bool| result.filter(|_| ptr).map(|r| b.reg(comp, r)).transpose();
        match op.text {
            "alloca" => {
                if let Some(r) = result {
                    let object = self.fresh(&format!("{comp}.{}", local_name(r)))?;
                    let p = self.reg(comp, r)?;
                    self.add(Constraint::AddressOf { dst: p, src: object });
                }
            }
            "load" => {
                let Some(ty) = groups.first().and_then(|g| first_type(g)) else {
                    return Err((op.line, "`load`: expected the type loaded".into()));
                };
                if self.has_ptr(&ty) {
                    let (_, ptrs) = self.pointer_operand(comp, groups.get(1).copied(), &op)?;
                    if let Some(r) = res(self, true)? {
                        self.load(r, &ptrs);
                    }
                }
            }
            "store" => {
                let value = groups.first().map(|g| skip_words(g, &["atomic", "volatile"]));
                let (ptr, vals) = self.operand(comp, value, &op, "the value stored")?;
                if ptr {
                    let (_, ptrs) = self.pointer_operand(comp, groups.get(1).copied(), &op)?;
                    self.store(&ptrs, &vals)?;
                }
            }
            "getelementptr" => {
                let (_, base) = self.pointer_operand(comp, groups.get(1).copied(), &op)?;
                if let Some(r) = res(self, true)? {
                    self.assign(r, &base);
                }
            }
            "bitcast" | "addrspacecast" | "ptrtoint" | "inttoptr" => {
                let cast = groups.first().copied().unwrap_or_default();
                let to = cast.iter().position(|t| t.ident("to"));
                let target = to.and_then(|to| parse_type(cast, to + 1)).map(|(ty, _)| ty);
                let to = to.unwrap_or(cast.len());
                let (Some((from, k)), Some(target)) = (parse_type(&cast[..to], 0), target) else {
                    return Err((op.line, format!("`{}`: expected `<type> <value> to <type>`", op.text)));
                };
                if !self.has_ptr(&from) && !self.has_ptr(&target) {
                    return Ok(());
                }
                let mut srcs = Vec::new();
                self.eval_value(Some(comp), &cast[k..to], 0, &mut srcs)?;
                if op.text == "inttoptr" {
                    match cast.get(k) {
                        Some(v) if v.kind == Kind::Local => f.int_to_ptr.push((local_name(v), op.line)),
                        _ if srcs.is_empty() => self.warn(
                            op.line,
                            "`inttoptr` of a constant that names no global: what it points to is not modelled".into(),
                        ),
                        _ => {}
                    }
                }
                if let Some(r) = result {
                    if op.text == "ptrtoint" {
                        f.from_pointers.insert(local_name(r));
                    }
                    let r = self.reg(comp, r)?;
                    self.assign(r, &srcs);
                }
            }
            "phi" => {
                let Some((ty, k)) = first_type_at(rest) else {
                    return Err((op.line, "`phi`: expected a type".into()));
                };
                if self.has_ptr(&ty) {
                    let mut srcs = Vec::new();
                    let mut j = k;
                    while j < rest.len() {
                        if rest[j].is("[") {
                            let close = matching(rest, j).unwrap_or(rest.len());
                            if let Some(value) = split_commas(&rest[j + 1..close]).first() {
                                self.eval_value(Some(comp), value, 0, &mut srcs)?;
                            }
                            j = close;
                        }
                        j += 1;
                    }
                    if let Some(r) = res(self, true)? {
                        self.assign(r, &srcs);
                    }
                }
            }
            "select" => {
                let (ptr, mut srcs) = self.operand(comp, groups.get(1).copied(), &op, "the first choice")?;
                let (_, other) = self.operand(comp, groups.get(2).copied(), &op, "the second choice")?;
                srcs.extend(other);
                if let Some(r) = res(self, ptr)? {
                    self.assign(r, &srcs);
                }
            }
            "freeze" | "extractvalue" | "extractelement" => {
                let (ptr, srcs) = self.operand(comp, groups.first().copied(), &op, "an operand")?;
                if let Some(r) = res(self, ptr)? {
                    self.assign(r, &srcs);
                }
            }
            "insertvalue" | "insertelement" | "shufflevector" => {
                let (ptr, mut srcs) = self.operand(comp, groups.first().copied(), &op, "the first operand")?;
                let (ptr2, other) = self.operand(comp, groups.get(1).copied(), &op, "the second operand")?;
                srcs.extend(other);
                if let Some(r) = res(self, ptr || ptr2)? {
                    self.assign(r, &srcs);
                }
            }
            "ret" => {
                if !rest.first().is_some_and(|t| t.ident("void")) {
                    let (ptr, srcs) = self.operand(comp, groups.first().copied(), &op, "the value returned")?;
                    if ptr {
                        let r = self.ret_var(&f.name)?;
                        self.assign(r, &srcs);
                    }
                }
            }
            "atomicrmw" => {
                let target = groups.first().map(|g| skip_words(g, &["volatile"]));
                let xchg = target.is_some_and(|g| g.first().is_some_and(|t| t.ident("xchg")));
                let (ptr, vals) = self.operand(comp, groups.get(1).copied(), &op, "the value")?;
                if xchg && ptr {
                    let (_, ptrs) = self.pointer_operand(comp, target.map(|g| &g[1..]), &op)?;
                    self.store(&ptrs, &vals)?;
                    if let Some(r) = res(self, true)? {
                        self.load(r, &ptrs);
                    }
                }
            }
            "cmpxchg" => {
                let target = groups.first().map(|g| skip_words(g, &["weak", "volatile"]));
                let (ptr, vals) = self.operand(comp, groups.get(2).copied(), &op, "the new value")?;
                if ptr {
                    let (_, ptrs) = self.pointer_operand(comp, target, &op)?;
                    self.store(&ptrs, &vals)?;
                    if let Some(r) = res(self, true)? {
                        self.load(r, &ptrs);
                    }
                }
            }
            "call" | "invoke" | "callbr" => self.call(f, st, at, result)?,
            "va_arg" => {
                if groups.get(1).and_then(|g| parse_type(g, 0)).is_some_and(|(ty, _)| self.has_ptr(&ty)) {
                    self.warn(op.line, "`va_arg` of a pointer: variadic arguments are not modelled".into());
                }
            }
            "br" | "switch" | "indirectbr" | "unreachable" | "resume" | "fence" | "icmp" | "fcmp" | "add" | "fadd"
            | "sub" | "fsub" | "mul" | "fmul" | "udiv" | "sdiv" | "fdiv" | "urem" | "srem" | "frem" | "shl"
            | "lshr" | "ashr" | "and" | "or" | "xor" | "fneg" | "trunc" | "zext" | "sext" | "fptrunc" | "fpext"
            | "fptoui" | "fptosi" | "uitofp" | "sitofp" => {}
            other => self.warn(op.line, format!("opcode `{other}` is not modelled")),
        }
        Ok(())
    }

    /// The pointer operand of a memory instruction (`ptr %p`, `i32* %p`).
    fn pointer_operand(&mut self, comp: &str, toks: Option<&[Tok]>, opcode: &Tok) -> Parsed<(bool, Vec<Src>)> {
        self.operand(comp, toks, opcode, "a pointer operand after `,`")
    }

    fn call(&mut self, f: &FnCtx, st: &[Tok], at: usize, result: Option<&Tok>) -> Parsed<()> {
        let op = st[at];
        let rest = &st[at + 1..];
        // The argument list: the first `(` outside brackets right after a callee (a name, the
        // `)` of a constant expression, or an inline assembly string) with a return type before
        // it. (In `call %T (ptr) %fp(...)` the named type `%T` is followed by a `(` too.)
        let mut depth = 0;
        let mut found = None;
        let mut candidate = None;
        for (j, t) in rest.iter().enumerate() {
            if depth == 0 && t.is("(") && j > 0 {
                let prev = &rest[j - 1];
                if matches!(prev.kind, Kind::Global | Kind::Local | Kind::Str) || prev.is(")") {
                    let callee_at = callee_start(rest, j);
                    candidate = Some(callee_at);
                    if let Some(ret) = trailing_type(&rest[..callee_at]) {
                        found = Some((j, callee_at, ret));
                        break;
                    }
                }
            }
            depth = (depth + bracket(t, true)).max(0);
        }
        let Some((open, callee_at, ret)) = found else {
            return Err(match candidate {
                Some(at) => {
                    (op.line, format!("`{}`: expected a return type before the callee `{}`", op.text, rest[at].text))
                }
                None => (op.line, format!("`{}`: expected a callee and its arguments `(...)`", op.text)),
            });
        };
        let close = matching(rest, open)
            .ok_or_else(|| (op.line, format!("`{}`: the argument list is never closed", op.text)))?;
        let ret = match ret {
            Ty::Func { ret } => *ret,
            other => other,
        };
        let callee = &rest[callee_at..open];
        let source_line = self.source_line(st);
        let comp = f.comp.clone();

        // Debug intrinsics: nothing to read.
        if callee[0].kind == Kind::Global && global_name(&callee[0]).starts_with("@llvm.dbg.") {
            return Ok(());
        }
        let mut args = Vec::new();
        for arg in split_commas(&rest[open + 1..close]) {
            let (ptr, srcs) = match parse_type(arg, 0) {
                Some((ty, k)) if self.has_ptr(&ty) => {
                    let mut srcs = Vec::new();
                    self.eval_value(Some(&comp), &arg[skip_attrs(arg, k)..], 0, &mut srcs)?;
                    (true, srcs)
                }
                _ => (false, Vec::new()),
            };
            args.push(Arg { ptr, srcs });
        }
        let result = match result {
            Some(r) if self.has_ptr(&ret) => Some(self.reg(&comp, r)?),
            _ => None,
        };
        let site = Site { caller: comp, args, result, line: op.line, source_line };

        let globals: Vec<&Tok> = callee.iter().filter(|t| t.kind == Kind::Global).collect();
        match (callee[0].kind, globals.as_slice()) {
            (Kind::Local, _) => {
                // Resolved once every address-taken function is known.
                self.indirect.push(site);
            }
            (_, [g]) => {
                let name = self.resolve_alias(global_name(g));
                if name.starts_with("@llvm.") {
                    self.intrinsic(f, &name, &site)?;
                } else {
                    self.apply_call(&site, &name)?;
                }
            }
            _ if callee.iter().any(|t| t.ident("asm")) => {
                if site.result.is_some() || site.args.iter().any(|a| a.ptr) {
                    self.warn(op.line, "inline assembly is not modelled".into());
                }
            }
            _ => self.warn(op.line, "a call through a constant that names no single function: not modelled".into()),
        }
        Ok(())
    }

    /// The source line of a statement's `!dbg` location.
    fn source_line(&self, st: &[Tok]) -> Option<usize> {
        st.windows(2)
            .find(|w| w[0].kind == Kind::Meta && w[0].text == "!dbg" && w[1].kind == Kind::Meta)
            .and_then(|w| self.locations.get(w[1].text).copied())
    }

    /// The effects of calling `target` (an `@name`, not an intrinsic) at `site`.
    fn apply_call(&mut self, site: &Site, target: &str) -> Parsed<()> {
        if let Some(info) = self.functions.get(target).filter(|i| i.defined).cloned() {
            let comp = &target[1..];
            for (arg, param) in site.args.iter().zip(&info.params) {
                if arg.ptr && self.has_ptr(&param.ty) && !arg.srcs.is_empty() {
                    let p = self.reg_named(comp, &param.name)?;
                    self.assign(p, &arg.srcs);
                }
            }
            if let (Some(r), true) = (site.result, self.has_ptr(&info.ret)) {
                let ret = self.ret_var(target)?;
                self.add(Constraint::Copy { dst: r, src: ret });
            }
            return Ok(());
        }
        let bare = &target[1..];
        let arg = |k: usize| site.args.get(k).map_or(&[][..], |a| a.srcs.as_slice());
        match library(bare) {
            Some(Library::Alloc | Library::Realloc | Library::PosixMemalign) => {
                let base = match site.source_line {
                    Some(line) => format!("{bare}@{}:{line}", site.caller),
                    None => {
                        let n = self.unnamed_sites.entry((bare.to_string(), site.caller.clone())).or_insert(0);
                        *n += 1;
                        format!("{bare}@{}#{n}", site.caller)
                    }
                };
                let object = self.fresh(&base)?;
                match library(bare) {
                    Some(Library::PosixMemalign) => self.store(arg(0), &[Src::Addr(object)])?,
                    kind => {
                        if let Some(r) = site.result {
                            self.add(Constraint::AddressOf { dst: r, src: object });
                        }
                        if matches!(kind, Some(Library::Realloc)) {
                            let old = arg(0).to_vec();
                            self.load(object, &old);
                        }
                    }
                }
            }
            Some(Library::ReturnsArg(k)) => {
                if let Some(r) = site.result {
                    self.assign(r, arg(k));
                }
            }
            Some(Library::CopiesContents) => {
                let (dst, src) = (arg(0).to_vec(), arg(1).to_vec());
                self.copy_contents(&site.caller, &dst, &src)?;
                if let Some(r) = site.result {
                    self.assign(r, &dst);
                }
            }
            Some(Library::StoresArg0ThroughArg1) => {
                let (string, end) = (arg(0).to_vec(), arg(1).to_vec());
                self.store(&end, &string)?;
            }
            None => {
                if site.result.is_some() {
                    self.warn(
                        site.line,
                        format!("external function `{target}` returns a pointer: its result points to nothing here"),
                    );
                }
                let callbacks: Vec<VarId> = site
                    .args
                    .iter()
                    .flat_map(|a| &a.srcs)
                    .filter_map(|s| match *s {
                        Src::Addr(o) if self.functions.contains_key(self.c.name(o)) => Some(o),
                        _ => None,
                    })
                    .collect();
                for o in callbacks {
                    let message = format!(
                        "function `{}` is passed to external function `{target}`, whose calls of it are not modelled",
                        self.c.name(o)
                    );
                    self.warn(site.line, message);
                }
            }
        }
        Ok(())
    }

    fn intrinsic(&mut self, f: &FnCtx, name: &str, site: &Site) -> Parsed<()> {
        let base = &name["@llvm.".len()..];
        let arg = |k: usize| site.args.get(k).map_or(&[][..], |a| a.srcs.as_slice()).to_vec();
        if base.starts_with("memcpy") || base.starts_with("memmove") || base.starts_with("va_copy") {
            let (dst, src) = (arg(0), arg(1));
            self.copy_contents(&f.comp, &dst, &src)?;
        } else if ["ptrmask", "threadlocal.address", "launder.invariant.group", "strip.invariant.group", "ssa.copy"]
            .iter()
            .any(|p| base.starts_with(p))
            || base.starts_with("preserve.")
        {
            if let Some(r) = site.result {
                self.assign(r, &arg(0));
            }
        } else if base.starts_with("va_start") {
            self.warn(site.line, format!("variadic arguments of `{}` are not modelled", f.name));
        } else if site.result.is_some() && !base.starts_with("stacksave") {
            self.warn(site.line, format!("intrinsic `{name}` returns a pointer: not modelled"));
        }
        Ok(())
    }
}

/// Where the callee before the argument list at `open` begins: the name, the keyword of a
/// constant expression, or the `asm` of inline assembly.
fn callee_start(rest: &[Tok], open: usize) -> usize {
    let prev = &rest[open - 1];
    if prev.kind == Kind::Str {
        return rest[..open].iter().rposition(|t| t.ident("asm")).unwrap_or(open - 1);
    }
    if !prev.is(")") {
        return open - 1;
    }
    let mut depth = 0;
    for j in (0..open).rev() {
        depth += bracket(&rest[j], true);
        if depth == 0 {
            // Back over the flags (`inbounds`) to the keyword (`getelementptr`).
            let mut start = j.saturating_sub(1);
            while start > 0 && rest[start].kind == Kind::Ident && !is_constexpr(rest[start].text) {
                start -= 1;
            }
            return start;
        }
    }
    open - 1
}

/// The type at the start of `toks`, past leading flags (`atomic`, `volatile`, fast-math flags).
fn first_type(toks: &[Tok]) -> Option<Ty> {
    first_type_at(toks).map(|(ty, _)| ty)
}

fn first_type_at(toks: &[Tok]) -> Option<(Ty, usize)> {
    (0..toks.len()).take_while(|&s| s == 0 || toks[s - 1].kind == Kind::Ident).find_map(|s| parse_type(toks, s))
}

/// `toks` without the leading words in `words`.
fn skip_words<'t, 'a>(toks: &'t [Tok<'a>], words: &[&str]) -> &'t [Tok<'a>] {
    let skip = toks.iter().take_while(|t| t.kind == Kind::Ident && words.contains(&t.text)).count();
    &toks[skip..]
}

/// Tokens as errors quote them.
fn show(toks: &[Tok]) -> String {
    let text: Vec<&str> = toks.iter().map(|t| t.text).collect();
    let text = text.join(" ");
    if text.chars().count() > 60 { format!("{}...", text.chars().take(60).collect::<String>()) } else { text }
}
