//! `grail devices`: which GPUs grail can use, and whether the whole GPU path works on each.

use anyhow::Result;
use grail_runtime::gpu;

use crate::cli::DevicesArgs;

/// Prints NVRTC's version and every device (or the one asked for), each checked by the
/// self-test kernel: the driver loads, NVRTC compiles `grail_cuda.h` for the device, the
/// module loads and every helper computes what it should.
pub fn devices(args: DevicesArgs) -> Result<()> {
    let nvrtc = gpu::nvrtc_info()?;
    let location = nvrtc.path.as_ref().map_or_else(|| nvrtc.name.clone(), |p| p.display().to_string());
    println!("NVRTC {}.{} ({location})", nvrtc.version.0, nvrtc.version.1);
    let ordinals: Vec<usize> = match args.device {
        Some(n) => vec![n],
        None => (0..gpu::device_count()?).collect(),
    };
    for ordinal in ordinals {
        let info = gpu::probe_device(ordinal)?;
        println!("{info}: self-test passed");
        println!(
            "  compute capability {}.{}, {} threads per block, {} KiB shared memory per block, {} MiB L2, {:.1} GiB free, cooperative launch {}",
            info.compute_capability.0,
            info.compute_capability.1,
            info.max_threads_per_block,
            info.shared_memory_per_block / 1024,
            info.l2_cache_bytes >> 20,
            info.free_memory as f64 / (1u64 << 30) as f64,
            if info.cooperative_launch { "yes" } else { "no" }
        );
    }
    Ok(())
}
