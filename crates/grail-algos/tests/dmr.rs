//! The refinement program (`dmr.grail`: Bowyer-Watson with Ruppert's boundary splitting) on the
//! CPU: on random Delaunay meshes, what it leaves is a valid Delaunay triangulation of the same
//! area with no angle below the bound, checked by grail-mesh's independent verifier.

use grail_algos::Target;
use grail_algos::dmr::refine;

#[test]
fn refinement_leaves_a_valid_delaunay_mesh_without_bad_triangles() {
    for (count, seed, bound) in [(30, 1, 30.0), (200, 2, 30.0), (1000, 3, 30.0), (3000, 4, 30.0), (500, 5, 20.0)] {
        let mesh = grail_mesh::generate::random_points(count, 1.0, seed).unwrap();
        let before = grail_mesh::verify::check(&mesh, bound, None);
        assert!(before.bad > 0);
        // The CPU runs the program on one thread for now (see grail_algos::dmr::refine).
        let refined = refine(&mesh, bound, Target::Cpu, 0, 1).unwrap();
        let after = grail_mesh::verify::check(&refined.mesh, bound, Some(before.area));
        assert!(after.is_valid(), "{count} points: {:?}", after.problems);
        assert_eq!(after.bad, 0, "{count} points: {} bad before, {} after", before.bad, after.bad);
        assert!(after.triangles > before.triangles);
    }
    assert!(refine(&grail_mesh::generate::random_points(10, 1.0, 1).unwrap(), 50.0, Target::Cpu, 0, 1).is_err());
}
