//! `grail pbf`: predicate-based filtering through routers (`grail_algos::pbf`).

use anyhow::Result;
use grail_graph::Progress;
use serde_json::json;

use super::{UsageError, millis};
use crate::cli::PbfArgs;
use crate::progress::Bars;

pub fn pbf(args: PbfArgs, threads: usize, progress: &Bars) -> Result<()> {
    let gpus = || -> std::result::Result<u32, String> {
        grail_runtime::gpu::device_count().map(|n| n as u32).map_err(|e| format!("cannot count the GPUs: {e}"))
    };
    let devices =
        grail_runtime::multi::parse_devices(&args.devices, gpus).map_err(|e| UsageError(format!("--devices: {e}")))?;
    let segment = usize::try_from(args.segment).map_err(|_| UsageError("--segment: too large".into()))?;
    // The array, the values kept and (with --verify) a plain filter's: refused up front rather
    // than left to overflow or exhaust memory.
    const MAX_BYTES: u64 = 64 << 30;
    const BYTES_PER_VALUE: u64 = 12;
    if (args.count as u64).checked_mul(BYTES_PER_VALUE).is_none_or(|b| b > MAX_BYTES) {
        return Err(UsageError(format!(
            "--count {}: at most {} values (an array of more would need more than {} GiB)",
            args.count,
            MAX_BYTES / BYTES_PER_VALUE,
            MAX_BYTES >> 30
        ))
        .into());
    }
    progress.begin("generating the array", None);
    let values = grail_algos::pbf::random_values(args.count, args.seed);
    progress.finish();
    progress.begin("filtering", None);
    let options = grail_algos::pbf::Options { devices, segment, divisor: args.divisor, threads, opt: args.opt };
    let filtered = grail_algos::pbf::filter(&values, &options);
    progress.finish();
    let filtered = filtered?;
    let verified = if args.verify {
        if filtered.kept != grail_algos::pbf::reference(&values, args.divisor) {
            return Err(grail_graph::GraphError::Verification(
                "the routed filter's values differ from a plain filter's".into(),
            )
            .into());
        }
        Some(true)
    } else {
        None
    };
    progress.clear();
    if args.json {
        let shares: Vec<_> = filtered
            .shares
            .iter()
            .map(|s| json!({ "device": s.device.to_string(), "segments": s.segments, "values": s.values }))
            .collect();
        let summary = json!({
            "count": args.count,
            "segment": args.segment,
            "divisor": args.divisor,
            "kept": filtered.kept.len(),
            "time_ms": millis(filtered.time),
            "devices": shares,
            "verified": verified,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    println!(
        "pbf: {} values in segments of {}, {} kept (divisible by {}), {:.2} ms{}",
        args.count,
        args.segment,
        filtered.kept.len(),
        args.divisor,
        millis(filtered.time),
        if verified.is_some() { ", verified" } else { "" }
    );
    for share in &filtered.shares {
        println!("  {:<8} {:>6} segments {:>12} values", share.device.to_string(), share.segments, share.values);
    }
    Ok(())
}
