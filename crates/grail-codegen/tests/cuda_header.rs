//! `grail_cuda.h`: NVRTC compiles it with a kernel that calls every helper, for sm_90; it keeps
//! grail_cpu.h's names (the same calls compile against the CPU header with the C compiler) and
//! the CPU context's fields, in order; it includes no C library header.
//!
//! The NVRTC test needs the NVRTC library, not a GPU: without it the test says it was skipped and
//! passes, unless GRAIL_REQUIRE_NVRTC=1 (as in CI).

use std::io::Write;
use std::process::{Command, Stdio};

use grail_codegen::c::CPU_HEADER;
use grail_codegen::cuda::CUDA_HEADER;
use grail_runtime::GpuError;
use grail_runtime::gpu;

/// (suffix, C type, operations besides cas) of every type the atomics take.
const ATOMIC_TYPES: &[(&str, &str, &[&str])] = &[
    ("u32", "uint32_t", &["min", "max", "add", "sub", "and", "or"]),
    ("u64", "uint64_t", &["min", "max", "add", "sub", "and", "or"]),
    ("i32", "int32_t", &["min", "max", "add", "sub", "and", "or"]),
    ("i64", "int64_t", &["min", "max", "add", "sub", "and", "or"]),
    ("f32", "float", &["min", "max", "add", "sub"]),
    ("f64", "double", &["min", "max", "add", "sub"]),
    ("bool", "bool", &["min", "max", "and", "or"]),
];

/// Parameters `uint32_t *u32s, ...` for the arrays the atomics work on.
fn array_params() -> String {
    ATOMIC_TYPES.iter().map(|(suffix, ty, _)| format!("{ty} *{suffix}s")).collect::<Vec<_>>().join(", ")
}

/// Calls of every helper both headers have, with the same arguments: every
/// `grail_atomic_<op>_<type>` on `<type>s[i]`, locks, claims, union-find and collections through
/// `const grail_ctx *c`. Each adds to `changed`.
fn shared_calls() -> String {
    let mut out = atomic_calls();
    out.push_str(
        "    uint32_t u = (uint32_t)(i % c->num_nodes);
    uint32_t *word = grail_lock_word(c, -1, 0, u);
    if (grail_trylock(word)) {
        changed += 1;
        grail_unlock(word);
    }
    uint32_t elements[3] = {u, (u + 1u) % (uint32_t)c->num_nodes, u};
    if (grail_lock_all(c, -1, 0, elements, 3)) {
        changed += 1;
        grail_unlock_all(c, -1, 0, elements, 3);
    }
    if (grail_lock_all(c, 0, 4096, elements, 3)) grail_unlock_all(c, 0, 4096, elements, 3);
    changed += grail_claim(c, -1, 0, u);
    changed += grail_claim(c, 0, 8192, u);
    changed += grail_union(c, 0, u, 0u);
    changed += grail_find(c, 0, u);
    uint64_t e;
    if (grail_coll_reserve(&c->colls[0], 12288, 4096, &e)) *(uint32_t *)grail_elem(&c->colls[0], 0, 4, e) = u;
    changed += grail_coll_len(&c->colls[0]) + c->colls[0].failed;
",
    );
    out
}

/// One call of every `grail_atomic_<op>_<type>`, each adding whether it changed to `changed`.
fn atomic_calls() -> String {
    let mut out = String::new();
    for (suffix, ty, ops) in ATOMIC_TYPES {
        let one = if *ty == "bool" { "true".to_string() } else { format!("({ty})1") };
        for op in *ops {
            out.push_str(&format!("    changed += grail_atomic_{op}_{suffix}(&{suffix}s[i], {one});\n"));
        }
        out.push_str(&format!("    changed += grail_atomic_cas_{suffix}(&{suffix}s[i], {one}, {one});\n"));
    }
    out
}

/// A kernel that uses every helper of the header and every macro generated code relies on.
fn every_helper_kernel() -> String {
    format!(
        "{CUDA_HEADER}
extern \"C\" __global__ void grail_every_helper(const grail_ctx ctx, {params}, uint64_t *restrict out) {{
    const grail_ctx *c = &ctx;
    uint64_t i = grail_thread_index();
    uint64_t changed = 0;
{shared}
    if (i == 0) grail_coll_free(&c->colls[1]);
    changed += grail_push(&c->pushes, u);
    changed += grail_push(&c->retries, u);
    changed += grail_load_u32(&c->locks[u]);
    changed += grail_thread_count() + c->item_count + c->retrying + c->invocation;
    changed += c->out_offsets[u] + c->out_targets[0] + c->in_offsets[u] + c->in_sources[0];
    changed += c->edge_sources[0] + c->in_edge_ids[0] + (uint64_t)c->params[0].i + c->items[0];
    changed += ((uint32_t *)c->props[0])[u];
    c->acc->f += ((double)INFINITY > 0.0) + (NAN != NAN) + ((float)-INFINITY < 0.0f);
    changed += UINT64_C(1) + (uint64_t)INT64_C(2) + (uint64_t)INT32_MAX + UINT32_MAX + (UINT64_MAX >> 63);
    changed += (uint64_t)(INT64_MIN < 0) + (uint64_t)(INT32_MIN < 0) + UINT8_MAX + INT8_MAX;
    int8_t a8 = 1; uint8_t b8 = 2; int16_t a16 = 3; uint16_t b16 = 4; uintptr_t p = 5;
    changed += (uint64_t)(a8 + b8 + a16 + b16) + p + (c->sets != NULL);
    out[i] = changed;
}}
",
        params = array_params(),
        shared = shared_calls()
    )
}

#[test]
fn nvrtc_compiles_every_helper_for_sm_90() {
    if !gpu::nvrtc_or_skip("cuda_header") {
        return;
    }
    let source = every_helper_kernel();
    let module = match gpu::compile(&source, "every_helper.cu", "sm_90".parse().unwrap()) {
        Ok(module) => module,
        Err(e) => panic!("{e}"),
    };
    assert!(module.image.starts_with(b"\x7fELF"));
    assert_eq!(module.log, "", "the header compiles without warnings:\n{}", module.log);
    // Without -default-device too: the header marks its own device functions.
    let mut options = gpu::CompileOptions::new("compute_90".parse().unwrap());
    options.default_device = false;
    let ptx = gpu::compile_with(&source, "every_helper.cu", &options).unwrap_or_else(|e| panic!("{e}"));
    let ptx = ptx.ptx().unwrap();
    assert!(ptx.contains(".entry grail_every_helper("));
    for atomic in ["atom.global.min.u32", "atom.global.or.b32", "atom.global.add.f32", "atom.global.add.f64"] {
        assert!(ptx.contains(atomic), "the helpers use the hardware's {atomic}");
    }
}

#[test]
fn nvrtc_rejects_a_helper_called_with_the_wrong_type() {
    if !gpu::nvrtc_or_skip("cuda_header") {
        return;
    }
    // The header's names are typed: a u32 helper on a float pointer is an error, not a silent cast.
    let source =
        format!("{CUDA_HEADER}\nextern \"C\" __global__ void k(float *p) {{\n    grail_atomic_min_u32(p, 1u);\n}}\n");
    match gpu::compile(&source, "wrong.cu", "sm_90".parse().unwrap()) {
        Err(GpuError::CompileFailed { report, .. }) => {
            assert!(report.contains("grail_atomic_min_u32(p, 1u);"), "{report}")
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

/// The C compiler the CPU backend uses: `$CC`, else `cc`.
fn c_compiler() -> String {
    std::env::var("CC").ok().filter(|cc| !cc.is_empty()).unwrap_or_else(|| "cc".to_string())
}

#[test]
fn the_helpers_are_called_as_the_cpu_headers_are() {
    // The same calls, against grail_cpu.h, through the C compiler the CPU backend needs.
    let source = format!(
        "{CPU_HEADER}\nuint64_t every_helper(const grail_ctx *c, {params}, uint64_t i) {{\n    uint64_t changed = 0;\n{shared}    return changed;\n}}\n",
        params = array_params(),
        shared = shared_calls()
    );
    let cc = c_compiler();
    let mut child = Command::new(&cc)
        .args(["-std=c11", "-fsyntax-only", "-Werror=implicit-function-declaration", "-x", "c", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("the CPU backend's C compiler `{cc}` cannot run: {e}"));
    child.stdin.take().unwrap().write_all(source.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{cc} rejected the calls:\n{}", String::from_utf8_lossy(&output.stderr));
}

/// The field names of `typedef struct NAME { ... } NAME;` in a header, in order.
fn struct_fields(header: &str, name: &str) -> Vec<String> {
    let start = header.find(&format!("typedef struct {name} {{")).unwrap_or_else(|| panic!("no struct {name}"));
    let body = &header[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find(&format!("}} {name};")).unwrap()];
    let mut fields = Vec::new();
    let mut in_comment = false;
    for line in body.lines() {
        let mut line = line.trim();
        if in_comment {
            match line.find("*/") {
                Some(end) => {
                    in_comment = false;
                    line = line[end + 2..].trim();
                }
                None => continue,
            }
        }
        if line.starts_with("/*") {
            in_comment = !line.contains("*/");
            continue;
        }
        if let Some(declaration) = line.strip_suffix(';') {
            let name = declaration.rsplit([' ', '*']).next().unwrap();
            fields.push(name.to_string());
        }
    }
    fields
}

#[test]
fn the_device_context_is_the_cpu_context_and_the_worklists() {
    let cuda = struct_fields(CUDA_HEADER, "grail_ctx");
    let mut cpu = struct_fields(CPU_HEADER, "grail_ctx");
    cpu.extend(
        [
            "pushes",
            "retries",
            "acc",
            "items_cap",
            "items_spill",
            "checks",
            "ghost_flags",
            "ghost_list",
            "ghost_count",
            "active",
        ]
        .map(String::from),
    );
    assert_eq!(
        cuda, cpu,
        "grail_cpu.h's grail_ctx, then the device worklists, the reduction value, the spilled \
         items of outlined regions, checked mode's record, the ghosts a part's device loop \
         meets and adaptive parallelism's active threads: a field added to one target's context \
         goes into the other's too (and into grail-runtime's gpu/ffi.rs mirror)"
    );
    assert_eq!(struct_fields(CUDA_HEADER, "grail_coll"), struct_fields(CPU_HEADER, "grail_coll"));
    assert_eq!(struct_fields(CUDA_HEADER, "grail_wl"), ["items", "len", "cap", "overflow", "spill"]);
}

#[test]
fn the_header_includes_nothing_and_defines_the_fixed_width_types() {
    assert!(!CUDA_HEADER.contains("#include"), "NVRTC has no C library headers");
    for ty in ["int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "uintptr_t"] {
        assert!(CUDA_HEADER.contains(&format!(" {ty};\n")), "typedef of {ty}");
    }
    // The push protocol is written down where the printer's authors will look.
    for words in ["*overflow = 0", "grows `items`", "grail_wl_unspill", "never loses an item"] {
        assert!(CUDA_HEADER.contains(words), "the header documents {words:?}");
    }
}
