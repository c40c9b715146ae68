//! Parallel sections on CPU devices: several algorithms at once on one graph, each result
//! checked by its verifier.

use grail_algos::sections::{Section, run_sections};
use grail_algos::{Algorithm, RunParams, verify};
use grail_graph::NoProgress;
use grail_graph::generate::{GenOptions, Generator, generate};
use grail_runtime::multi::Device;

#[test]
fn sections_run_at_once_and_each_is_verified() {
    let options = GenOptions { seed: 4, max_weight: Some(50) };
    let graph = generate(&Generator::graph500(12), &options, false, &NoProgress).unwrap();
    let sections: Vec<Section> = ["bfs@cpu", "sssp/wl@cpu", "cc@cpu", "pr/push@cpu", "tri@cpu"]
        .iter()
        .map(|s| Section::parse(s).unwrap())
        .collect();
    let params = RunParams { source: Some(3), ..RunParams::default() };
    let (results, wall) = run_sections(&graph, &sections, &params).unwrap();
    assert_eq!(results.len(), sections.len());
    for done in &results {
        assert_eq!(done.result.algorithm, done.section.algorithm);
        verify(done.section.algorithm, &graph, &params, &done.result.output)
            .unwrap_or_else(|e| panic!("{:?}: {e}", done.section));
        assert!(done.result.time <= wall);
    }
    assert_eq!(results[3].result.variant.map(|v| v.name), Some("push"));
}

#[test]
fn section_specs_are_parsed_or_refused_with_the_reason() {
    assert_eq!(
        Section::parse("pr/push@gpu:1").unwrap(),
        Section { algorithm: Algorithm::Pr, variant: Some("push".into()), device: Device::Gpu(1) }
    );
    assert_eq!(Section::parse("bfs@gpu").unwrap().device, Device::Gpu(0));
    for (bad, says) in [
        ("bfs", "ALGO[/VARIANT]@DEVICE"),
        ("bfs@tpu", "unknown device `tpu` (expected cpu, gpu or gpu:N)"),
        ("walk@cpu", "walk"),
        ("bfs@", "no device after `@`"),
        ("bfs@gpu:0,gpu:1", "names 2 devices, and a section runs on one device"),
        ("bfs@cpu*2", "grail run ALGO --devices cpu*2"),
        ("bfs@all", "names every GPU"),
        ("bfs@gpu:x", "expected `gpu:N`"),
    ] {
        let error = Section::parse(bad).unwrap_err();
        assert!(error.contains(says), "{bad}: {error}");
    }
    let graph = generate(&Generator::graph500(6), &GenOptions::default(), false, &NoProgress).unwrap();
    assert!(run_sections(&graph, &[], &RunParams::default()).is_err());
}
