//! The text formats (DIMACS, Matrix Market, edge lists, METIS): every kind of malformed input is
//! rejected with its line and a message naming what was expected and found; random graphs
//! round-trip through each format (plain and gzip) within the format's limits; and no input,
//! however broken, makes a parser panic.

use grail_graph::io::RealWeights;
use grail_graph::io::{Format, ReadOptions, parse_graph, read_graph, write_graph};
use grail_graph::{BuildOptions, EdgeList, Graph, GraphError, Location, NoProgress, ParseError, build};
use proptest::prelude::*;

const TEXT_FORMATS: [Format; 5] =
    [Format::Dimacs, Format::MatrixMarket, Format::EdgeList, Format::WeightedEdgeList, Format::Metis];

fn parse(text: &str, format: Format) -> Result<Graph, ParseError> {
    parse_graph(text.as_bytes(), format, &BuildOptions::AS_GIVEN, &NoProgress)
}

/// Asserts that `text` fails to parse at `location` with a message containing `needle`.
#[track_caller]
fn rejects(format: Format, text: &str, location: Location, needle: &str) {
    match parse(text, format) {
        Ok(graph) => panic!("{format} accepted {text:?} as {graph:?}"),
        Err(err) => {
            assert_eq!(err.location, location, "{err}");
            assert!(err.message.contains(needle), "message {:?} lacks {needle:?}", err.message);
        }
    }
}

/// The adjacency of a graph as (source, target, weight) in CSR order.
fn triples(graph: &Graph) -> Vec<(u32, u32, u32)> {
    let csr = graph.out();
    (0..csr.num_nodes()).flat_map(|u| csr.weighted_neighbors(u).map(move |(v, w)| (u, v, w))).collect()
}

fn graph_of(n: u32, triples: &[(u32, u32, u32)], weighted: bool) -> Graph {
    let mut edges = EdgeList::from_triples(n, triples);
    if !weighted {
        edges.weights = None;
    }
    build(edges, &BuildOptions::AS_GIVEN).unwrap()
}

// ---------------------------------------------------------------------------------------------
// DIMACS

#[test]
fn dimacs_reads_arcs_in_order() {
    let graph = parse("c a comment\np sp 3 3\nc more\n\na 1 2 7\na 3 1 0\r\na 1 3 4294967295", Format::Dimacs).unwrap();
    assert_eq!(graph.num_nodes(), 3);
    assert_eq!(triples(&graph), vec![(0, 1, 7), (0, 2, u32::MAX), (2, 0, 0)]);
}

#[test]
fn dimacs_rejects_malformed_input() {
    let f = Format::Dimacs;
    rejects(f, "c only comments\n", Location::Whole, "no problem line 'p sp N M'");
    rejects(f, "", Location::Whole, "no problem line");
    rejects(f, "c x\na 1 2 3\np sp 2 1\n", Location::Line(2), "arc line before the problem line");
    rejects(f, "p sp 2 2\na 1 2 3\n", Location::Whole, "header says 2 arcs, but the file has 1");
    rejects(f, "p sp 2 0\na 1 2 3\n", Location::Whole, "header says 0 arcs, but the file has 1");
    rejects(f, "p sp 5 1\n\na 0 2 1\n", Location::Line(3), "node id 0 is out of range 1..=5 (ids are 1-based)");
    rejects(f, "p sp 5 1\na 1 6 1\n", Location::Line(2), "node id 6 is out of range 1..=5");
    rejects(f, "p sp 5 1\na 1 x12 1\n", Location::Line(2), "expected a node id, found 'x12'");
    rejects(f, "p sp 5 1\na 1 2 5000000000\n", Location::Line(2), "weight 5000000000 does not fit in 32 bits");
    rejects(f, "p sp 5 1\na 1 2 99999999999999999999999\n", Location::Line(2), "does not fit in 32 bits");
    rejects(f, "p sp 5 1\na 1 2 -3\n", Location::Line(2), "found '-3': negative numbers are not allowed");
    rejects(f, "p sp 5 1\na 1 2 3.5\n", Location::Line(2), "expected a weight, found '3.5'");
    rejects(f, "p sp 5 1\na 1 2\n", Location::Line(2), "expected a weight, found the end of the line");
    rejects(f, "p sp 5 1\na 1 2 3 4\n", Location::Line(2), "after the weight of 'a U V W', found '4'");
    rejects(f, "p sp 5 1\nc\np sp 5 1\na 1 2 3\n", Location::Line(3), "a second problem line");
    rejects(f, "p sp 5 1\nx 1 2 3\n", Location::Line(2), "expected an arc 'a U V W' or a comment 'c ...', found 'x'");
    rejects(f, "p sp 5 1\narc 1 2 3\n", Location::Line(2), "found 'arc'");
    rejects(f, "p max 5 1\n", Location::Line(1), "expected problem type 'sp' (shortest path), found 'max'");
    rejects(f, "p sp five 1\n", Location::Line(1), "expected the node count N of 'p sp N M', found 'five'");
    rejects(f, "p sp 5\n", Location::Line(1), "expected the arc count M of 'p sp N M', found the end of the line");
    rejects(f, "p sp 5000000000 0\n", Location::Line(1), "5000000000 nodes is more than the 4294967295");
    rejects(f, "hello\n", Location::Line(1), "found 'hello'");
}

// ---------------------------------------------------------------------------------------------
// Matrix Market

#[test]
fn mtx_reads_every_supported_variant() {
    let general = "%%MatrixMarket matrix coordinate integer general\n% c\n\n2 3 2\n1 3 5\n2 1 0\n";
    assert_eq!(triples(&parse(general, Format::MatrixMarket).unwrap()), vec![(0, 2, 5), (1, 0, 0)]);
    assert_eq!(parse(general, Format::MatrixMarket).unwrap().num_nodes(), 3);

    let symmetric = "%%matrixmarket MATRIX Coordinate Pattern SYMMETRIC\n3 3 3\n2 1\n3 3\n3 1\n";
    let graph = parse(symmetric, Format::MatrixMarket).unwrap();
    assert!(!graph.is_weighted());
    assert_eq!(triples(&graph), vec![(0, 1, 1), (0, 2, 1), (1, 0, 1), (2, 2, 1), (2, 0, 1)]);

    // Real weights are never changed silently: kept as real weights by default, made integers
    // only when asked (and refused as integers unless rounding or ignoring is asked for).
    let real = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 2.5\n2 1 1e3\n2 2 0.49\n";
    let kept = parse(real, Format::MatrixMarket).unwrap();
    assert_eq!(kept.out().real_weights(), Some(&[2.5, 1000.0, 0.49][..]));
    let try_with = |text: &str, how| {
        grail_graph::io::parse_graph_with(
            text.as_bytes(),
            Format::MatrixMarket,
            &BuildOptions::AS_GIVEN,
            how,
            &NoProgress,
        )
    };
    let refused = try_with(real, RealWeights::Refuse).unwrap_err();
    assert_eq!(refused.location, Location::Line(3));
    assert!(
        refused.message.contains("value 2.5 is not a whole number")
            && refused.message.contains("round (nearest integer)")
    );
    let with = |text: &str, how| try_with(text, how).unwrap();
    assert_eq!(triples(&with(real, RealWeights::Round)), vec![(0, 1, 3), (1, 0, 1000), (1, 1, 0)]);
    // Scaled: the smallest positive weight (0.49) becomes 1, the rest keep their ratios.
    assert_eq!(triples(&with(real, RealWeights::Scale)), vec![(0, 1, 5), (1, 0, 2041), (1, 1, 1)]);
    let ignored = with(real, RealWeights::Ignore);
    assert!(!ignored.is_weighted());
    assert_eq!(ignored.num_edges(), 3);
    let double = real.replace("real", "double");
    assert_eq!(with(&double, RealWeights::Round), with(real, RealWeights::Round));
    // Whole real values need no asking to become integers.
    let whole = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.0\n";
    assert_eq!(triples(&with(whole, RealWeights::Refuse)), vec![(0, 1, 3)]);
    // A .wel file with a fractional weight has real weights; whole ones stay integers.
    let wel = |text: &str, how| {
        grail_graph::io::parse_graph_with(
            text.as_bytes(),
            Format::WeightedEdgeList,
            &BuildOptions::AS_GIVEN,
            how,
            &NoProgress,
        )
    };
    let reals = wel("0 1 2\n1 0 0.25\n", RealWeights::Keep).unwrap();
    assert_eq!(reals.out().real_weights(), Some(&[2.0, 0.25][..]));
    assert_eq!(triples(&wel("0 1 2\n1 0 7\n", RealWeights::Keep).unwrap()), vec![(0, 1, 2), (1, 0, 7)]);
    assert_eq!(triples(&wel("0 1 2\n1 0 0.25\n", RealWeights::Round).unwrap()), vec![(0, 1, 2), (1, 0, 0)]);
    assert!(!wel("0 1 2\n1 0 0.25\n", RealWeights::Ignore).unwrap().is_weighted());
    let too_big = wel("0 1 4294967296\n", RealWeights::Keep).unwrap_err();
    assert!(too_big.message.contains("does not fit in 32 bits"), "{}", too_big.message);
    let bad = wel("0 1 2\n1 0 x\n", RealWeights::Keep).unwrap_err();
    assert_eq!(bad.location, Location::Line(2));
}

#[test]
fn mtx_rejects_malformed_input() {
    let f = Format::MatrixMarket;
    let head = |field: &str| format!("%%MatrixMarket matrix coordinate {field} general\n");
    rejects(f, "3 3 1\n1 2\n", Location::Line(1), "expected the header '%%MatrixMarket matrix coordinate");
    rejects(f, "", Location::Line(1), "expected the header");
    rejects(
        f,
        "%%MatrixMarket matrix array real general\n2 2\n",
        Location::Line(1),
        "unsupported Matrix Market variant 'array'",
    );
    rejects(f, &head("complex"), Location::Line(1), "unsupported Matrix Market variant 'complex'");
    rejects(
        f,
        "%%MatrixMarket matrix coordinate real hermitian\n",
        Location::Line(1),
        "unsupported Matrix Market variant 'hermitian'",
    );
    rejects(f, "%%MatrixMarket matrix coordinate real skew-symmetric\n", Location::Line(1), "variant 'skew-symmetric'");
    rejects(f, "%%MatrixMarket vector coordinate real general\n", Location::Line(1), "variant 'vector'");
    rejects(
        f,
        "%%MatrixMarket matrix coordinate real\n",
        Location::Line(1),
        "expected the symmetry (general or symmetric)",
    );
    rejects(f, "%%MatrixMarket matrix coordinate bits general\n", Location::Line(1), "found 'bits'");
    rejects(f, &head("pattern"), Location::Line(2), "expected the size line 'ROWS COLS NNZ'");
    rejects(f, &(head("pattern") + "% c\n3 3\n"), Location::Line(3), "expected the entry count");
    rejects(f, &(head("pattern") + "3 3 2\n1 2\n"), Location::Whole, "header says 2 entries, but the file has 1");
    rejects(
        f,
        &(head("pattern") + "3 2 1\n4 1\n"),
        Location::Line(3),
        "row index 4 is out of range 1..=3 (ids are 1-based)",
    );
    rejects(f, &(head("pattern") + "3 2 1\n1 3\n"), Location::Line(3), "column index 3 is out of range 1..=2");
    rejects(f, &(head("pattern") + "3 3 1\n0 1\n"), Location::Line(3), "row index 0 is out of range");
    rejects(
        f,
        &(head("pattern") + "3 3 1\n1 2 7\n"),
        Location::Line(3),
        "after the column index of a pattern entry, found '7'",
    );
    rejects(
        f,
        &(head("integer") + "3 3 1\n1 2\n"),
        Location::Line(3),
        "expected an integer value, found the end of the line",
    );
    rejects(f, &(head("integer") + "3 3 1\n1 2 -7\n"), Location::Line(3), "negative numbers are not allowed");
    rejects(
        f,
        &(head("integer") + "3 3 1\n1 2 4294967296\n"),
        Location::Line(3),
        "integer value 4294967296 does not fit in 32 bits",
    );
    rejects(f, &(head("integer") + "3 3 1\n1 2 1.5\n"), Location::Line(3), "expected an integer value, found '1.5'");
    rejects(f, &(head("real") + "3 3 1\n1 2 NaN\n"), Location::Line(3), "value NaN cannot be a weight");
    rejects(f, &(head("real") + "3 3 1\n1 2 inf\n"), Location::Line(3), "beyond the range of grail's real weights");
    rejects(f, &(head("real") + "3 3 1\n1 2 1e-60\n"), Location::Line(3), "too small for grail's real weights");
    rejects(f, &(head("real") + "3 3 1\n1 2 one\n"), Location::Line(3), "expected a real value, found 'one'");
    rejects(
        f,
        &(head("real") + "3 x 1\n"),
        Location::Line(2),
        "expected the column count of 'ROWS COLS NNZ', found 'x'",
    );
}

// ---------------------------------------------------------------------------------------------
// Edge lists

#[test]
fn edge_lists_read_comments_blanks_and_tabs() {
    let graph = parse("# SNAP header\n% also a comment\n\n0\t3\n  2 1  \r\n\n3 3\n", Format::EdgeList).unwrap();
    assert_eq!(graph.num_nodes(), 4);
    assert!(!graph.is_weighted());
    assert_eq!(triples(&graph), vec![(0, 3, 1), (2, 1, 1), (3, 3, 1)]);
    let graph = parse("0 1 5\n1 0 4294967295", Format::WeightedEdgeList).unwrap();
    assert_eq!(triples(&graph), vec![(0, 1, 5), (1, 0, u32::MAX)]);
    let empty = parse("# nothing\n", Format::EdgeList).unwrap();
    assert_eq!((empty.num_nodes(), empty.num_edges()), (0, 0));
}

#[test]
fn edge_lists_reject_malformed_input() {
    let (el, wel) = (Format::EdgeList, Format::WeightedEdgeList);
    rejects(el, "0 1\n1 x\n", Location::Line(2), "expected a node id, found 'x'");
    rejects(
        el,
        "0 1\n# c\n1 2 3\n",
        Location::Line(3),
        "expected 2 fields (source target), found 3; for weighted edges use --format wel",
    );
    rejects(el, "0 1\n7\n", Location::Line(2), "expected 2 fields (source target), found 1");
    rejects(el, "0 1 2 3\n", Location::Line(1), "found 4");
    rejects(el, "0 -1\n", Location::Line(1), "found '-1': negative numbers are not allowed");
    rejects(
        el,
        "0 4294967295\n",
        Location::Line(1),
        "node id 4294967295 is out of range: ids must be below 4294967295",
    );
    rejects(el, "0 1.0\n", Location::Line(1), "expected a node id, found '1.0'");
    rejects(wel, "0 1 2\n1 2\n", Location::Line(2), "expected 3 fields (source target weight), found 2");
    rejects(wel, "0 1 5000000000\n", Location::Line(1), "weight 5000000000 does not fit in 32 bits");
    rejects(wel, "0 1 w\n", Location::Line(1), "expected a weight, found 'w'");
    rejects(wel, "0 1 -2\n1 2 x\n", Location::Line(2), "found 'x'");
}

/// A `.wel` file's errors are those of its kind: a file with a negative or fractional weight
/// anywhere has real weights, and its first error is the first line the real rules refuse, not
/// the first real weight (which the integer rules refuse).
#[test]
fn weighted_edge_lists_name_the_first_error_of_their_kind() {
    let wel = Format::WeightedEdgeList;
    rejects(wel, "0 1 2\n1 2 2\n2 3 1.5\n3 4 zz\n", Location::Line(4), "found 'zz'");
    rejects(wel, "0 1 1.5\n1 2 x\n", Location::Line(2), "found 'x'");
    rejects(wel, "0 1 1.5\n1 2 nan\n", Location::Line(2), "value nan cannot be a weight");
    rejects(wel, "0 1 1.5\n1 2 inf\n", Location::Line(2), "value inf is beyond the range");
    rejects(wel, "0 1 1.5\n1 2 -inf\n", Location::Line(2), "value -inf is beyond the range");
    rejects(wel, "0 1 1.5\n1 2 1e-60\n", Location::Line(2), "too small for grail's real weights");
    rejects(wel, "0 1 1.5\n1 2\n", Location::Line(2), "expected 3 fields (source target weight), found 2");
    rejects(wel, "0 1 1.5\n1 x 2\n", Location::Line(2), "expected a node id, found 'x'");
    rejects(wel, "0 1 -1\n1 2 2 3\n", Location::Line(2), "found 4");
    // The error may come before the weight that makes the file real.
    rejects(wel, "0 1 2\n1 2 zz\n2 3 1.5\n", Location::Line(2), "found 'zz'");
    // 2^32 is no integer weight, but is a real one: in a file of reals, the error is further on.
    rejects(wel, "0 1 5000000000\n1 2 zz\n2 3 0.5\n", Location::Line(2), "found 'zz'");
    // In a file of integers, the first error is the integer rules' first.
    rejects(wel, "0 1 5000000000\n1 2 zz\n", Location::Line(1), "weight 5000000000 does not fit in 32 bits");
    rejects(wel, "0 1 2.0\n1 2 5000000000\n", Location::Line(2), "weight 5000000000 does not fit in 32 bits");
    rejects(wel, "0 1 2\n1 2 nan\n", Location::Line(2), "found 'nan'");
    rejects(wel, "0 1 2\n1 2 inf\n", Location::Line(2), "found 'inf'");
    rejects(wel, "0 1 -0\n", Location::Line(1), "found '-0': negative numbers are not allowed");
}

/// A negative weight makes a `.wel` file's weights real, as a fractional one does, wherever it
/// is: the file's kind never depends on the order of its lines. Whole numbers written as floats
/// are integers.
#[test]
fn weighted_edge_lists_read_weights_by_what_they_all_are() {
    let wel = |text: &str, how| {
        grail_graph::io::parse_graph_with(
            text.as_bytes(),
            Format::WeightedEdgeList,
            &BuildOptions::AS_GIVEN,
            how,
            &NoProgress,
        )
    };
    let keep = |text: &str| wel(text, RealWeights::Keep).unwrap();
    assert_eq!(keep("0 1 -5\n1 2 3\n").out().real_weights(), Some(&[-5.0, 3.0][..]));
    assert_eq!(keep("0 1 3\n1 2 -5\n").out().real_weights(), Some(&[3.0, -5.0][..]));
    assert_eq!(keep("0 1 2\n1 2 1.5\n2 0 -1\n").out().real_weights(), Some(&[2.0, 1.5, -1.0][..]));
    assert_eq!(keep("0 1 -1\n1 2 1.5\n").out().real_weights(), Some(&[-1.0, 1.5][..]));
    // A fraction that rounds to a whole f32 still makes the weights real.
    assert_eq!(keep("0 1 16777217.5\n").out().real_weights(), Some(&[16777218.0][..]));
    // 2^32 and more are real weights among real ones.
    assert_eq!(keep("0 1 5000000000\n1 2 0.5\n").out().real_weights(), Some(&[5e9, 0.5][..]));
    let integers = keep("0 1 2.0\n1 2 1e3\n2 0 7\n3 0 4294967295.0\n");
    assert!(!integers.out().has_real_weights());
    assert_eq!(triples(&integers), vec![(0, 1, 2), (1, 2, 1000), (2, 0, 7), (3, 0, u32::MAX)]);
    // Asked for integers, a negative weight is refused wherever it is.
    for text in ["0 1 -5\n1 2 3\n", "0 1 2\n1 2 -1\n2 0 1.5\n"] {
        for how in [RealWeights::Refuse, RealWeights::Round, RealWeights::Scale] {
            let err = wel(text, how).unwrap_err();
            assert!(err.message.contains("integer weights are non-negative"), "{how:?}: {}", err.message);
        }
    }
}

/// Whole negative real weights, written as `-2`, read back as the real weights they were.
#[test]
fn weighted_edge_lists_round_trip_whole_negative_real_weights() {
    let edges = EdgeList::from_real_triples(3, &[(0, 1, -2.0), (1, 2, 3.0), (2, 0, -0.5)]).unwrap();
    let graph = build(edges, &BuildOptions::AS_GIVEN).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.wel");
    write_graph(&graph, &path, None, &NoProgress).unwrap();
    let back = read_graph(&path, &ReadOptions::default(), &NoProgress).unwrap();
    assert_eq!(back.out().real_weights(), graph.out().real_weights());
    let whole = EdgeList::from_real_triples(2, &[(0, 1, -2.0), (1, 0, 3.0)]).unwrap();
    write_graph(&build(whole, &BuildOptions::AS_GIVEN).unwrap(), &path, None, &NoProgress).unwrap();
    let back = read_graph(&path, &ReadOptions::default(), &NoProgress).unwrap();
    assert_eq!(back.out().real_weights(), Some(&[-2.0, 3.0][..]));
}

/// `--weights scale` refuses a range of weights too wide for 32 bits at the largest weight's line.
#[test]
fn scaling_names_the_largest_weights_line() {
    for format in [Format::MatrixMarket, Format::WeightedEdgeList] {
        let head = if format == Format::MatrixMarket {
            "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1e-9\n2 3 1e9\n3 1 1\n"
        } else {
            "0 1 1e-9\n1 2 1e9\n2 0 1\n"
        };
        let line = if format == Format::MatrixMarket { 4 } else { 2 };
        let err = grail_graph::io::parse_graph_with(
            head.as_bytes(),
            format,
            &BuildOptions::AS_GIVEN,
            RealWeights::Scale,
            &NoProgress,
        )
        .unwrap_err();
        assert_eq!(err.location, Location::Line(line), "{format}: {err}");
        assert!(err.message.contains("the largest weight is 1.000e18 times the smallest"), "{err}");
    }
}

// ---------------------------------------------------------------------------------------------
// METIS

#[test]
fn metis_reads_blank_lines_as_vertices() {
    // Vertex 2 has no neighbours; the trailing blank lines after vertex 4 are ignored.
    let text = "% comment\n4 2\n4\n\n4\n% between\n1 3\n\n\n";
    let graph = parse(text, Format::Metis).unwrap();
    assert_eq!(graph.num_nodes(), 4);
    assert!(!graph.is_weighted());
    assert_eq!(triples(&graph), vec![(0, 3, 1), (2, 3, 1), (3, 0, 1), (3, 2, 1)]);
    assert!(graph.node_props.get::<u32>("vertex_weight").is_none());
}

#[test]
fn metis_reads_weights_and_sizes() {
    let text = "3 2 111 2\n9 5 6 2 7\n9 8 0 1 7 3 4\n1 2 0 2 4\n";
    let graph = parse(text, Format::Metis).unwrap();
    assert_eq!(triples(&graph), vec![(0, 1, 7), (1, 0, 7), (1, 2, 4), (2, 1, 4)]);
    assert_eq!(graph.node_props.get::<u32>("vertex_weight"), Some(&[5, 8, 2][..]));
    let graph = parse("2 1 1\n2 3\n1 3\n", Format::Metis).unwrap();
    assert_eq!(triples(&graph), vec![(0, 1, 3), (1, 0, 3)]);
    let graph = parse("2 1 10\n4 2\n5 1\n", Format::Metis).unwrap();
    assert_eq!(graph.node_props.get::<u32>("vertex_weight"), Some(&[4, 5][..]));
}

#[test]
fn metis_rejects_malformed_input() {
    let f = Format::Metis;
    rejects(f, "% only a comment\n", Location::Whole, "no header line 'N M [FMT [NCON]]'");
    rejects(f, "3 2\n2\n1 3\n", Location::Whole, "header says 3 vertices, but the file has 2 vertex lines");
    rejects(
        f,
        "3 2\n2\n1 3\n2 1\n",
        Location::Whole,
        "header says 2 edges, so 4 neighbour entries, but the vertex lines list 5",
    );
    rejects(f, "3 1\n2\n1 4\n\n", Location::Line(3), "neighbour id 4 is out of range 1..=3 (ids are 1-based)");
    rejects(f, "3 1\n2\n1 0\n\n", Location::Line(3), "neighbour id 0 is out of range");
    rejects(f, "2 1\n2\nx\n", Location::Line(3), "expected a neighbour id, found 'x'");
    rejects(f, "2 1 2\n", Location::Line(1), "expected FMT of up to 3 binary digits (like 011), found '2'");
    rejects(f, "2 1 0001\n", Location::Line(1), "found '0001'");
    rejects(f, "2 1 10 0\n", Location::Line(1), "NCON is 0");
    rejects(f, "2 1 0 1 9\n", Location::Line(1), "after the header 'N M [FMT [NCON]]', found '9'");
    rejects(f, "two 1\n", Location::Line(1), "expected the vertex count N of 'N M [FMT [NCON]]', found 'two'");
    rejects(f, "2 1\n2\n1\n2\n", Location::Line(4), "header says 2 vertices, but this is vertex line 3");
    rejects(f, "2 1 1\n2 5\n1\n", Location::Line(3), "expected an edge weight, found the end of the line");
    rejects(f, "2 1 1\n2 5000000000\n1 1\n", Location::Line(2), "edge weight 5000000000 does not fit in 32 bits");
    rejects(f, "2 1 10\n1 2\n\n", Location::Line(3), "expected a vertex weight, found an empty vertex line");
    rejects(f, "2 1 10 2\n1 2 2\n1\n", Location::Line(3), "expected a vertex weight, found the end of the line");
    rejects(f, "2 1 100\n\n1\n", Location::Line(2), "expected a vertex size, found an empty vertex line");
    rejects(f, "5000000000 0\n", Location::Line(1), "more than the 4294967295");
    rejects(f, "0 0\n\n5\n", Location::Line(3), "neighbour id 5 is out of range: the header says there are none");
}

#[test]
fn metis_writes_only_simple_symmetric_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.graph");
    let cases = [
        (graph_of(2, &[(0, 1, 1)], false), "not symmetric"),
        (
            graph_of(2, &[(0, 1, 1), (1, 0, 2)], true),
            "not symmetric (some edge u -> v has no v -> u with the same weight)",
        ),
        (graph_of(2, &[(0, 1, 1), (1, 0, 1), (1, 1, 1)], false), "node 1 has a self-loop"),
        (graph_of(2, &[(0, 1, 1), (1, 0, 1), (0, 1, 1), (1, 0, 1)], false), "node 0 has duplicate edges"),
    ];
    for (graph, needle) in cases {
        let err = write_graph(&graph, &path, None, &NoProgress).unwrap_err();
        assert!(matches!(err, GraphError::Invalid(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(needle), "{message}");
        assert!(message.contains("grail convert --symmetrize --dedup --no-self-loops"), "{message}");
        assert!(!path.exists());
    }
}

#[test]
fn metis_writer_output() {
    let mut graph = graph_of(3, &[(0, 1, 4), (1, 0, 4), (1, 2, 6), (2, 1, 6)], true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.graph");
    write_graph(&graph, &path, None, &NoProgress).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "3 2 001\n2 4\n1 4 3 6\n2 6\n");
    graph.node_props.insert_values("vertex_weight", vec![7u32, 8, 9]).unwrap();
    write_graph(&graph, &path, None, &NoProgress).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "3 2 011\n7 2 4\n8 1 4 3 6\n9 2 6\n");
}

// ---------------------------------------------------------------------------------------------
// Files: errors name the path; gzip.

#[test]
fn file_errors_name_the_path_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("bad.gr", "p sp 3 1\nc\na 1 9 1\n", "line 3: node id 9 is out of range 1..=3"),
        (
            "bad.mtx",
            "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 x\n",
            "line 3: expected a column index",
        ),
        ("bad.el", "0 1\n0 1 2\n", "line 2: expected 2 fields"),
        ("bad.wel", "0 1 2\n0 1 x\n", "line 2: expected a weight, found 'x'"),
        ("bad.graph", "2 1\n2\n1 7\n", "line 3: neighbour id 7"),
        ("short.gr", "p sp 3 2\na 1 2 1\n", "whole file: header says 2 arcs, but the file has 1"),
    ];
    for (name, text, needle) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = read_graph(&path, &ReadOptions::default(), &NoProgress).unwrap_err();
        assert!(matches!(err, GraphError::Malformed { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains(needle), "{message} lacks {needle}");
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn gzip_reads_like_plain_and_truncation_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("p sp 100 400\n");
    for i in 0..400 {
        text.push_str(&format!("a {} {} {}\n", i % 100 + 1, (i * 37) % 100 + 1, i * 11));
    }
    let plain = dir.path().join("g.gr");
    let packed = dir.path().join("g.gr.gz");
    std::fs::write(&plain, &text).unwrap();
    let compressed = gzip(text.as_bytes());
    std::fs::write(&packed, &compressed).unwrap();
    let options = ReadOptions::default();
    let a = read_graph(&plain, &options, &NoProgress).unwrap();
    let b = read_graph(&packed, &options, &NoProgress).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.num_edges(), 400);

    let truncated = dir.path().join("cut.gr.gz");
    std::fs::write(&truncated, &compressed[..compressed.len() / 2]).unwrap();
    let err = read_graph(&truncated, &options, &NoProgress).unwrap_err().to_string();
    assert!(err.contains(&truncated.display().to_string()), "{err}");
    assert!(err.contains("gzip data is corrupt or truncated"), "{err}");
}

#[test]
fn formats_are_detected_from_names_and_contents() {
    let dir = tempfile::tempdir().unwrap();
    let graph = graph_of(3, &[(0, 1, 2), (1, 0, 2), (1, 2, 3), (2, 1, 3)], true);
    for format in TEXT_FORMATS {
        let path = dir.path().join(format!("g.{}", format.extension()));
        write_graph(&graph, &path, None, &NoProgress).unwrap();
        let back = read_graph(&path, &ReadOptions::default(), &NoProgress).unwrap();
        let expected =
            if format == Format::EdgeList { graph.clone().into_csr().without_weights() } else { graph.out().clone() };
        assert_eq!(back.out(), &expected, "{format}");
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips

/// A random graph: (nodes, triples, weighted).
fn random_graphs() -> impl Strategy<Value = (u32, Vec<(u32, u32, u32)>, bool)> {
    (0u32..40, any::<bool>()).prop_flat_map(|(n, weighted)| {
        let edge = (0..n.max(1), 0..n.max(1), prop_oneof![0u32..10, any::<u32>()]);
        let edges = proptest::collection::vec(edge, if n == 0 { 0..1 } else { 0..120 });
        (Just(n), edges, Just(weighted))
    })
}

fn round_trip(graph: &Graph, format: Format, compressed: bool) -> Graph {
    let dir = tempfile::tempdir().unwrap();
    let gz = if compressed { ".gz" } else { "" };
    let path = dir.path().join(format!("graph.{}{gz}", format.extension()));
    write_graph(graph, &path, Some(format), &NoProgress).unwrap();
    if compressed {
        assert!(std::fs::read(&path).unwrap().starts_with(&[0x1f, 0x8b]));
    }
    read_graph(
        &path,
        &ReadOptions { format: Some(format), build: BuildOptions::AS_GIVEN, ..Default::default() },
        &NoProgress,
    )
    .unwrap()
}

/// What reading back a written graph gives, given what each format can hold.
fn expected_back(n: u32, triples: &[(u32, u32, u32)], weighted: bool, format: Format) -> Graph {
    let ones = || triples.iter().map(|&(u, v, _)| (u, v, 1)).collect::<Vec<_>>();
    // Edge lists have no header: the node count is the largest id plus one.
    let listed = triples.iter().map(|&(u, v, _)| u.max(v) + 1).max().unwrap_or(0);
    match format {
        Format::Dimacs if !weighted => graph_of(n, &ones(), true),
        Format::EdgeList => graph_of(listed, triples, false),
        Format::WeightedEdgeList if !weighted => graph_of(listed, &ones(), true),
        Format::WeightedEdgeList => graph_of(listed, triples, true),
        _ => graph_of(n, triples, weighted),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn directed_formats_round_trip((n, triples, weighted) in random_graphs(), compressed in any::<bool>()) {
        let graph = graph_of(n, &triples, weighted);
        for format in [Format::Dimacs, Format::MatrixMarket, Format::EdgeList, Format::WeightedEdgeList] {
            let back = round_trip(&graph, format, compressed);
            prop_assert_eq!(&back, &expected_back(n, &triples, weighted, format), "{}", format);
        }
    }

    #[test]
    fn metis_round_trips_simple_symmetric_graphs(
        (n, triples, weighted) in random_graphs(),
        compressed in any::<bool>(),
        vertex_weights in any::<bool>(),
    ) {
        let mut edges = EdgeList::from_triples(n, &triples);
        if !weighted {
            edges.weights = None;
        }
        let mut graph = build(edges, &BuildOptions::UNDIRECTED).unwrap();
        if vertex_weights {
            let weights = (0..n).map(|u| u.wrapping_mul(2654435761)).collect::<Vec<u32>>();
            graph.node_props.insert_values("vertex_weight", weights).unwrap();
        }
        let back = round_trip(&graph, Format::Metis, compressed);
        prop_assert_eq!(back, graph);
    }
}

// ---------------------------------------------------------------------------------------------
// No panics

/// Whether the input names a number that is valid but large enough to make the graph huge
/// (a node count or id in the millions): such inputs are legal, just too slow for a property
/// test, so they are skipped.
fn names_a_huge_graph(bytes: &[u8]) -> bool {
    bytes.split(|b| !b.is_ascii_digit()).any(|digits| {
        let value = digits.iter().try_fold(0u64, |v, &d| v.checked_mul(10)?.checked_add(u64::from(d - b'0')));
        value.is_some_and(|v| v > 1 << 20 && v <= u64::from(u32::MAX))
    })
}

fn parse_quietly(bytes: &[u8], format: Format) {
    if !names_a_huge_graph(bytes) {
        let _ = parse_graph(bytes, format, &BuildOptions::AS_GIVEN, &NoProgress);
        let _ = parse_graph(bytes, format, &BuildOptions::UNDIRECTED, &NoProgress);
    }
}

/// Bytes drawn mostly from the characters the text formats are made of.
fn texty_bytes() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<u8> =
        b"0123456789   \t\n\n\r-.+e%#cpa sp%%MatrixMarket matrix coordinate general symmetric pattern integer real"
            .to_vec();
    proptest::collection::vec(prop_oneof![4 => proptest::sample::select(alphabet), 1 => any::<u8>()], 0..300)
}

/// A valid file of each format, to mutate.
fn valid_file(format: Format) -> Vec<u8> {
    let graph = graph_of(6, &[(0, 1, 3), (1, 0, 3), (2, 5, 9), (5, 2, 9), (3, 4, 1), (4, 3, 1)], true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("g.{}", format.extension()));
    write_graph(&graph, &path, Some(format), &NoProgress).unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    if format == Format::MatrixMarket {
        bytes.extend_from_slice(b"% trailing comment\n");
    }
    bytes
}

/// Replaces, inserts or deletes bytes of `bytes` at the given positions.
fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(at, kind, byte) in edits {
        let at = at % (bytes.len() + 1);
        match kind % 3 {
            0 if at < bytes.len() => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {}
        }
    }
    bytes
}

fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    let byte = prop_oneof![proptest::sample::select(b"0123456789 \n-%ax".to_vec()), any::<u8>()];
    proptest::collection::vec((any::<usize>(), any::<u8>(), byte), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn dimacs_never_panics(bytes in texty_bytes(), edits in edits()) {
        parse_quietly(&bytes, Format::Dimacs);
        parse_quietly(&[b"p sp 9 3\n".as_slice(), &bytes].concat(), Format::Dimacs);
        parse_quietly(&mutate(valid_file(Format::Dimacs), &edits), Format::Dimacs);
    }

    #[test]
    fn mtx_never_panics(bytes in texty_bytes(), edits in edits()) {
        parse_quietly(&bytes, Format::MatrixMarket);
        let head = b"%%MatrixMarket matrix coordinate real symmetric\n9 9 4\n".as_slice();
        parse_quietly(&[head, &bytes].concat(), Format::MatrixMarket);
        parse_quietly(&mutate(valid_file(Format::MatrixMarket), &edits), Format::MatrixMarket);
    }

    #[test]
    fn edge_lists_never_panic(bytes in texty_bytes(), edits in edits()) {
        parse_quietly(&bytes, Format::EdgeList);
        parse_quietly(&bytes, Format::WeightedEdgeList);
        parse_quietly(&mutate(valid_file(Format::EdgeList), &edits), Format::EdgeList);
        parse_quietly(&mutate(valid_file(Format::WeightedEdgeList), &edits), Format::WeightedEdgeList);
    }

    #[test]
    fn metis_never_panics(bytes in texty_bytes(), edits in edits()) {
        parse_quietly(&bytes, Format::Metis);
        parse_quietly(&[b"9 4 111 2\n".as_slice(), &bytes].concat(), Format::Metis);
        parse_quietly(&mutate(valid_file(Format::Metis), &edits), Format::Metis);
    }
}

#[test]
fn all_text_formats_accept_an_empty_graph() {
    let graph = graph_of(0, &[], false);
    for format in TEXT_FORMATS {
        let back = round_trip(&graph, format, false);
        assert_eq!(back.num_nodes(), 0, "{format}");
        assert_eq!(back.num_edges(), 0, "{format}");
    }
}

#[test]
fn large_graphs_round_trip_across_write_batches() {
    // Enough nodes for many formatting groups and several batches of them.
    let n = 700_000u32;
    let triples: Vec<(u32, u32, u32)> = (0..1_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) % n, (i.wrapping_mul(7919) + 13) % n, i % 1000))
        .collect();
    let directed = graph_of(n, &triples, true);
    for format in [Format::Dimacs, Format::MatrixMarket, Format::WeightedEdgeList] {
        let back = round_trip(&directed, format, false);
        assert_eq!(triples_of_graph(&back), triples_of_graph(&directed), "{format}");
    }
    let undirected = build(EdgeList::from_triples(n, &triples), &BuildOptions::UNDIRECTED).unwrap();
    assert_eq!(round_trip(&undirected, Format::Metis, true), undirected);
}

fn triples_of_graph(graph: &Graph) -> (u32, Vec<(u32, u32, u32)>) {
    (graph.num_nodes(), triples(graph))
}
