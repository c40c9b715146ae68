//! A disjoint-set forest over node ids `0..n`, with path halving and union by size, so that any
//! sequence of operations runs in near-linear time.

use crate::graph::NodeId;

/// Disjoint sets of node ids.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<NodeId>,
    /// The number of elements under each root (meaningless for non-roots).
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets `{0}, ..., {n - 1}`.
    pub fn new(n: u32) -> UnionFind {
        UnionFind { parent: (0..n).collect(), size: vec![1; n as usize] }
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The representative of `x`'s set; halves the path on the way up.
    pub fn find(&mut self, mut x: NodeId) -> NodeId {
        while self.parent[x as usize] != x {
            let grandparent = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grandparent;
            x = grandparent;
        }
        x
    }

    /// Merges the sets of `a` and `b`; returns whether they were distinct.
    pub fn union(&mut self, a: NodeId, b: NodeId) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
        true
    }

    /// Whether `a` and `b` are in the same set.
    pub fn same(&mut self, a: NodeId, b: NodeId) -> bool {
        self.find(a) == self.find(b)
    }

    /// The number of elements in `x`'s set.
    pub fn set_size(&mut self, x: NodeId) -> u32 {
        let root = self.find(x);
        self.size[root as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_and_finds() {
        let mut uf = UnionFind::new(6);
        assert!(uf.union(0, 1));
        assert!(uf.union(2, 3));
        assert!(uf.union(1, 3));
        assert!(!uf.union(0, 2));
        assert!(uf.same(0, 3));
        assert!(!uf.same(0, 4));
        assert_eq!(uf.set_size(2), 4);
        assert_eq!(uf.set_size(5), 1);
        assert_eq!(uf.len(), 6);
    }
}
