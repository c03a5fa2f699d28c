//! `lists:sort/1` in OTP's order for elements that compare equal but
//! differ (`1` and `1.0`, `{1}` and `{1.0}`). OTP's sort/1 is a natural
//! merge sort (ascending and descending runs, then three-way and two-way
//! merges that alternate direction) and is not stable: which of two equal
//! elements comes first follows from its steps. This carries out the same
//! steps (OTP's tail calls become states of a loop, so no input is too
//! long for the stack), so the result is OTP's element for element.
//! `lists::sort_1` uses it only when a plain stable sort has put two such
//! elements side by side; otherwise the two agree.
//!
//! A list here is a `Vec` with its head at the end: `pop` takes the head,
//! `push` conses.

use std::cmp::Ordering;
use std::mem::take;

type List<T> = Vec<T>;

/// `lists:reverse(L, Acc)`.
fn reverse_onto<T: Copy>(l: &List<T>, mut acc: List<T>) -> List<T> {
    acc.extend(l.iter().rev());
    acc
}

/// The merge steps: `M*` merge ascending runs into a descending result,
/// `R*` the reverse. The lists themselves live in the loop's variables.
#[derive(Clone, Copy)]
enum Step<T> {
    M31 { h2: T, h3: T },
    M32 { h1: T, h3: T },
    M3123 { h1: T, h2: T },
    M3213 { h1: T, h2: T },
    M21 { h2: T },
    M22 { hdm: T, h1: T },
    R31 { h2: T, h3: T },
    R32 { h1: T, h3: T },
    R3123 { h1: T, h2: T },
    R3213 { h1: T, h2: T },
    R21 { h2: T },
    R22 { hdm: T, h1: T },
}

/// The run-finding steps (split_1, split_1_1, split_2, split_2_1, sort_1).
#[derive(Clone, Copy)]
enum Split<T> {
    Up { x: T, y: T },
    UpS { x: T, y: T, s: T },
    Down { x: T, y: T },
    DownS { x: T, y: T, s: T },
    Same { x: T },
}

pub struct Sorter<'a, T: Copy> {
    pub cmp: &'a dyn Fn(T, T) -> Ordering,
}

impl<T: Copy> Sorter<'_, T> {
    fn le(&self, a: T, b: T) -> bool {
        (self.cmp)(a, b) != Ordering::Greater
    }

    fn eq(&self, a: T, b: T) -> bool {
        (self.cmp)(a, b) == Ordering::Equal
    }

    /// `lists:sort(Input)`, in list order both ways.
    pub fn sort(&self, input: &[T]) -> Vec<T> {
        if input.len() < 2 {
            return input.to_vec();
        }
        let (x, y) = (input[0], input[1]);
        let rest = &input[2..];
        let first = if self.le(x, y) {
            match rest {
                [] => return input.to_vec(),
                [z] if self.le(y, *z) => return input.to_vec(),
                [z] if self.le(x, *z) => return vec![x, *z, y],
                [z] => return vec![*z, x, y],
                _ if self.eq(x, y) => Split::Same { x: y },
                _ => Split::Up { x, y },
            }
        } else {
            match rest {
                [] => return vec![y, x],
                [z] if self.le(x, *z) => return vec![y, x, *z],
                [z] if self.le(y, *z) => return vec![y, *z, x],
                [z] => return vec![*z, y, x],
                _ => Split::Down { x, y },
            }
        };
        let r = match first {
            Split::Same { .. } => vec![x],
            _ => Vec::new(),
        };
        let mut out = self.split(first, rest, r);
        out.reverse();
        out
    }

    fn split(&self, mut st: Split<T>, input: &[T], mut r: List<T>) -> List<T> {
        let mut rs: List<List<T>> = Vec::new();
        let mut i = 0;
        let run = |r: &mut List<T>, x: T, y: T| {
            let mut run = take(r);
            run.push(x);
            run.push(y);
            run
        };
        loop {
            let next = input.get(i).copied();
            i += 1;
            st = match (st, next) {
                (Split::Same { x }, Some(y)) => {
                    if self.eq(x, y) {
                        r.push(x);
                        Split::Same { x: y }
                    } else if (self.cmp)(x, y) == Ordering::Less {
                        Split::Up { x, y }
                    } else {
                        Split::Down { x, y }
                    }
                }
                (Split::Same { x }, None) => return reverse_onto(&r, vec![x]),
                (Split::Up { x, y }, Some(z)) => {
                    if self.le(y, z) {
                        r.push(x);
                        Split::Up { x: y, y: z }
                    } else if self.le(x, z) {
                        r.push(x);
                        Split::Up { x: z, y }
                    } else if r.is_empty() {
                        r.push(z);
                        Split::Up { x, y }
                    } else {
                        Split::UpS { x, y, s: z }
                    }
                }
                (Split::Up { x, y }, None) => {
                    rs.push(run(&mut r, x, y));
                    return self.mergel(rs, Vec::new(), true);
                }
                (Split::UpS { x, y, s }, Some(z)) => {
                    if self.le(y, z) {
                        r.push(x);
                        Split::UpS { x: y, y: z, s }
                    } else if self.le(x, z) {
                        r.push(x);
                        Split::UpS { x: z, y, s }
                    } else {
                        rs.push(run(&mut r, x, y));
                        if self.le(s, z) {
                            Split::Up { x: s, y: z }
                        } else {
                            Split::Up { x: z, y: s }
                        }
                    }
                }
                (Split::UpS { x, y, s }, None) => {
                    rs.push(run(&mut r, x, y));
                    rs.push(vec![s]);
                    return self.mergel(rs, Vec::new(), true);
                }
                (Split::Down { x, y }, Some(z)) => {
                    if self.le(z, y) {
                        r.push(x);
                        Split::Down { x: y, y: z }
                    } else if self.le(z, x) {
                        r.push(x);
                        Split::Down { x: z, y }
                    } else if r.is_empty() {
                        r.push(z);
                        Split::Down { x, y }
                    } else {
                        Split::DownS { x, y, s: z }
                    }
                }
                (Split::Down { x, y }, None) => {
                    rs.push(run(&mut r, x, y));
                    return self.mergel(rs, Vec::new(), false);
                }
                (Split::DownS { x, y, s }, Some(z)) => {
                    if self.le(z, y) {
                        r.push(x);
                        Split::DownS { x: y, y: z, s }
                    } else if self.le(z, x) {
                        r.push(x);
                        Split::DownS { x: z, y, s }
                    } else {
                        rs.push(run(&mut r, x, y));
                        if (self.cmp)(s, z) == Ordering::Greater {
                            Split::Down { x: s, y: z }
                        } else {
                            Split::Down { x: z, y: s }
                        }
                    }
                }
                (Split::DownS { x, y, s }, None) => {
                    rs.push(run(&mut r, x, y));
                    rs.push(vec![s]);
                    return self.mergel(rs, Vec::new(), false);
                }
            };
        }
    }

    /// mergel (`reversed` false) and rmergel (true): merge the runs three
    /// (or two) at a time, alternating direction, until one is left.
    fn mergel(&self, mut runs: List<List<T>>, mut acc: List<List<T>>, reversed: bool) -> List<T> {
        let mut reversed = reversed;
        loop {
            let n = runs.len();
            if reversed {
                if n >= 3 {
                    let mut t3 = runs.pop().unwrap_or_default();
                    let mut t2 = runs.pop().unwrap_or_default();
                    let t1 = runs.pop().unwrap_or_default();
                    let (Some(h3), Some(h2)) = (t3.pop(), t2.pop()) else {
                        return Vec::new();
                    };
                    acc.push(self.merge(Step::R31 { h2, h3 }, t1, t2, t3, Vec::new()));
                    continue;
                }
                match n {
                    2 => {
                        let mut t2 = runs.pop().unwrap_or_default();
                        let t1 = runs.pop().unwrap_or_default();
                        let Some(h2) = t2.pop() else {
                            return Vec::new();
                        };
                        acc.push(self.merge(Step::R21 { h2 }, t1, t2, Vec::new(), Vec::new()));
                    }
                    1 => {
                        let l = runs.pop().unwrap_or_default();
                        acc.push(reverse_onto(&l, Vec::new()));
                    }
                    _ => {}
                }
                runs = take(&mut acc);
                reversed = false;
                continue;
            }
            if n == 0 {
                if acc.is_empty() {
                    return Vec::new();
                }
                runs = take(&mut acc);
                reversed = true;
                continue;
            }
            let top = n - 1;
            if n == 1 && acc.is_empty() && !runs[top].is_empty() {
                return runs.pop().unwrap_or_default();
            }
            if runs[top].is_empty() {
                runs.pop();
                continue;
            }
            if n == 1 {
                let l = runs.pop().unwrap_or_default();
                acc.push(reverse_onto(&l, Vec::new()));
                runs = take(&mut acc);
                reversed = true;
                continue;
            }
            if runs[top - 1].is_empty() {
                runs.remove(top - 1);
                continue;
            }
            if n >= 3 && runs[top - 2].is_empty() {
                runs.remove(top - 2);
                continue;
            }
            if n >= 3 {
                let t1 = runs.pop().unwrap_or_default();
                let mut t2 = runs.pop().unwrap_or_default();
                let mut t3 = runs.pop().unwrap_or_default();
                let (Some(h2), Some(h3)) = (t2.pop(), t3.pop()) else {
                    return Vec::new();
                };
                acc.push(self.merge(Step::M31 { h2, h3 }, t1, t2, t3, Vec::new()));
                continue;
            }
            let t1 = runs.pop().unwrap_or_default();
            let mut t2 = runs.pop().unwrap_or_default();
            let Some(h2) = t2.pop() else {
                return Vec::new();
            };
            acc.push(self.merge(Step::M21 { h2 }, t1, t2, Vec::new(), Vec::new()));
            runs = take(&mut acc);
            reversed = true;
        }
    }

    /// The three- and two-way merges (merge3_*, merge2_*, rmerge3_*,
    /// rmerge2_*), one clause per arm, from state `step`.
    fn merge(
        &self,
        mut step: Step<T>,
        mut t1: List<T>,
        mut t2: List<T>,
        mut t3: List<T>,
        mut m: List<T>,
    ) -> List<T> {
        loop {
            step = match step {
                Step::M31 { h2, h3 } => match t1.pop() {
                    Some(h1) if self.le(h1, h2) => self.m3_12(&mut m, h1, h2, h3),
                    Some(h1) => self.m3_21(&mut m, h1, h2, h3),
                    None if self.le(h2, h3) => {
                        m.push(h2);
                        t1 = take(&mut t2);
                        t2 = take(&mut t3);
                        Step::M21 { h2: h3 }
                    }
                    None => {
                        t1 = take(&mut t2);
                        t2 = take(&mut t3);
                        Step::M22 { hdm: h3, h1: h2 }
                    }
                },
                Step::M32 { h1, h3 } => match t2.pop() {
                    Some(h2) if self.le(h1, h2) => self.m3_12(&mut m, h1, h2, h3),
                    Some(h2) => self.m3_21(&mut m, h1, h2, h3),
                    None if self.le(h1, h3) => {
                        m.push(h1);
                        t2 = take(&mut t3);
                        Step::M21 { h2: h3 }
                    }
                    None => {
                        t2 = take(&mut t3);
                        Step::M22 { hdm: h3, h1 }
                    }
                },
                Step::M3123 { h1, h2 } => match t3.pop() {
                    Some(h3) if self.le(h1, h3) => {
                        m.push(h1);
                        Step::M31 { h2, h3 }
                    }
                    Some(h3) => {
                        m.push(h3);
                        Step::M3123 { h1, h2 }
                    }
                    None => {
                        m.push(h1);
                        Step::M21 { h2 }
                    }
                },
                Step::M3213 { h1, h2 } => match t3.pop() {
                    Some(h3) if self.le(h2, h3) => {
                        m.push(h2);
                        Step::M32 { h1, h3 }
                    }
                    Some(h3) => {
                        m.push(h3);
                        Step::M3213 { h1, h2 }
                    }
                    None => Step::M22 { hdm: h2, h1 },
                },
                Step::M21 { h2 } => match t1.pop() {
                    Some(h1) if self.le(h1, h2) => {
                        m.push(h1);
                        Step::M21 { h2 }
                    }
                    Some(h1) => Step::M22 { hdm: h2, h1 },
                    None => {
                        m.push(h2);
                        return reverse_onto(&t2, m);
                    }
                },
                Step::M22 { hdm, h1 } => match t2.pop() {
                    Some(h2) if self.le(h1, h2) => {
                        m.push(hdm);
                        m.push(h1);
                        Step::M21 { h2 }
                    }
                    Some(h2) => {
                        m.push(hdm);
                        Step::M22 { hdm: h2, h1 }
                    }
                    None => {
                        m.push(hdm);
                        m.push(h1);
                        return reverse_onto(&t1, m);
                    }
                },
                Step::R31 { h2, h3 } => match t1.pop() {
                    Some(h1) if self.le(h1, h2) => self.r3_12(&mut m, h1, h2, h3),
                    Some(h1) => self.r3_21(&mut m, h1, h2, h3),
                    None if self.le(h2, h3) => {
                        t1 = take(&mut t2);
                        t2 = take(&mut t3);
                        Step::R22 { hdm: h3, h1: h2 }
                    }
                    None => {
                        m.push(h2);
                        t1 = take(&mut t2);
                        t2 = take(&mut t3);
                        Step::R21 { h2: h3 }
                    }
                },
                Step::R32 { h1, h3 } => match t2.pop() {
                    Some(h2) if self.le(h1, h2) => self.r3_12(&mut m, h1, h2, h3),
                    Some(h2) => self.r3_21(&mut m, h1, h2, h3),
                    None if self.le(h1, h3) => {
                        t2 = take(&mut t3);
                        Step::R22 { hdm: h3, h1 }
                    }
                    None => {
                        m.push(h1);
                        t2 = take(&mut t3);
                        Step::R21 { h2: h3 }
                    }
                },
                Step::R3123 { h1, h2 } => match t3.pop() {
                    Some(h3) if self.le(h2, h3) => {
                        m.push(h3);
                        Step::R3123 { h1, h2 }
                    }
                    Some(h3) => {
                        m.push(h2);
                        Step::R32 { h1, h3 }
                    }
                    None => Step::R22 { hdm: h2, h1 },
                },
                Step::R3213 { h1, h2 } => match t3.pop() {
                    Some(h3) if self.le(h1, h3) => {
                        m.push(h3);
                        Step::R3213 { h1, h2 }
                    }
                    Some(h3) => {
                        m.push(h1);
                        Step::R31 { h2, h3 }
                    }
                    None => {
                        m.push(h1);
                        Step::R21 { h2 }
                    }
                },
                Step::R21 { h2 } => match t1.pop() {
                    Some(h1) if self.le(h1, h2) => Step::R22 { hdm: h2, h1 },
                    Some(h1) => {
                        m.push(h1);
                        Step::R21 { h2 }
                    }
                    None => {
                        m.push(h2);
                        return reverse_onto(&t2, m);
                    }
                },
                Step::R22 { hdm, h1 } => match t2.pop() {
                    Some(h2) if self.le(h1, h2) => {
                        m.push(hdm);
                        Step::R22 { hdm: h2, h1 }
                    }
                    Some(h2) => {
                        m.push(hdm);
                        m.push(h1);
                        Step::R21 { h2 }
                    }
                    None => {
                        m.push(hdm);
                        m.push(h1);
                        return reverse_onto(&t1, m);
                    }
                },
            };
        }
    }

    /// merge3_12: H1 =< H2.
    fn m3_12(&self, m: &mut List<T>, h1: T, h2: T, h3: T) -> Step<T> {
        if self.le(h1, h3) {
            m.push(h1);
            Step::M31 { h2, h3 }
        } else {
            m.push(h3);
            Step::M3123 { h1, h2 }
        }
    }

    /// merge3_21: H1 > H2.
    fn m3_21(&self, m: &mut List<T>, h1: T, h2: T, h3: T) -> Step<T> {
        if self.le(h2, h3) {
            m.push(h2);
            Step::M32 { h1, h3 }
        } else {
            m.push(h3);
            Step::M3213 { h1, h2 }
        }
    }

    /// rmerge3_12: H1 =< H2.
    fn r3_12(&self, m: &mut List<T>, h1: T, h2: T, h3: T) -> Step<T> {
        if self.le(h2, h3) {
            m.push(h3);
            Step::R3123 { h1, h2 }
        } else {
            m.push(h2);
            Step::R32 { h1, h3 }
        }
    }

    /// rmerge3_21: H1 > H2.
    fn r3_21(&self, m: &mut List<T>, h1: T, h2: T, h3: T) -> Step<T> {
        if self.le(h1, h3) {
            m.push(h3);
            Step::R3213 { h1, h2 }
        } else {
            m.push(h1);
            Step::R31 { h2, h3 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers tagged with their position: equal by value only, as 1 and
    /// 1.0 are, so the result shows which equal element OTP puts first.
    fn sort(values: &[(i32, u32)]) -> Vec<(i32, u32)> {
        let cmp = |a: (i32, u32), b: (i32, u32)| a.0.cmp(&b.0);
        Sorter { cmp: &cmp }.sort(values)
    }

    #[test]
    fn sorts_by_value_whatever_the_input() {
        let mut seed = 12345u32;
        for n in 0..200 {
            let v: Vec<(i32, u32)> = (0..n)
                .map(|i| {
                    seed = seed.wrapping_mul(1103515245).wrapping_add(12345);
                    (((seed >> 16) % 7) as i32, i)
                })
                .collect();
            let out = sort(&v);
            assert_eq!(out.len(), v.len());
            assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "{v:?} -> {out:?}");
            let mut a: Vec<u32> = out.iter().map(|p| p.1).collect();
            a.sort();
            assert_eq!(a, (0..n).collect::<Vec<_>>());
        }
    }
}
