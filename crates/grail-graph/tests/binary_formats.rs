//! The binary formats (Galois `.gr`, grail `.gcsr`): round trips, and rejection of every kind of
//! damage with the byte offset named.

use grail_graph::io::{Format, ReadOptions, parse_graph, read_graph, write_graph};
use grail_graph::{BuildOptions, EdgeList, Facts, Graph, Location, NoProgress, ParseError, build};
use proptest::prelude::*;

fn encode(graph: &Graph, format: Format) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("g.{}", format.extension()));
    write_graph(graph, &path, Some(format), &NoProgress).unwrap();
    std::fs::read(path).unwrap()
}

fn encode_version_1(graph: &Graph) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.gcsr");
    grail_graph::io::write_gcsr_version_1(graph, &path).unwrap();
    std::fs::read(path).unwrap()
}

fn decode(bytes: &[u8], format: Format) -> Result<Graph, ParseError> {
    parse_graph(bytes, format, &BuildOptions::AS_GIVEN, &NoProgress)
}

fn sample(weighted: bool, m_odd: bool) -> Graph {
    let mut triples = vec![(0, 1, 7), (0, 2, 1), (2, 0, 9), (3, 3, 4), (1, 2, 0), (4, 0, 2)];
    if m_odd {
        triples.pop();
    }
    let mut edges = EdgeList::from_triples(5, &triples);
    if !weighted {
        edges.weights = None;
    }
    build(edges, &BuildOptions::AS_GIVEN).unwrap()
}

fn graphs() -> impl Strategy<Value = Graph> {
    (0u32..60, any::<bool>()).prop_flat_map(|(n, weighted)| {
        let edge = (0..n.max(1), 0..n.max(1), any::<u32>());
        proptest::collection::vec(edge, if n == 0 { 0..1 } else { 0..200 }).prop_map(move |triples| {
            let mut edges = EdgeList::from_triples(n, &triples);
            if !weighted {
                edges.weights = None;
            }
            build(edges, &BuildOptions::AS_GIVEN).unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn binary_formats_round_trip(graph in graphs()) {
        for format in [Format::Galois, Format::Gcsr] {
            let back = decode(&encode(&graph, format), format).unwrap();
            prop_assert_eq!(back.out(), graph.out());
        }
        // .gcsr version 1, as grail wrote it before version 2.
        let back = decode(&encode_version_1(&graph), Format::Gcsr).unwrap();
        prop_assert_eq!(back.out(), graph.out());
        prop_assert_eq!(back.facts(), Facts::NONE);
    }

    #[test]
    fn damaged_binary_files_are_errors_not_panics(graph in graphs(), cut in any::<prop::sample::Index>(),
                                                 flip in any::<prop::sample::Index>(), bits in 1u8..) {
        for format in [Format::Galois, Format::Gcsr] {
            let bytes = encode(&graph, format);
            let truncated = &bytes[..cut.index(bytes.len())];
            prop_assert!(decode(truncated, format).is_err());
            let mut flipped = bytes.clone();
            let at = flip.index(flipped.len());
            flipped[at] ^= bits;
            // A flip may happen to give another valid graph (Galois has no checksum); it must
            // never panic, and a gcsr flip is always caught.
            let result = decode(&flipped, format);
            if format == Format::Gcsr {
                prop_assert!(result.is_err());
            }
        }
    }
}

#[test]
fn galois_version_one_pads_odd_edge_counts() {
    let odd = sample(true, true);
    assert_eq!(odd.num_edges(), 5);
    let bytes = encode(&odd, Format::Galois);
    // header 32 + offsets 8n + targets 4m + padding 4 + weights 4m
    assert_eq!(bytes.len(), 32 + 8 * 5 + 4 * 5 + 4 + 4 * 5);
    assert_eq!(decode(&bytes, Format::Galois).unwrap().out(), odd.out());
    assert_eq!(encode(&sample(false, false), Format::Galois).len(), 32 + 8 * 5 + 4 * 6);
}

#[test]
fn galois_version_two_reads() {
    // 3 nodes, edges 0->1 (w 5), 0->2 (w 6), 2->1 (w 7), 64-bit ids.
    let mut bytes = Vec::new();
    for v in [2u64, 4, 3, 3, 2, 2, 3, 1, 2, 1] {
        bytes.extend(v.to_le_bytes());
    }
    for w in [5u32, 6, 7] {
        bytes.extend(w.to_le_bytes());
    }
    let graph = decode(&bytes, Format::Galois).unwrap();
    assert_eq!(graph.out().targets(), &[1, 2, 1]);
    assert_eq!(graph.out().weights(), Some(&[5, 6, 7][..]));
    bytes[8 * 9] = 9; // the last target becomes node 9
    let err = decode(&bytes, Format::Galois).unwrap_err();
    assert_eq!(err.location, Location::Byte(8 * 9));
    assert!(err.message.contains("points to node 9"), "{}", err.message);
}

fn message(bytes: &[u8], format: Format) -> (Location, String) {
    let err = decode(bytes, format).unwrap_err();
    (err.location, err.message)
}

#[test]
fn galois_damage_is_named() {
    let bytes = encode(&sample(true, false), Format::Galois);
    let mut bad = bytes.clone();
    bad[0] = 3;
    assert!(decode(&bad, Format::Galois).is_err());
    let mut bad = bytes.clone();
    bad[8] = 8;
    assert_eq!(message(&bad, Format::Galois).0, Location::Byte(8));
    let (location, text) = message(&bytes[..bytes.len() - 4], Format::Galois);
    assert_eq!(location, Location::Byte(24));
    assert!(text.contains("but the file has"), "{text}");
    let mut bad = bytes.clone();
    bad[32] = 200; // node 0 ends after all edges: offsets then decrease
    assert!(message(&bad, Format::Galois).1.contains("decrease"));
    let mut bad = bytes;
    bad[32 + 40] = 77; // first target
    assert_eq!(
        message(&bad, Format::Galois),
        (Location::Byte(72), "edge 0 points to node 77, but there are 5 nodes".into())
    );
}

#[test]
fn gcsr_damage_is_named() {
    let bytes = encode(&sample(true, false), Format::Gcsr);
    assert_eq!(&bytes[..8], b"GRAILCSR");
    let mut bad = bytes.clone();
    bad[8] = 3;
    let (location, text) = message(&bad, Format::Gcsr);
    assert_eq!(location, Location::Byte(8));
    assert!(text.contains("version 3 is not supported"), "{text}");
    let mut bad = bytes.clone();
    bad[12] = 0x01;
    bad[13] = 0x01;
    assert!(message(&bad, Format::Gcsr).1.contains("unknown flags"));
    let mut bad = bytes.clone();
    *bad.last_mut().unwrap() ^= 1;
    let (location, text) = message(&bad, Format::Gcsr);
    assert_eq!(location, Location::Byte(32));
    assert!(text.contains("checksum mismatch"), "{text}");
    let (_, text) = message(&bytes[..bytes.len() - 8], Format::Gcsr);
    assert!(text.contains("but the file has"), "{text}");
    let (location, _) = message(b"GRAIL", Format::Gcsr);
    assert_eq!(location, Location::Byte(5));
    // An edge count whose byte size overflows 64 bits (found by fuzzing).
    let mut bad = bytes.clone();
    bad[24..32].copy_from_slice(&(u64::MAX / 5).to_le_bytes());
    assert!(message(&bad, Format::Gcsr).1.contains("more than 2^64"));
}

#[test]
fn binary_files_are_detected_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let graph = sample(true, false);
    let galois = dir.path().join("g.gr");
    write_graph(&graph, &galois, Some(Format::Galois), &NoProgress).unwrap();
    let dimacs = dir.path().join("d.gr");
    write_graph(&graph, &dimacs, None, &NoProgress).unwrap();
    let mystery = dir.path().join("g.bin");
    write_graph(&graph, &mystery, Some(Format::Gcsr), &NoProgress).unwrap();
    for path in [&galois, &dimacs, &mystery] {
        let back = read_graph(path, &ReadOptions::default(), &NoProgress).unwrap();
        assert_eq!(back.out(), graph.out(), "{}", path.display());
    }
    let err = read_graph(&dir.path().join("missing.gcsr"), &ReadOptions::default(), &NoProgress).unwrap_err();
    assert!(err.to_string().contains("missing.gcsr"), "{err}");
}

#[test]
fn corrupt_file_error_names_path_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.gcsr");
    let mut bytes = encode(&sample(false, false), Format::Gcsr);
    bytes.truncate(60);
    std::fs::write(&path, bytes).unwrap();
    let err = read_graph(&path, &ReadOptions::default(), &NoProgress).unwrap_err().to_string();
    assert!(err.contains("broken.gcsr: byte 24:"), "{err}");
}

// ---- .gcsr version 2: what is known of the graph, the reverse CSR and in-edge ids ----

/// `graph` in every state of preparation a file can record.
fn prepared_states(graph: &Graph) -> Vec<Graph> {
    let plain = Graph::from_csr(graph.out().clone());
    let mut with_reverse = plain.clone();
    with_reverse.build_reverse();
    let mut with_ids = plain.clone();
    with_ids.build_in_edge_ids();
    let mut symmetric = grail_graph::build(EdgeList::from_csr(graph.out()), &BuildOptions::UNDIRECTED).unwrap();
    let symmetric_plain = symmetric.clone();
    symmetric.build_in_edge_ids();
    vec![graph.clone(), plain, with_reverse, with_ids, symmetric_plain, symmetric]
}

/// Recomputes a version 2 file's checksum after the test has changed it, so that the checks
/// behind the checksum are reached.
fn reseal(bytes: &mut [u8]) {
    use xxhash_rust::xxh3::xxh3_64;
    let mut header = bytes[..48].to_vec();
    header[32..40].fill(0);
    let mut hashes = xxh3_64(&header).to_le_bytes().to_vec();
    for block in bytes[48..].chunks(4 << 20) {
        hashes.extend(xxh3_64(block).to_le_bytes());
    }
    let sum = xxh3_64(&hashes);
    bytes[32..40].copy_from_slice(&sum.to_le_bytes());
}

fn flags(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes[12..16].try_into().unwrap())
}

fn set_flags(bytes: &mut [u8], flags: u32) {
    bytes[12..16].copy_from_slice(&flags.to_le_bytes());
    reseal(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn gcsr_version_two_round_trips_every_preparation(graph in graphs()) {
        for state in prepared_states(&graph) {
            let bytes = encode(&state, Format::Gcsr);
            prop_assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2);
            let back = decode(&bytes, Format::Gcsr).unwrap();
            // Edges, reverse CSR, in-edge ids.
            prop_assert_eq!(&back, &state);
            // What the file says is true, and at least what the graph knew.
            let known = state.facts();
            prop_assert_eq!(back.facts().union(known), back.facts());
            let found = grail_graph::facts::scan(back.out());
            prop_assert_eq!(Facts { symmetric: false, ..back.facts() }.union(found), found);
            prop_assert_eq!(back.facts().symmetric, Graph::from_csr(back.out().clone()).is_symmetric());
            // A symmetric sorted graph's reverse CSR is not stored: it is the out-CSR.
            if state.reverse().is_some() {
                prop_assert_eq!(back.reverse_is_out(), back.facts().reverse_is_out());
            }
        }
    }

    #[test]
    fn damaged_prepared_files_are_errors(graph in graphs(), flip in any::<prop::sample::Index>(), bits in 1u8..) {
        for state in prepared_states(&graph) {
            let mut bytes = encode(&state, Format::Gcsr);
            let at = flip.index(bytes.len());
            bytes[at] ^= bits;
            prop_assert!(decode(&bytes, Format::Gcsr).is_err(), "byte {} of {}", at, bytes.len());
        }
    }
}

#[test]
fn gcsr_version_one_files_still_load() {
    // Files written by grail before version 2 (the fuzzing seeds).
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/gcsr");
    for (name, weighted) in [("grid.gcsr", false), ("weighted.gcsr", true)] {
        let bytes = std::fs::read(seeds.join(name)).unwrap();
        assert_eq!(&bytes[8..12], &1u32.to_le_bytes(), "{name} is a version 1 file");
        let graph = decode(&bytes, Format::Gcsr).unwrap();
        assert_eq!(graph.is_weighted(), weighted, "{name}");
        assert!(graph.num_edges() > 0 && graph.reverse().is_none(), "{name}");
        assert_eq!(graph.facts(), Facts::NONE, "version 1 says nothing of the edges");
        // Written again, it becomes version 2 with the same edges; version 1 gives the same bytes.
        let again = decode(&encode(&graph, Format::Gcsr), Format::Gcsr).unwrap();
        assert_eq!(again.out(), graph.out());
        assert_eq!(encode_version_1(&graph), bytes, "{name}");
    }
    // Version 1 knows no flag but the weights, and its checksum leaves the header out.
    let bytes = std::fs::read(seeds.join("grid.gcsr")).unwrap();
    let mut bad = bytes.clone();
    bad[12] = 2;
    let (location, text) = message(&bad, Format::Gcsr);
    assert_eq!(location, Location::Byte(12));
    assert!(text.contains("unknown flags 0x2 for version 1"), "{text}");
}

#[test]
fn gcsr_version_two_layout() {
    // 5 nodes, 6 weighted edges: sorted, without duplicates, a self-loop, not symmetric.
    let graph = sample(true, false);
    let bytes = encode(&graph, Format::Gcsr);
    assert_eq!(flags(&bytes), 0x1 | 0x2 | 0x8);
    let csr_bytes = 8 * 6 + 24 + 24;
    assert_eq!(bytes.len(), 48 + csr_bytes);
    let mut with_reverse = graph.clone();
    with_reverse.build_reverse();
    let bytes = encode(&with_reverse, Format::Gcsr);
    assert_eq!(flags(&bytes), 0x2b);
    assert_eq!(bytes.len(), 48 + 2 * csr_bytes);
    with_reverse.build_in_edge_ids();
    let bytes = encode(&with_reverse, Format::Gcsr);
    assert_eq!(flags(&bytes), 0x6b);
    assert_eq!(bytes.len(), 48 + 2 * csr_bytes + 8 * 6);
    // The undirected simple graph: every fact, and its reverse CSR (itself) is not stored.
    let mut simple = build(EdgeList::from_csr(graph.out()), &BuildOptions::UNDIRECTED).unwrap();
    assert_eq!(flags(&encode(&simple, Format::Gcsr)), 0x1f);
    simple.build_reverse();
    let bytes = encode(&simple, Format::Gcsr);
    assert_eq!(flags(&bytes), 0x3f);
    assert_eq!(bytes.len(), 48 + 8 * 6 + 2 * (4 * simple.num_edges() as usize).next_multiple_of(8));
    let back = decode(&bytes, Format::Gcsr).unwrap();
    assert!(back.facts().is_undirected_simple() && back.reverse_is_out());
    assert_eq!(back.reverse(), Some(back.out()));
}

#[test]
fn gcsr_version_two_checks_what_it_claims() {
    // Edges 0 -> 1 (w 7), 0 -> 2 (w 1), 1 -> 2, 2 -> 0, 3 -> 3, 4 -> 0.
    let graph = sample(true, false);
    let bytes = encode(&graph, Format::Gcsr);
    let targets_at = 48 + 8 * 6;
    let cases: [(u32, Location, &str); 6] = [
        (0x1 | 0x8, Location::Byte(12), "only valid with flag 0x2"),
        (0x1 | 0x40, Location::Byte(12), "only valid with flag 0x20"),
        (0x1 | 0x4, Location::Byte(targets_at + 4 * 4), "no self-loops (0x4) is set, but edge 4 (node 3 -> 3)"),
        (0x1 | 0x10, Location::Byte(12), "not symmetric"),
        (0x1 | 0x20, Location::Byte(24), "but the file has"),
        (0x1 | 0x100, Location::Byte(12), "unknown flags 0x100 for version 2"),
    ];
    for (flags, location, text) in cases {
        let mut bad = bytes.clone();
        set_flags(&mut bad, flags);
        let (found, said) = message(&bad, Format::Gcsr);
        assert_eq!(found, location, "flags {flags:#x}: {said}");
        assert!(said.contains(text), "flags {flags:#x}: {said}");
    }
    // Sorted, claimed of lists that are not: the first edge out of order is named.
    let unsorted = build(EdgeList::from_pairs(3, &[(0, 1), (1, 2), (1, 0)]), &BuildOptions::AS_GIVEN).unwrap();
    let mut bad = encode(&unsorted, Format::Gcsr);
    let claimed = flags(&bad) | 0x2;
    set_flags(&mut bad, claimed);
    let (found, said) = message(&bad, Format::Gcsr);
    assert_eq!(found, Location::Byte(48 + 8 * 4 + 4 * 2), "{said}");
    assert!(said.contains("sorted (0x2) is set, but edge 2 (node 1 -> 0)"), "{said}");
    // Parallel edges are duplicates even when sorted.
    let parallel = build(EdgeList::from_pairs(2, &[(0, 1), (0, 1)]), &BuildOptions::AS_GIVEN).unwrap();
    let mut bad = encode(&parallel, Format::Gcsr);
    let claimed = flags(&bad) | 0x8;
    set_flags(&mut bad, claimed);
    assert!(message(&bad, Format::Gcsr).1.contains("no duplicates (0x8) is set, but edge 1"));
}

#[test]
fn gcsr_version_two_checks_the_reverse_csr() {
    // 4 nodes, unweighted, directed: 0->1, 0->2, 1->2, 3->2.
    let mut graph = build(EdgeList::from_pairs(4, &[(0, 1), (0, 2), (1, 2), (3, 2)]), &BuildOptions::SIMPLE).unwrap();
    graph.build_in_edge_ids();
    let bytes = encode(&graph, Format::Gcsr);
    assert_eq!(flags(&bytes), 0x2 | 0x4 | 0x8 | 0x20 | 0x40);
    let out_bytes = 8 * 5 + 16;
    let reverse_at = 48 + out_bytes;
    let sources_at = reverse_at + 8 * 5;
    let ids_at = reverse_at + out_bytes;
    // In-edges: node 1 from 0; node 2 from 0, 1, 3.
    let reverse = graph.reverse().unwrap();
    assert_eq!((reverse.offsets(), reverse.targets()), (&[0, 0, 1, 4, 4][..], &[0, 0, 1, 3][..]));
    assert_eq!(graph.in_edge_ids().unwrap(), [0, 1, 2, 3]);
    let forged = |at: usize, value: &[u8]| {
        let mut bad = bytes.clone();
        bad[at..at + value.len()].copy_from_slice(value);
        reseal(&mut bad);
        message(&bad, Format::Gcsr)
    };
    // Offsets that decrease, a source out of range, sources out of order.
    let (location, text) = forged(reverse_at + 8 * 3, &0u64.to_le_bytes());
    assert_eq!(location, Location::Byte((reverse_at + 24) as u64));
    assert!(text.contains("reverse offsets decrease at node 2"), "{text}");
    let (location, text) = forged(sources_at + 4, &9u32.to_le_bytes());
    assert_eq!(location, Location::Byte((sources_at + 4) as u64));
    assert!(text.contains("in-edge 1 comes from node 9, but there are 4 nodes"), "{text}");
    let (location, text) = forged(sources_at + 4, &3u32.to_le_bytes());
    assert_eq!(location, Location::Byte((sources_at + 8) as u64));
    assert!(text.contains("in-edges of node 2 are not sorted by source"), "{text}");
    // An id that names the wrong edge, and ids that repeat.
    let (location, text) = forged(ids_at + 8 * 3, &2u64.to_le_bytes());
    assert_eq!(location, Location::Byte((ids_at + 24) as u64));
    assert!(text.contains("in-edge 3 (3 -> 2) names out-edge 2, which is not an edge 3 -> 2"), "{text}");
    let (location, _) = forged(ids_at + 8 * 3, &7u64.to_le_bytes());
    assert_eq!(location, Location::Byte((ids_at + 24) as u64));
    // Without ids, a reverse CSR with other edges (node 2 from 0, 1, 2 instead of 0, 1, 3) is
    // caught by the fingerprint.
    let mut without_ids = graph.clone();
    without_ids = Graph::from_csr(without_ids.out().clone());
    without_ids.build_reverse();
    let bytes = encode(&without_ids, Format::Gcsr);
    let mut bad = bytes.clone();
    bad[sources_at + 12..sources_at + 16].copy_from_slice(&2u32.to_le_bytes());
    reseal(&mut bad);
    let (location, text) = message(&bad, Format::Gcsr);
    assert_eq!(location, Location::Byte((reverse_at) as u64));
    assert!(text.contains("does not hold the same edges"), "{text}");
}

#[test]
fn real_weights_round_trip_through_every_format_that_holds_them() {
    use grail_graph::builder::{BuildOptions, EdgeList, build};
    let triples = [(0, 1, 0.1f32), (1, 2, -2.5), (2, 0, 1e-30), (2, 2, 3.0e38), (0, 1, 0.3)];
    let graph = build(EdgeList::from_real_triples(3, &triples).unwrap(), &BuildOptions::AS_GIVEN).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for name in ["g.gcsr", "g.mtx", "g.wel", "g.mtx.gz"] {
        let path = dir.path().join(name);
        grail_graph::io::write_graph(&graph, &path, None, &grail_graph::progress::NoProgress).unwrap();
        let back = grail_graph::io::read_graph(&path, &Default::default(), &grail_graph::progress::NoProgress).unwrap();
        assert_eq!(back.out().real_weights(), graph.out().real_weights(), "{name}");
        assert_eq!(back.out().targets(), graph.out().targets(), "{name}");
    }
    for name in ["g.gr", "g.galois", "g.graph"] {
        let err =
            grail_graph::io::write_graph(&graph, &dir.path().join(name), None, &grail_graph::progress::NoProgress)
                .unwrap_err()
                .to_string();
        assert!(err.contains("weights are real"), "{name}: {err}");
        assert!(!dir.path().join(name).exists());
    }
    // Sorting and deduplicating keep the lightest parallel edge by value.
    let simple = build(EdgeList::from_real_triples(3, &triples).unwrap(), &BuildOptions::UNDIRECTED).unwrap();
    let w = |u: u32, v: u32| {
        let csr = simple.out();
        let at = csr.edge_range(u).find(|&e| csr.targets()[e] == v).unwrap();
        csr.real_weights().unwrap()[at]
    };
    assert_eq!((w(0, 1), w(1, 0), w(1, 2), w(0, 2)), (0.1, 0.1, -2.5, 1e-30));
}

/// A `.gcsr` file may hold any `f32` bits, but NaN and infinities are refused as every other
/// reader refuses them (no text format could write them back), naming the edge and its byte.
#[test]
fn gcsr_refuses_weights_that_are_not_finite() {
    use grail_graph::Csr;
    let triples = [(0, 1, 1.0f32), (0, 2, 2.5), (1, 2, 2.0)];
    let graph = build(EdgeList::from_real_triples(3, &triples).unwrap(), &BuildOptions::AS_GIVEN).unwrap();
    let bytes = encode(&graph, Format::Gcsr);
    let weights_at = 48 + 8 * 4 + 16;
    assert_eq!(&bytes[weights_at + 4..weights_at + 8], &2.5f32.to_le_bytes());
    for (value, shown) in [(f32::INFINITY, "inf"), (f32::NEG_INFINITY, "-inf"), (f32::NAN, "NaN")] {
        let mut bad = bytes.clone();
        bad[weights_at + 4..weights_at + 8].copy_from_slice(&value.to_le_bytes());
        reseal(&mut bad);
        let (location, text) = message(&bad, Format::Gcsr);
        assert_eq!(location, Location::Byte((weights_at + 4) as u64), "{text}");
        assert_eq!(text, format!("edge 1 (node 0 -> 2) weighs {shown}: real weights must be finite numbers"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.gcsr");
        std::fs::write(&path, &bad).unwrap();
        let err = read_graph(&path, &ReadOptions::default(), &NoProgress).unwrap_err().to_string();
        let named = format!("bad.gcsr: byte {}: edge 1 (node 0 -> 2) weighs {shown}", weights_at + 4);
        assert!(err.contains(&named), "{err}");
    }
    // The reverse CSR's weights too: node 2's in-edges come from 0 (2.5) and 1 (2.0).
    let mut with_reverse = graph.clone();
    with_reverse.build_reverse();
    let bytes = encode(&with_reverse, Format::Gcsr);
    // After the out-CSR (offsets, targets, weights), the reverse CSR's offsets and sources.
    let reverse_weights_at = (weights_at + 16) + 8 * 4 + 16;
    assert_eq!(&bytes[reverse_weights_at + 8..reverse_weights_at + 12], &2.0f32.to_le_bytes());
    let mut bad = bytes.clone();
    bad[reverse_weights_at + 8..reverse_weights_at + 12].copy_from_slice(&f32::INFINITY.to_le_bytes());
    reseal(&mut bad);
    let (location, text) = message(&bad, Format::Gcsr);
    assert_eq!(location, Location::Byte((reverse_weights_at + 8) as u64), "{text}");
    assert!(text.contains("in-edge 2 (node 2 <- 1) weighs inf"), "{text}");
    // Nor can such a weight get into a graph any other way, to be written where it cannot be read.
    let err = EdgeList::from_real_triples(2, &[(0, 1, 1.0), (1, 0, f32::INFINITY)]).unwrap_err().to_string();
    assert!(err.contains("edge 1 (1 -> 0) weighs inf: real weights must be finite"), "{err}");
    let err = Csr::from_parts_real(vec![0, 1, 1], vec![1], vec![f32::NEG_INFINITY]).unwrap_err().to_string();
    assert!(err.contains("the weight of edge 0 is -inf"), "{err}");
    let mut edges = EdgeList::from_real_triples(2, &[(0, 1, 1.0), (1, 0, 2.0)]).unwrap();
    edges.weights.as_mut().unwrap()[1] = f32::INFINITY.to_bits();
    let err = build(edges, &BuildOptions::AS_GIVEN).unwrap_err().to_string();
    assert!(err.contains("edge 1 (1 -> 0) weighs inf"), "{err}");
}

#[test]
fn a_directory_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let error = grail_graph::io::read_graph(dir.path(), &Default::default(), &grail_graph::NoProgress).unwrap_err();
    assert!(error.to_string().contains("a directory, not a graph file"), "{error}");
}
