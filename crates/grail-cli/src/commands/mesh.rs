//! `grail mesh`: Triangle meshes, generated and checked.

use std::time::Instant;

use anyhow::{Context, Result, bail};
use grail_mesh::generate::{MAX_SIDE, MIN_SIDE, random_points};
use grail_mesh::io::{mesh_paths, read_mesh_oriented, read_poly, write_mesh};
use grail_mesh::refine::{MAX_MIN_ANGLE, check_coordinates, default_max_points, domain_for_refinement};
use grail_mesh::verify::{check_numbered, quality};
use serde_json::json;

use crate::cli::{MeshCheckArgs, MeshCommand, MeshDrawArgs, MeshGenArgs, MeshRefineArgs, MeshTarget};
use crate::progress::Bars;
use grail_algos::Target;
use grail_graph::Progress;

pub fn mesh(command: MeshCommand, threads: usize, progress: &Bars) -> Result<()> {
    match command {
        MeshCommand::Gen(args) => generate(args, progress),
        MeshCommand::Check(args) => check_mesh(args, progress),
        MeshCommand::Draw(args) => draw(args, progress),
        MeshCommand::Refine(args) => refine(args, threads, progress),
    }
}

/// `x` for a reader: in decimals where that is short, else with an exponent (a side of 1e300
/// is not three hundred digits).
fn number(x: f64) -> String {
    if x == 0.0 || (1e-5..1e16).contains(&x.abs()) { format!("{x}") } else { format!("{x:e}") }
}

/// Runs `work` as one phase of the progress display (meshes of millions of triangles take
/// seconds to read, refine, check and write).
fn phase<T>(progress: &Bars, name: &str, work: impl FnOnce() -> T) -> T {
    progress.begin(name, None);
    let result = work();
    progress.finish();
    result
}

fn refine(args: MeshRefineArgs, threads: usize, progress: &Bars) -> Result<()> {
    // A bound out of range is a usage error whichever target refines (the refiners' own checks
    // are for the library's callers).
    if !(args.min_angle.is_finite() && (0.0..=MAX_MIN_ANGLE).contains(&args.min_angle)) {
        bail!(super::UsageError(format!(
            "--min-angle {}: expected 0 to {MAX_MIN_ANGLE} degrees (above, Delaunay refinement need not end)",
            args.min_angle
        )));
    }
    let is_poly = args.input.extension().is_some_and(|e| e == "poly");
    let (input, base) =
        phase(progress, "reading", || if is_poly { read_poly(&args.input) } else { read_mesh_oriented(&args.input) })?;
    // The input is checked here, the same way whichever target refines it and before anything
    // is written: a mesh must be what `grail mesh check` accepts (the grail program's cavities
    // assume a Delaunay triangulation, and a point in no triangle would be carried into the
    // output), a domain what both refiners can take. Bad input, exit status 1, named as the
    // files number it.
    let cannot = || format!("{} cannot be refined", args.input.display());
    let (before, domain) = if is_poly {
        let domain = phase(progress, "checking", || domain_for_refinement(&input, base)).with_context(cannot)?;
        (quality(&input, args.min_angle), Some(domain))
    } else {
        check_coordinates(&input, base).with_context(cannot)?;
        let report = phase(progress, "checking", || check_numbered(&input, args.min_angle, None, base));
        if let Some(first) = report.problems.first() {
            let more = if report.problems.len() > 1 { "; `grail mesh check` lists every problem" } else { "" };
            bail!("{}: it is not a valid Delaunay triangulation: {first}{more}", cannot());
        }
        (report, None)
    };
    let max_points = args.max_points.unwrap_or_else(|| default_max_points(input.points.len()));
    progress.begin("refining", None);
    let start = Instant::now();
    // The time is the refinement's own: for the grail program, its run (not compiling it, nor
    // triangulating a .poly domain first).
    // `program`: the grail program's run (its mesh moved out into `refined`), for its timings.
    let target = match args.target {
        MeshTarget::Reference => "reference",
        MeshTarget::Cpu => "cpu",
        MeshTarget::Gpu => "gpu",
    };
    let (refined, time, program, domain_area) = match args.target {
        // An empty mesh (valid: no points, no triangles) has nothing to refine: every target
        // gives it back as it is, without starting a refiner.
        _ if input.points.is_empty() => {
            (grail_mesh::refine::Refined { mesh: input.clone(), complete: true }, start.elapsed(), None, None)
        }
        MeshTarget::Reference => {
            let refined = grail_mesh::refine::reference(&input, args.min_angle, max_points)?;
            (refined, start.elapsed(), None, None)
        }
        MeshTarget::Cpu | MeshTarget::Gpu => {
            let target = if args.target == MeshTarget::Cpu { Target::Cpu } else { Target::Gpu };
            let mesh = domain.unwrap_or_else(|| input.clone());
            let added = u32::try_from(max_points).unwrap_or(u32::MAX);
            let options = grail_algos::dmr::Options {
                min_angle: args.min_angle,
                max_points: u32::try_from(mesh.points.len()).unwrap_or(u32::MAX).saturating_add(added),
                target,
                device: args.program.device,
                threads,
                opt: args.program.opt,
                off_centers: !args.circumcenters,
                spatial_order: args.spatial_order,
                windows: args.windows,
            };
            let mut program = grail_algos::dmr::refine(&mesh, &options)?;
            let refined =
                grail_mesh::refine::Refined { mesh: std::mem::take(&mut program.mesh), complete: program.complete };
            (refined, program.time, Some(program), Some(mesh.area()))
        }
    };
    progress.finish();
    let ms = |t: std::time::Duration| t.as_secs_f64() * 1e3;
    let gpu_times = program.as_ref().and_then(|p| p.gpu_times.as_ref());
    phase(progress, "writing", || write_mesh(&refined.mesh, &args.output, base))
        .context("cannot write the refined mesh")?;
    let expected_area = domain_area.or_else(|| (!input.triangles.is_empty()).then(|| input.area()));
    // The whole verifier with --verify; otherwise the quality figures alone (a linear pass, where
    // the verifier sorts every edge and walks every fan: most of the time beside a GPU's
    // refinement of millions of triangles).
    let after = if args.verify {
        phase(progress, "checking", || check_numbered(&refined.mesh, args.min_angle, expected_area, base))
    } else {
        phase(progress, "measuring", || quality(&refined.mesh, args.min_angle))
    };
    // The grail program stops at its budget when the mesh has that many points, even where its
    // last point left nothing to refine: then it is complete all the same.
    let complete = refined.complete || (target != "reference" && after.meets_bound());
    // The grail refiner, run to completion, owes the bound everywhere but at input angles below
    // 60°; the reference (spade's refiner) is not held to it: it stops short near some boundaries.
    let quality_owed = target != "reference" && complete;
    let meets_bound = !quality_owed || after.meets_bound();
    if args.json {
        let summary = json!({
            "input": args.input.display().to_string(),
            "target": target,
            "triangles_in": before.triangles,
            "triangles_out": after.triangles,
            "bad_in": before.bad,
            "bad_out": after.bad,
            "bad_out_at_small_angles": after.bad_at_small_angles,
            "min_angle": after.min_angle,
            "bound": args.min_angle,
            "complete": complete,
            // The budget of added points it ran under (--max-points, or the default for the
            // input's size).
            "max_points": max_points,
            "time_ms": ms(time),
            // The grail program's runs: the part of time_ms spent renumbering the mesh in
            // spatial order and back (0 without the ordering).
            "order_ms": program.as_ref().map(|p| ms(p.order_time)),
            // The grail program's rounds (invocations of its kernel `refine`) and the bad
            // triangles they took, retried ones included.
            "rounds": program.as_ref().map(|p| p.rounds),
            "items": program.as_ref().map(|p| p.items),
            // The kernels' share of time_ms (the rest: filling the mesh in and reading it back,
            // on a GPU copying it up and back, and the ordering).
            "kernel_ms": program.as_ref().map(|p| ms(p.kernel_time)),
            // On a GPU, copying the mesh up (with the program's input collections filled) and
            // its result back, also parts of time_ms.
            "upload_ms": gpu_times.map(|t| ms(t.upload)),
            "download_ms": gpu_times.map(|t| ms(t.download)),
            // The grail program's optimizations (the reference refiner has none).
            "opt": (target != "reference").then(|| args.program.opt.to_string()),
            "off_centers": (target != "reference").then_some(!args.circumcenters),
            "windows": program.as_ref().map(|p| p.windows),
            "verified": args.verify.then(|| after.is_valid() && meets_bound),
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let (node, ele) = mesh_paths(&args.output);
        if is_poly {
            println!(
                "{}: a domain of {}, {}, {}",
                args.input.display(),
                count(input.points.len() as u64, "point"),
                count(input.segments.len() as u64, "segment"),
                count(input.holes.len() as u64, "hole")
            );
        } else {
            println!(
                "{}: {}, {} below {}°",
                args.input.display(),
                count(before.triangles as u64, "triangle"),
                before.bad,
                args.min_angle
            );
        }
        println!(
            "  refined   {}, {} below {}°, min angle {:.2}° in {:.1} ms (target {target}){}",
            count(after.triangles as u64, "triangle"),
            after.bad,
            args.min_angle,
            after.min_angle.unwrap_or(0.0),
            time.as_secs_f64() * 1e3,
            if complete { String::new() } else { format!(", stopped at its budget of {max_points} added points") }
        );
        println!("  written   {} and {}", node.display(), ele.display());
    }
    // Stopped by the budget: said on standard error whatever the output's form, with what is
    // left to refine. The exit status stays 0, as for a budget asked for: the mesh written is
    // valid, only coarser than asked.
    if !complete {
        let why = if args.max_points.is_some() {
            String::new()
        } else {
            format!(
                " (the default budget: {} plus {} per input point). Delaunay refinement is sure to end only for bounds \
                 up to about 20.7°, and from about 33.5° it does not end on some meshes: lower --min-angle, or give \
                 --max-points if the mesh needs more points",
                grail_mesh::refine::DEFAULT_ADDED_POINTS,
                grail_mesh::refine::DEFAULT_ADDED_PER_POINT
            )
        };
        eprintln!(
            "warning: the refinement stopped at its budget of {max_points} added points with {} still below {}°{why}",
            count(after.bad as u64, "triangle"),
            args.min_angle
        );
    }
    // The reference is not held to the bound, but its user should know where it fell short.
    let short = after.bad.saturating_sub(after.bad_at_small_angles);
    if target == "reference" && complete && short > 0 {
        eprintln!(
            "note: {} below {}° {} away from any input angle under 60°: the reference refiner stops short there; \
             --target cpu (or gpu) refines {}",
            count(short as u64, "triangle"),
            args.min_angle,
            if short == 1 { "is" } else { "are" },
            if short == 1 { "it" } else { "them" }
        );
    }
    if args.verify && !after.is_valid() {
        return Err(grail_graph::GraphError::Verification(format!(
            "the refined mesh is not valid: {}",
            after.problems.first().map_or("", String::as_str)
        ))
        .into());
    }
    if args.verify && !meets_bound {
        return Err(grail_graph::GraphError::Verification(format!(
            "{} left below {}° away from any input angle under 60° (the refinement is incomplete)",
            count((after.bad - after.bad_at_small_angles) as u64, "triangle"),
            args.min_angle
        ))
        .into());
    }
    Ok(())
}

/// `n` things, in the singular for one: "1 triangle", "3 triangles".
fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn draw(args: MeshDrawArgs, progress: &Bars) -> Result<()> {
    if !(args.min_angle.is_finite() && (0.0..60.0).contains(&args.min_angle)) {
        bail!(super::UsageError(format!("--min-angle {}: expected degrees in [0, 60)", args.min_angle)));
    }
    if !(64..=20_000).contains(&args.size) {
        bail!(super::UsageError(format!("--size {}: expected 64 to 20000 pixels", args.size)));
    }
    // A mesh that is not valid is drawn too (seeing it is how its problems are found): degenerate
    // triangles are kept, and filled as their angle of 0° makes them.
    let (mesh, _) = phase(progress, "reading", || read_mesh_oriented(&args.input))?;
    let style = grail_mesh::draw::Style { size: args.size, min_angle: args.min_angle };
    let bad = phase(progress, "drawing", || grail_mesh::draw::draw(&mesh, &args.output, style))?;
    let degenerate = mesh.degenerate_triangles();
    println!(
        "drew {} ({bad} with an angle below {}°, filled{}) to {}",
        count(mesh.triangles.len() as u64, "triangle"),
        args.min_angle,
        if degenerate == 0 { String::new() } else { format!("; {} degenerate", degenerate) },
        args.output.display()
    );
    Ok(())
}

fn generate(args: MeshGenArgs, progress: &Bars) -> Result<()> {
    if args.points < 3 {
        return Err(super::UsageError(format!("--points {}: a triangulation needs at least 3", args.points)).into());
    }
    // Checked before triangulating, in words: the triangulation's own refusal names only
    // `TooLarge` or `TooSmall`.
    if !(MIN_SIDE..=MAX_SIDE).contains(&args.square) {
        return Err(super::UsageError(format!(
            "--square {}: expected a side from {MIN_SIDE:e} to {MAX_SIDE:e} (the coordinates the triangulation's exact \
             arithmetic takes)",
            number(args.square)
        ))
        .into());
    }
    let start = Instant::now();
    let mesh = phase(progress, "triangulating", || random_points(args.points, args.square, args.seed))?;
    let took = start.elapsed();
    phase(progress, "writing", || write_mesh(&mesh, &args.output, args.base)).context("cannot write the mesh")?;
    let (node, ele) = mesh_paths(&args.output);
    println!(
        "wrote {} ({}) and {} ({}), Delaunay triangulation in {:.1} ms",
        node.display(),
        count(mesh.points.len() as u64, "point"),
        ele.display(),
        count(mesh.triangles.len() as u64, "triangle"),
        took.as_secs_f64() * 1e3
    );
    Ok(())
}

fn check_mesh(args: MeshCheckArgs, progress: &Bars) -> Result<()> {
    if !(args.min_angle.is_finite() && (0.0..60.0).contains(&args.min_angle)) {
        bail!(super::UsageError(format!("--min-angle {}: expected degrees in [0, 60)", args.min_angle)));
    }
    // Read without stopping at a degenerate triangle: the verifier names it among the other
    // problems, and the mesh fails with exit status 3 as any other invalid mesh does.
    let (mesh, base) = phase(progress, "reading", || read_mesh_oriented(&args.input))?;
    let report = phase(progress, "checking", || check_numbered(&mesh, args.min_angle, None, base));
    if args.json {
        let summary = json!({
            "mesh": args.input.display().to_string(),
            "numbering": base,
            "points": report.points,
            "triangles": report.triangles,
            "min_angle": report.min_angle,
            "bound": args.min_angle,
            "bad": report.bad,
            "bad_at_small_angles": report.bad_at_small_angles,
            "area": report.area,
            "valid": report.is_valid(),
            "problems": report.problems,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{}: {}, {}, numbered from {base}",
            args.input.display(),
            count(report.points as u64, "point"),
            count(report.triangles as u64, "triangle")
        );
        println!("  area      {}", number(report.area));
        match report.min_angle {
            Some(angle) => {
                println!(
                    "  quality   min angle {angle:.3}°, {} below {}° ({} of them at input angles under 60°)",
                    count(report.bad as u64, "triangle"),
                    args.min_angle,
                    report.bad_at_small_angles
                )
            }
            None if report.triangles == 0 => println!("  quality   no triangles"),
            // The verifier stopped before measuring (a problem that makes measures meaningless).
            None => println!("  quality   not measured"),
        }
        println!("  valid     {}", if report.is_valid() { "yes: a Delaunay triangulation" } else { "no" });
        for problem in &report.problems {
            println!("  problem   {problem}");
        }
    }
    if !report.is_valid() {
        return Err(grail_graph::GraphError::Verification(format!(
            "{} is not a valid Delaunay triangulation: {}",
            args.input.display(),
            report.problems.first().map_or("", String::as_str)
        ))
        .into());
    }
    Ok(())
}
