//! The binary formats (Galois `.gr`, grail `.gcsr`): round trips, and rejection of every kind of
//! damage with the byte offset named.

use grail_graph::io::{Format, ReadOptions, parse_graph, read_graph, write_graph};
use grail_graph::{BuildOptions, EdgeList, Graph, Location, NoProgress, ParseError, build};
use proptest::prelude::*;

fn encode(graph: &Graph, format: Format) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("g.{}", format.extension()));
    write_graph(graph, &path, Some(format), &NoProgress).unwrap();
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
    bad[8] = 2;
    let (location, text) = message(&bad, Format::Gcsr);
    assert_eq!(location, Location::Byte(8));
    assert!(text.contains("version 2 is not supported"), "{text}");
    let mut bad = bytes.clone();
    bad[12] = 6;
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
