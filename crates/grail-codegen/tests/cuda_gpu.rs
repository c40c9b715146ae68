//! Generated CUDA run on a GPU through the runtime's interface: the size kernel, a phase's
//! grid-stride loop with its arguments and pushes, and every reduction's warp fold and atomic,
//! with grids smaller and larger than the items.
//!
//! Needs a GPU and NVRTC; without them each test says it was skipped and passes.

use std::io::Write;

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use grail_codegen::emit_cuda;
use grail_ir::samples::bfs;
use grail_ir::*;
use grail_runtime::gpu::{self, Device, GpuCtx, GpuModule, GpuWorklist};

mod common;
use common::reduction_module;

/// Device 0 with NVRTC, or None (said on stderr).
fn device(test: &str) -> Option<Device> {
    let found = gpu::nvrtc_info().map_err(|e| e.to_string()).and_then(|_| match gpu::device_count() {
        Ok(0) => Err("no GPU".to_string()),
        Ok(_) => Device::open(0).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    });
    match found {
        Ok(device) => Some(device),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{test}: skipped, no GPU: {e}");
            None
        }
    }
}

fn load(device: &Device, module: &Module) -> GpuModule {
    let source = emit_cuda(module).unwrap();
    let compiled =
        gpu::compile(&source, &format!("{}.cu", module.name), device.arch()).unwrap_or_else(|e| panic!("{e}"));
    device.load(&compiled).unwrap_or_else(|e| panic!("{e}"))
}

/// Nodes 0..N; node u has 2 out-edges when u is a multiple of 3, else 1, to the next nodes.
const N: u64 = 90;

fn degree(u: u64) -> u64 {
    1 + u64::from(u % 3 == 0)
}

fn csr() -> (Vec<u64>, Vec<u32>) {
    let mut offsets = vec![0u64];
    let mut targets = Vec::new();
    for u in 0..N {
        for j in 0..degree(u) {
            targets.push(((u + j + 1) % N) as u32);
        }
        offsets.push(targets.len() as u64);
    }
    (offsets, targets)
}

/// The launch shapes: fewer threads than items (each thread loops), and more (some do nothing).
const SHAPES: [(u32, u32); 3] = [(1, 32), (2, 64), (4, 128)];

fn ptr<T>(slice: &CudaSlice<T>, stream: &cudarc::driver::CudaStream) -> u64 {
    let (p, _sync) = slice.device_ptr(stream);
    p
}

/// The `grail_value` bits the runtime starts a reduction at, and the bits it must end with
/// (compared in the result type's width).
fn identity_and_expected(op: ReduceOp, ty: Type) -> (u64, u64) {
    let values: Vec<u64> = (0..N).map(degree).collect();
    let float = matches!(ty, Type::Scalar(Scalar::F32 | Scalar::F64));
    if ty == Type::BOOL {
        let any = values.iter().any(|&d| d > 1);
        let all = values.iter().all(|&d| d > 1);
        return match op {
            ReduceOp::Any => (0, any as u64),
            _ => (1, all as u64),
        };
    }
    if float {
        let vals = values.iter().map(|&d| d as f64);
        let (identity, result) = match op {
            ReduceOp::Sum => (0.0, vals.sum::<f64>()),
            ReduceOp::Product => (1.0, vals.product::<f64>()),
            ReduceOp::Min => (f64::INFINITY, vals.fold(f64::INFINITY, f64::min)),
            _ => (f64::NEG_INFINITY, vals.fold(f64::NEG_INFINITY, f64::max)),
        };
        return (identity.to_bits(), result.to_bits());
    }
    let signed = matches!(ty, Type::Scalar(Scalar::I32 | Scalar::I64));
    let narrow = matches!(ty, Type::Scalar(Scalar::I32 | Scalar::U32) | Type::Node);
    let identity = match (op, signed, narrow) {
        (ReduceOp::Sum, ..) => 0u64,
        (ReduceOp::Product, ..) => 1,
        (ReduceOp::Min, true, true) => i32::MAX as u64,
        (ReduceOp::Min, true, false) => i64::MAX as u64,
        (ReduceOp::Min, false, true) => u32::MAX as u64,
        (ReduceOp::Min, false, false) => u64::MAX,
        (_, true, true) => i32::MIN as i64 as u64,
        (_, true, false) => i64::MIN as u64,
        (_, false, _) => 0,
    };
    let result = match op {
        ReduceOp::Sum => values.iter().fold(0u64, |a, &v| a.wrapping_add(v)),
        ReduceOp::Product => values.iter().fold(1u64, |a, &v| a.wrapping_mul(v)),
        ReduceOp::Min => *values.iter().min().unwrap(),
        _ => *values.iter().max().unwrap(),
    };
    (identity, result)
}

#[test]
fn every_reduction_folds_the_grid_into_the_result() {
    let Some(device) = device("every_reduction_folds_the_grid_into_the_result") else { return };
    let stream = device.context().default_stream();
    let (offsets, targets) = csr();
    let offsets = stream.clone_htod(&offsets).unwrap();
    let targets = stream.clone_htod(&targets).unwrap();
    let f64_ = Type::Scalar(Scalar::F64);
    let (i32_, i64_, u64_) = (Type::Scalar(Scalar::I32), Type::Scalar(Scalar::I64), Type::Scalar(Scalar::U64));
    let mut cases = Vec::new();
    for ty in [Type::Scalar(Scalar::F32), f64_, i32_, i64_, Type::U32, u64_, Type::Node] {
        for op in [ReduceOp::Sum, ReduceOp::Product, ReduceOp::Min, ReduceOp::Max] {
            cases.push((op, ty));
        }
    }
    cases.push((ReduceOp::Any, Type::BOOL));
    cases.push((ReduceOp::All, Type::BOOL));
    for (op, ty) in cases {
        let module = reduction_module(op, ty);
        let loaded = load(&device, &module);
        let kernel = loaded.function("grail_k0_0").unwrap();
        let (identity, expected) = identity_and_expected(op, ty);
        for (blocks, threads) in SHAPES {
            let acc = stream.clone_htod(&[identity]).unwrap();
            let ctx = GpuCtx {
                num_nodes: N,
                graph_nodes: N,
                node_slots: N,
                num_edges: 0,
                out_offsets: ptr(&offsets, &stream),
                out_targets: ptr(&targets, &stream),
                acc: ptr(&acc, &stream),
                ..GpuCtx::default()
            };
            let (args, size) = (0u64, N);
            let mut launch = stream.launch_builder(&kernel);
            launch.arg(&ctx).arg(&args).arg(&size);
            let config = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
            // SAFETY: (grail_ctx, const grail_value *, uint64_t), and the kernel reads only the
            // CSR and the accumulator, which are live.
            unsafe { launch.launch(config) }.unwrap();
            let got = stream.clone_dtoh(&acc).unwrap()[0];
            let narrow = matches!(ty, Type::Scalar(Scalar::I32 | Scalar::U32) | Type::Node);
            let mask = if narrow { u32::MAX as u64 } else { u64::MAX };
            assert_eq!(got & mask, expected & mask, "{} over {N} items with {blocks} x {threads} threads", module.name);
        }
    }
}

/// One BFS step from node 0: the size kernel counts the worklist, the phase reads its argument,
/// sets the levels of 0's neighbours and pushes them.
#[test]
fn a_bfs_step_sizes_sets_levels_and_pushes() {
    let Some(device) = device("a_bfs_step_sizes_sets_levels_and_pushes") else { return };
    let stream = device.context().default_stream();
    let module = bfs();
    let loaded = load(&device, &module);
    let (offsets, targets) = csr();
    let offsets = stream.clone_htod(&offsets).unwrap();
    let targets = stream.clone_htod(&targets).unwrap();
    let mut levels = vec![u32::MAX; N as usize];
    levels[0] = 0;
    let levels = stream.clone_htod(&levels).unwrap();
    let props = stream.clone_htod(&[ptr(&levels, &stream)]).unwrap();
    let items = stream.clone_htod(&[0u32]).unwrap();
    let args = stream.clone_htod(&[1u64]).unwrap(); // next = 1
    let pushed = stream.alloc_zeros::<u32>(N as usize).unwrap();
    let len = stream.alloc_zeros::<u64>(1).unwrap();
    let overflow = stream.alloc_zeros::<u32>(1).unwrap();
    let spill = stream.alloc_zeros::<u64>(gpu::ffi::GRAIL_SPILL_SEGS).unwrap();
    let size = stream.alloc_zeros::<u64>(1).unwrap();
    let ctx = GpuCtx {
        num_nodes: N,
        graph_nodes: N,
        node_slots: N,
        out_offsets: ptr(&offsets, &stream),
        out_targets: ptr(&targets, &stream),
        props: ptr(&props, &stream),
        items: ptr(&items, &stream),
        item_count: 1,
        pushes: GpuWorklist {
            items: ptr(&pushed, &stream),
            len: ptr(&len, &stream),
            cap: N,
            overflow: ptr(&overflow, &stream),
            spill: ptr(&spill, &stream),
        },
        ..GpuCtx::default()
    };
    let args = ptr(&args, &stream);
    let config = LaunchConfig { grid_dim: (2, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
    let size_kernel = loaded.function("grail_k0_0_size").unwrap();
    let mut launch = stream.launch_builder(&size_kernel);
    let size_ptr = ptr(&size, &stream);
    launch.arg(&ctx).arg(&args).arg(&size_ptr);
    // SAFETY: (grail_ctx, const grail_value *, uint64_t *), all live.
    unsafe { launch.launch(config) }.unwrap();
    let count = stream.clone_dtoh(&size).unwrap()[0];
    assert_eq!(count, 1);
    let kernel = loaded.function("grail_k0_0").unwrap();
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&ctx).arg(&args).arg(&count);
    // SAFETY: (grail_ctx, const grail_value *, uint64_t), all live.
    unsafe { launch.launch(config) }.unwrap();
    let levels = stream.clone_dtoh(&levels).unwrap();
    assert_eq!(&levels[..4], &[0, 1, 1, u32::MAX]);
    assert_eq!(stream.clone_dtoh(&len).unwrap()[0], 2);
    assert_eq!(stream.clone_dtoh(&overflow).unwrap()[0], 0);
    let mut pushed = stream.clone_dtoh(&pushed).unwrap()[..2].to_vec();
    pushed.sort();
    assert_eq!(pushed, [1, 2]);
}
