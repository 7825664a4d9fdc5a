//! The timeline: an augmented red-black tree of the queued entities of one cfs_rq
//! (kernel: `tasks_timeline`, lib/rbtree.c with `min_vruntime_cb` / `min_deadline_cb`).
//!
//! The rebalancing follows the Linux algorithm step for step (insert: recolour, or rotate at
//! the parent then at the grandparent; erase: splice the successor in, then the four-case
//! colour fix-up), so the same sequence of inserts and erases gives the same tree shape as in
//! the kernel. That matters for v6.6, whose pick breaks deadline ties by the order in which it
//! walks the tree from the root (fair.md §5.3). From v6.8 the pick returns the first eligible
//! entity in order, which does not depend on the shape.
//!
//! Order: by key (`deadline` from 2227a957e1d5, `vruntime` before), compared on the signed
//! difference (keys wrap); an equal key descends to the right, as `rb_add_cached` does, so among
//! equal keys the earliest inserted is leftmost (fair.md §5.1).
//!
//! Augmentation per node: the subtree minimum of `vruntime` (v6.8+ eligibility search) and of
//! `deadline` (v6.6 heap search), and min/max `slice`.

use crate::sched::{SchedEntity, SeId, NIL};

/// Which key orders the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeOrder {
    /// v6.6–v6.7: by vruntime.
    Vruntime,
    /// v6.8+ (2227a957e1d5): by deadline.
    Deadline,
}

/// Signed "a is before b" on wrapping u64 values (fair.md §0.1).
#[inline]
pub fn before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

#[inline]
fn min_w(a: u64, b: u64) -> u64 {
    if before(b, a) {
        b
    } else {
        a
    }
}

#[inline]
fn key(se: &SchedEntity, order: TreeOrder) -> u64 {
    match order {
        TreeOrder::Vruntime => se.vruntime,
        TreeOrder::Deadline => se.deadline,
    }
}

// Node accessors (colour: true = black).
#[inline]
fn l(s: &[SchedEntity], n: u32) -> u32 {
    s[n as usize].rb_left
}
#[inline]
fn r(s: &[SchedEntity], n: u32) -> u32 {
    s[n as usize].rb_right
}
#[inline]
fn p(s: &[SchedEntity], n: u32) -> u32 {
    s[n as usize].rb_parent
}
#[inline]
fn is_black(s: &[SchedEntity], n: u32) -> bool {
    n == NIL || s[n as usize].rb_black
}
#[inline]
fn is_red(s: &[SchedEntity], n: u32) -> bool {
    !is_black(s, n)
}
#[inline]
fn set_pc(s: &mut [SchedEntity], n: u32, parent: u32, black: bool) {
    s[n as usize].rb_parent = parent;
    s[n as usize].rb_black = black;
}

/// Recomputes the aggregates of one node from itself and its children.
#[inline]
fn update(s: &mut [SchedEntity], n: u32) {
    let (lc, rc) = (l(s, n), r(s, n));
    let e = &s[n as usize];
    let (mut mv, mut md, mut mn, mut mx) = (e.vruntime, e.deadline, e.slice, e.slice);
    for c in [lc, rc] {
        if c != NIL {
            let ce = &s[c as usize];
            mv = min_w(mv, ce.min_vruntime);
            md = min_w(md, ce.min_deadline);
            mn = mn.min(ce.min_slice);
            mx = mx.max(ce.max_slice);
        }
    }
    let e = &mut s[n as usize];
    e.min_vruntime = mv;
    e.min_deadline = md;
    e.min_slice = mn;
    e.max_slice = mx;
}

/// Recomputes aggregates from `n` up to the root.
fn propagate_up(s: &mut [SchedEntity], mut n: u32) {
    while n != NIL {
        update(s, n);
        n = p(s, n);
    }
}

/// `__rb_change_child`: make `parent` (or the root) point to `new` instead of `old`.
fn change_child(s: &mut [SchedEntity], old: u32, new: u32, parent: u32, root: &mut u32) {
    if parent != NIL {
        if l(s, parent) == old {
            s[parent as usize].rb_left = new;
        } else {
            s[parent as usize].rb_right = new;
        }
    } else {
        *root = new;
    }
}

/// `__rb_rotate_set_parents`: `new` takes `old`'s place and colour; `old` becomes its child.
fn rotate_set_parents(s: &mut [SchedEntity], old: u32, new: u32, root: &mut u32, black: bool) {
    let parent = p(s, old);
    let old_black = s[old as usize].rb_black;
    set_pc(s, new, parent, old_black);
    set_pc(s, old, new, black);
    change_child(s, old, new, parent, root);
}

fn rb_insert_color(s: &mut [SchedEntity], mut node: u32, root: &mut u32) {
    let mut parent = p(s, node);
    loop {
        if parent == NIL {
            set_pc(s, node, NIL, true);
            break;
        }
        if is_black(s, parent) {
            break;
        }
        let gparent = p(s, parent);
        let mut tmp = r(s, gparent);
        if parent != tmp {
            // parent is gparent's left child
            if tmp != NIL && is_red(s, tmp) {
                set_pc(s, tmp, gparent, true);
                set_pc(s, parent, gparent, true);
                node = gparent;
                parent = p(s, node);
                set_pc(s, node, parent, false);
                continue;
            }
            tmp = r(s, parent);
            if node == tmp {
                // left rotate at parent
                tmp = l(s, node);
                s[parent as usize].rb_right = tmp;
                s[node as usize].rb_left = parent;
                if tmp != NIL {
                    set_pc(s, tmp, parent, true);
                }
                set_pc(s, parent, node, false);
                update(s, parent);
                update(s, node);
                parent = node;
                tmp = r(s, node);
            }
            // right rotate at gparent
            s[gparent as usize].rb_left = tmp;
            s[parent as usize].rb_right = gparent;
            if tmp != NIL {
                set_pc(s, tmp, gparent, true);
            }
            rotate_set_parents(s, gparent, parent, root, false);
            update(s, gparent);
            update(s, parent);
            break;
        } else {
            tmp = l(s, gparent);
            if tmp != NIL && is_red(s, tmp) {
                set_pc(s, tmp, gparent, true);
                set_pc(s, parent, gparent, true);
                node = gparent;
                parent = p(s, node);
                set_pc(s, node, parent, false);
                continue;
            }
            tmp = l(s, parent);
            if node == tmp {
                // right rotate at parent
                tmp = r(s, node);
                s[parent as usize].rb_left = tmp;
                s[node as usize].rb_right = parent;
                if tmp != NIL {
                    set_pc(s, tmp, parent, true);
                }
                set_pc(s, parent, node, false);
                update(s, parent);
                update(s, node);
                parent = node;
                tmp = l(s, node);
            }
            // left rotate at gparent
            s[gparent as usize].rb_right = tmp;
            s[parent as usize].rb_left = gparent;
            if tmp != NIL {
                set_pc(s, tmp, gparent, true);
            }
            rotate_set_parents(s, gparent, parent, root, false);
            update(s, gparent);
            update(s, parent);
            break;
        }
    }
}

/// Inserts `se` (not in any tree); returns the new root.
pub fn insert(ses: &mut [SchedEntity], root: u32, se: SeId, order: TreeOrder) -> u32 {
    let n = se.0;
    let k = key(&ses[n as usize], order);
    let mut parent = NIL;
    let mut link_left = false;
    let mut cur = root;
    while cur != NIL {
        parent = cur;
        // less(node, parent): strictly before -> left; equal keys go right
        if before(k, key(&ses[cur as usize], order)) {
            cur = l(ses, cur);
            link_left = true;
        } else {
            cur = r(ses, cur);
            link_left = false;
        }
    }
    {
        let e = &mut ses[n as usize];
        e.rb_left = NIL;
        e.rb_right = NIL;
        e.rb_parent = parent;
        e.rb_black = false;
    }
    let mut root = root;
    if parent == NIL {
        root = n;
    } else if link_left {
        ses[parent as usize].rb_left = n;
    } else {
        ses[parent as usize].rb_right = n;
    }
    // augmented insert: propagate the new leaf's values up first
    propagate_up(ses, n);
    rb_insert_color(ses, n, &mut root);
    root
}

fn rb_erase_color(s: &mut [SchedEntity], mut parent: u32, root: &mut u32) {
    let mut node = NIL;
    loop {
        let mut sibling = r(s, parent);
        if node != sibling {
            // node is parent's left child
            if is_red(s, sibling) {
                let tmp1 = l(s, sibling);
                s[parent as usize].rb_right = tmp1;
                s[sibling as usize].rb_left = parent;
                set_pc(s, tmp1, parent, true);
                rotate_set_parents(s, parent, sibling, root, false);
                update(s, parent);
                update(s, sibling);
                sibling = tmp1;
            }
            let mut tmp1 = r(s, sibling);
            if tmp1 == NIL || is_black(s, tmp1) {
                let tmp2 = l(s, sibling);
                if tmp2 == NIL || is_black(s, tmp2) {
                    set_pc(s, sibling, parent, false);
                    if is_red(s, parent) {
                        s[parent as usize].rb_black = true;
                    } else {
                        node = parent;
                        parent = p(s, node);
                        if parent != NIL {
                            continue;
                        }
                    }
                    break;
                }
                // right rotate at sibling
                tmp1 = r(s, tmp2);
                s[sibling as usize].rb_left = tmp1;
                s[tmp2 as usize].rb_right = sibling;
                s[parent as usize].rb_right = tmp2;
                if tmp1 != NIL {
                    set_pc(s, tmp1, sibling, true);
                }
                update(s, sibling);
                update(s, tmp2);
                tmp1 = sibling;
                sibling = tmp2;
            }
            // left rotate at parent, colour flips
            let tmp2 = l(s, sibling);
            s[parent as usize].rb_right = tmp2;
            s[sibling as usize].rb_left = parent;
            set_pc(s, tmp1, sibling, true);
            if tmp2 != NIL {
                s[tmp2 as usize].rb_parent = parent;
            }
            rotate_set_parents(s, parent, sibling, root, true);
            update(s, parent);
            update(s, sibling);
            break;
        } else {
            sibling = l(s, parent);
            if is_red(s, sibling) {
                let tmp1 = r(s, sibling);
                s[parent as usize].rb_left = tmp1;
                s[sibling as usize].rb_right = parent;
                set_pc(s, tmp1, parent, true);
                rotate_set_parents(s, parent, sibling, root, false);
                update(s, parent);
                update(s, sibling);
                sibling = tmp1;
            }
            let mut tmp1 = l(s, sibling);
            if tmp1 == NIL || is_black(s, tmp1) {
                let tmp2 = r(s, sibling);
                if tmp2 == NIL || is_black(s, tmp2) {
                    set_pc(s, sibling, parent, false);
                    if is_red(s, parent) {
                        s[parent as usize].rb_black = true;
                    } else {
                        node = parent;
                        parent = p(s, node);
                        if parent != NIL {
                            continue;
                        }
                    }
                    break;
                }
                // left rotate at sibling
                tmp1 = l(s, tmp2);
                s[sibling as usize].rb_right = tmp1;
                s[tmp2 as usize].rb_left = sibling;
                s[parent as usize].rb_left = tmp2;
                if tmp1 != NIL {
                    set_pc(s, tmp1, sibling, true);
                }
                update(s, sibling);
                update(s, tmp2);
                tmp1 = sibling;
                sibling = tmp2;
            }
            // right rotate at parent, colour flips
            let tmp2 = r(s, sibling);
            s[parent as usize].rb_left = tmp2;
            s[sibling as usize].rb_right = parent;
            set_pc(s, tmp1, sibling, true);
            if tmp2 != NIL {
                s[tmp2 as usize].rb_parent = parent;
            }
            rotate_set_parents(s, parent, sibling, root, true);
            update(s, parent);
            update(s, sibling);
            break;
        }
    }
}

/// Removes `se` from the tree; returns the new root.
pub fn erase(s: &mut [SchedEntity], root: u32, se: SeId, _order: TreeOrder) -> u32 {
    let node = se.0;
    let mut root = root;
    let child = r(s, node);
    let mut tmp = l(s, node);
    let rebalance;
    let propagate_from;
    if tmp == NIL {
        // at most one child, on the right
        let pc_parent = p(s, node);
        let pc_black = s[node as usize].rb_black;
        change_child(s, node, child, pc_parent, &mut root);
        if child != NIL {
            set_pc(s, child, pc_parent, pc_black);
            rebalance = NIL;
        } else {
            rebalance = if pc_black { pc_parent } else { NIL };
        }
        propagate_from = pc_parent;
    } else if child == NIL {
        // only a left child
        let pc_parent = p(s, node);
        let pc_black = s[node as usize].rb_black;
        set_pc(s, tmp, pc_parent, pc_black);
        change_child(s, node, tmp, pc_parent, &mut root);
        rebalance = NIL;
        propagate_from = pc_parent;
    } else {
        let mut successor = child;
        let parent;
        let child2;
        tmp = l(s, child);
        if tmp == NIL {
            // the successor is the right child
            parent = successor;
            child2 = r(s, successor);
        } else {
            // the successor is the leftmost node of the right subtree
            let mut par;
            loop {
                par = successor;
                successor = tmp;
                tmp = l(s, tmp);
                if tmp == NIL {
                    break;
                }
            }
            parent = par;
            child2 = r(s, successor);
            s[parent as usize].rb_left = child2;
            s[successor as usize].rb_right = child;
            s[child as usize].rb_parent = successor;
        }
        tmp = l(s, node);
        s[successor as usize].rb_left = tmp;
        s[tmp as usize].rb_parent = successor;
        let pc_parent = p(s, node);
        let pc_black = s[node as usize].rb_black;
        change_child(s, node, successor, pc_parent, &mut root);
        if child2 != NIL {
            set_pc(s, child2, parent, true);
            rebalance = NIL;
        } else {
            rebalance = if is_black(s, successor) { parent } else { NIL };
        }
        set_pc(s, successor, pc_parent, pc_black);
        // aggregates: from the successor's old parent up (covers the successor itself)
        propagate_from = parent;
    }
    {
        let e = &mut s[node as usize];
        e.rb_left = NIL;
        e.rb_right = NIL;
        e.rb_parent = NIL;
    }
    propagate_up(s, propagate_from);
    if rebalance != NIL {
        rb_erase_color(s, rebalance, &mut root);
    }
    root
}

/// Recomputes the aggregates on the path from `se` to the root after its `slice` changed in
/// place (the kernel's `min_vruntime_cb_propagate`).
pub fn propagate(ses: &mut [SchedEntity], root: u32, se: SeId, _order: TreeOrder) {
    if root != NIL {
        propagate_up(ses, se.0);
    }
}

/// The leftmost (first) entity.
pub fn leftmost(ses: &[SchedEntity], root: u32) -> Option<SeId> {
    if root == NIL {
        return None;
    }
    let mut n = root;
    while l(ses, n) != NIL {
        n = l(ses, n);
    }
    Some(SeId(n))
}

/// The entity after `se` in tree order (`rb_next`), if any.
pub fn next(ses: &[SchedEntity], se: SeId) -> Option<SeId> {
    let mut n = se.0;
    if r(ses, n) != NIL {
        n = r(ses, n);
        while l(ses, n) != NIL {
            n = l(ses, n);
        }
        return Some(SeId(n));
    }
    let mut p = ses[n as usize].rb_parent;
    while p != NIL && r(ses, p) == n {
        n = p;
        p = ses[p as usize].rb_parent;
    }
    (p != NIL).then_some(SeId(p))
}

/// In-order list of the entities (for checks and state dumps).
pub fn in_order(ses: &[SchedEntity], root: u32) -> Vec<SeId> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    let mut n = root;
    while n != NIL || !stack.is_empty() {
        while n != NIL {
            stack.push(n);
            n = l(ses, n);
        }
        let x = stack.pop().unwrap();
        out.push(SeId(x));
        n = r(ses, x);
    }
    out
}

/// Checks order, red-black properties, parent links and aggregates (invariant I-8).
pub fn check(ses: &[SchedEntity], root: u32, order: TreeOrder) -> Result<(), String> {
    fn go(
        s: &[SchedEntity],
        n: u32,
        order: TreeOrder,
    ) -> Result<(u32, (u64, u64, u64, u64)), String> {
        let e = &s[n as usize];
        let mut agg = (e.vruntime, e.deadline, e.slice, e.slice);
        let mut bh = [0u32; 2];
        for (i, c) in [e.rb_left, e.rb_right].into_iter().enumerate() {
            if c == NIL {
                bh[i] = 1;
                continue;
            }
            if s[c as usize].rb_parent != n {
                return Err(format!("bad parent link at se {c}"));
            }
            if !e.rb_black && !s[c as usize].rb_black {
                return Err(format!("red node {n} has a red child"));
            }
            let ck = key(&s[c as usize], order);
            let nk = key(e, order);
            if i == 0 && !before(ck, nk) && ck != nk {
                return Err(format!("tree order violated at se {n} (left)"));
            }
            if i == 1 && before(ck, nk) {
                return Err(format!("tree order violated at se {n} (right)"));
            }
            let (h, a) = go(s, c, order)?;
            bh[i] = h;
            agg.0 = min_w(agg.0, a.0);
            agg.1 = min_w(agg.1, a.1);
            agg.2 = agg.2.min(a.2);
            agg.3 = agg.3.max(a.3);
        }
        if bh[0] != bh[1] {
            return Err(format!("black height mismatch at se {n}"));
        }
        if agg != (e.min_vruntime, e.min_deadline, e.min_slice, e.max_slice) {
            return Err(format!("stale augmentation at se {n}"));
        }
        Ok((bh[0] + e.rb_black as u32, agg))
    }
    if root == NIL {
        return Ok(());
    }
    if !ses[root as usize].rb_black || ses[root as usize].rb_parent != NIL {
        return Err("root must be black with no parent".into());
    }
    go(ses, root, order).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::CfsRqId;

    fn ents(keys: &[(u64, u64)]) -> Vec<SchedEntity> {
        keys.iter()
            .map(|&(v, d)| {
                let mut e = SchedEntity::new(CfsRqId(0));
                e.vruntime = v;
                e.deadline = d;
                e.slice = d.wrapping_sub(v);
                e
            })
            .collect()
    }

    #[test]
    fn equal_keys_go_right_in_insertion_order() {
        let mut ses = ents(&[(0, 10), (0, 10), (0, 5), (0, 10)]);
        let mut root = NIL;
        for id in [0u32, 1, 2, 3] {
            root = insert(&mut ses, root, SeId(id), TreeOrder::Deadline);
        }
        let order: Vec<u32> = in_order(&ses, root).iter().map(|s| s.0).collect();
        assert_eq!(order, vec![2, 0, 1, 3]);
        assert_eq!(leftmost(&ses, root), Some(SeId(2)));
        check(&ses, root, TreeOrder::Deadline).unwrap();
    }

    #[test]
    fn first_insert_stays_root_of_two() {
        // As in the kernel: the second node becomes the red child of the first (black) root.
        let mut ses = ents(&[(0, 3), (0, 3)]);
        let mut root = insert(&mut ses, NIL, SeId(0), TreeOrder::Vruntime);
        root = insert(&mut ses, root, SeId(1), TreeOrder::Vruntime);
        assert_eq!(root, 0);
        assert_eq!(ses[0].rb_right, 1);
    }

    #[test]
    fn three_ascending_inserts_rotate() {
        // keys 1, 2, 3 inserted in order: the classic left rotation makes 2 the root.
        let mut ses = ents(&[(1, 1), (2, 2), (3, 3)]);
        let mut root = NIL;
        for id in 0..3u32 {
            root = insert(&mut ses, root, SeId(id), TreeOrder::Deadline);
        }
        assert_eq!(root, 1);
        assert_eq!((ses[1].rb_left, ses[1].rb_right), (0, 2));
        check(&ses, root, TreeOrder::Deadline).unwrap();
    }

    #[test]
    fn wrapping_keys_compare_signed() {
        let mut ses = ents(&[(0, 5), (u64::MAX - 100, u64::MAX - 10)]);
        let mut root = NIL;
        root = insert(&mut ses, root, SeId(0), TreeOrder::Deadline);
        root = insert(&mut ses, root, SeId(1), TreeOrder::Deadline);
        assert_eq!(leftmost(&ses, root), Some(SeId(1)));
        assert_eq!(ses[root as usize].min_vruntime, u64::MAX - 100);
    }

    #[test]
    fn random_inserts_and_erases_keep_the_tree_valid() {
        let keys: Vec<(u64, u64)> = (0..200u64)
            .map(|i| (i * 7 % 13, 100 + (i * 31) % 17))
            .collect();
        let mut ses = ents(&keys);
        let mut root = NIL;
        let mut present = [false; 200];
        let mut x: u64 = 12345;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = ((x >> 33) % 200) as u32;
            if present[i as usize] {
                root = erase(&mut ses, root, SeId(i), TreeOrder::Deadline);
            } else {
                root = insert(&mut ses, root, SeId(i), TreeOrder::Deadline);
            }
            present[i as usize] ^= true;
            check(&ses, root, TreeOrder::Deadline).unwrap();
        }
        assert_eq!(
            in_order(&ses, root).len(),
            present.iter().filter(|b| **b).count()
        );
    }
}
