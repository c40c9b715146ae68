//! Predicate-based filtering (PBF), Groute's example of routers: a large array is cut into
//! segments; a router sends each to the first device with a free buffer (double-buffered links),
//! the device keeps the values the predicate accepts (`programs/pbf.grail`: divisible by
//! `divisor`), and a second router brings the kept values back to the host, which puts them in
//! the array's order. Devices that finish sooner take more segments. The reference is a plain
//! filter ([`reference()`]).

use std::time::{Duration, Instant};

use grail_graph::Graph;
use grail_graph::builder::{BuildOptions, EdgeList, build};
use grail_ir::{OptConfig, Type};
use grail_runtime::cpu::Value;
use grail_runtime::multi::Device;
use grail_runtime::multi::router::{AnyDevice, Router, Segment};
use grail_runtime::{ModuleCache, Table};

use crate::error::{AlgoError, Result};

/// How to filter.
#[derive(Debug, Clone)]
pub struct Options {
    /// The endpoints that filter: CPU core groups and GPUs.
    pub devices: Vec<Device>,
    /// Values per segment.
    pub segment: usize,
    /// A value is kept when this divides it (not 0).
    pub divisor: u32,
    /// CPU threads per CPU device (0: the cores shared among them).
    pub threads: usize,
    pub opt: OptConfig,
}

/// What one endpoint did.
#[derive(Debug, Clone)]
pub struct DeviceShare {
    pub device: Device,
    pub segments: usize,
    pub values: usize,
}

/// The kept values, in the array's order, and how the work was shared.
#[derive(Debug, Clone)]
pub struct Filtered {
    pub kept: Vec<u32>,
    pub shares: Vec<DeviceShare>,
    /// From the first segment sent to the last kept value received (compiling excluded).
    pub time: Duration,
}

/// `count` random 32-bit values from `seed` (xorshift: the same on any machine), the array
/// `grail pbf` filters.
pub fn random_values(count: usize, seed: u64) -> Vec<u32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        })
        .collect()
}

/// The values `divisor` divides, in order: what [`filter`] must give.
pub fn reference(values: &[u32], divisor: u32) -> Vec<u32> {
    values.iter().copied().filter(|v| v % divisor == 0).collect()
}

/// The program on one endpoint.
enum Endpoint {
    Cpu(Box<grail_runtime::cpu::CpuProgram>, usize),
    Gpu(Box<grail_runtime::gpu::GpuProgram>),
}

impl Endpoint {
    fn filter(&self, graph: &Graph, params: &[Option<Value>], segment: Segment<u32>) -> Result<Segment<(u32, u32)>> {
        let mut words = Vec::with_capacity(segment.items.len() * 2);
        for (i, &value) in segment.items.iter().enumerate() {
            words.extend([segment.offset + i as u64, u64::from(value)]);
        }
        let input = Table::from_words(vec![Type::U32, Type::U32], words)?;
        let output = match self {
            Endpoint::Cpu(program, threads) => program.run_with_inputs(
                graph,
                params,
                &[input],
                &grail_runtime::cpu::RunOptions { threads: *threads },
                &mut std::io::sink(),
            )?,
            Endpoint::Gpu(program) => program.run_with_inputs(graph, params, &[input], &mut std::io::sink())?.0,
        };
        let kept = &output.collections[0];
        let items = (0..kept.len()).map(|row| (kept.u32(row, 0), kept.u32(row, 1))).collect();
        Ok(Segment { offset: segment.offset, items })
    }
}

/// Filters `values` on the devices (see the module documentation).
pub fn filter(values: &[u32], options: &Options) -> Result<Filtered> {
    if options.devices.is_empty() {
        return Err(AlgoError::Usage("pbf needs at least one device".into()));
    }
    if options.divisor == 0 {
        return Err(AlgoError::Usage(
            "--divisor: a value is kept when the divisor divides it; 0 divides nothing".into(),
        ));
    }
    if values.len() >= u32::MAX as usize {
        return Err(AlgoError::Usage(format!("{} values: pbf numbers positions in 32 bits", values.len())));
    }
    let segment = options.segment.max(1);
    let module = crate::suite::optimized_program("pbf", &options.opt)?;
    let cache = ModuleCache::default_location();
    let cpus = options.devices.iter().filter(|d| **d == Device::Cpu).count();
    let threads = match options.threads {
        0 => (std::thread::available_parallelism().map_or(1, |n| n.get()) / cpus.max(1)).max(1),
        n => n,
    };
    // Each endpoint's program, compiled before the clock starts (the C program once).
    let compiler = if cpus > 0 { Some(grail_runtime::cpu::CCompiler::detect()?) } else { None };
    let mut endpoints = Vec::with_capacity(options.devices.len());
    for device in &options.devices {
        endpoints.push(match device {
            Device::Cpu => Endpoint::Cpu(
                Box::new(grail_runtime::cpu::CpuProgram::compile(
                    module.clone(),
                    compiler.as_ref().expect("detected"),
                    Some(&cache),
                )?),
                threads,
            ),
            Device::Gpu(ordinal) => {
                let gpu =
                    grail_runtime::gpu::Device::open(*ordinal as usize).map_err(grail_runtime::RuntimeError::from)?;
                Endpoint::Gpu(Box::new(grail_runtime::gpu::GpuProgram::compile(module.clone(), gpu, Some(&cache))?))
            }
        });
    }
    let graph = build(EdgeList::new(0, false), &BuildOptions::AS_GIVEN)?;
    let params = vec![Some(Value::U32(options.divisor))];
    let k = endpoints.len();
    // Host to devices, and devices to host; two buffers per link.
    let scatter: Router<u32> = Router::new(1, k, 2, Box::new(AnyDevice::default()));
    let gather: Router<(u32, u32)> = Router::new(k, 1, 2, Box::new(AnyDevice::default()));
    let started = Instant::now();
    let (results, kept) = std::thread::scope(|scope| {
        let workers: Vec<_> = endpoints
            .iter()
            .enumerate()
            .map(|(d, endpoint)| {
                let (scatter, gather, graph, params) = (&scatter, &gather, &graph, &params);
                scope.spawn(move || -> Result<DeviceShare> {
                    let mut share = DeviceShare { device: options.devices[d], segments: 0, values: 0 };
                    // A failure still shuts the link, so the host is not left waiting.
                    let result = (|| {
                        while let Some(segment) = scatter.receive(d) {
                            share.segments += 1;
                            share.values += segment.items.len();
                            let kept = endpoint.filter(graph, params, segment)?;
                            gather.send(d, kept);
                        }
                        Ok(())
                    })();
                    gather.shutdown(d);
                    if result.is_err() {
                        // Take what is left so the sender does not wait for this device.
                        while scatter.receive(d).is_some() {}
                    }
                    result.map(|()| share)
                })
            })
            .collect();
        let collector = scope.spawn(|| {
            let mut kept: Vec<(u32, u32)> = Vec::new();
            while let Some(segment) = gather.receive(0) {
                kept.extend(segment.items);
            }
            kept
        });
        for (i, chunk) in values.chunks(segment).enumerate() {
            scatter.send(0, Segment { offset: (i * segment) as u64, items: chunk.to_vec() });
        }
        scatter.shutdown(0);
        let results: Vec<Result<DeviceShare>> =
            workers.into_iter().map(|w| w.join().expect("a device worker")).collect();
        (results, collector.join().expect("the collector"))
    });
    let time = started.elapsed();
    let shares = results.into_iter().collect::<Result<Vec<_>>>()?;
    let mut kept = kept;
    kept.sort_unstable_by_key(|&(at, _)| at);
    Ok(Filtered { kept: kept.into_iter().map(|(_, value)| value).collect(), shares, time })
}
