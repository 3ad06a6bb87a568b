//! How a group's state takes one more value: count and sum add, min and
//! max keep the lower or higher in SQL's order (NaN above every number).

/// What a state column does with each value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Fold {
    /// Rows, or non-null values of a column.
    Count,
    Sum,
    Min,
    Max,
}

/// The order min and max fold by: SQL's, where NaN is above every number
/// (DuckDB's max is NaN when a NaN is there, as the frames' own sort puts it
/// last); a plain `>` would keep a NaN only when it came first.
pub(crate) trait SqlOrd: PartialOrd + Copy {
    fn above(self, other: Self) -> bool {
        self > other
    }
}

impl SqlOrd for i64 {}

impl SqlOrd for f64 {
    fn above(self, other: Self) -> bool {
        (self.is_nan() && !other.is_nan()) || self > other
    }
}

pub(crate) fn fold<T: SqlOrd + std::ops::Add<Output = T>>(f: Fold, a: T, b: T) -> T {
    match f {
        Fold::Sum | Fold::Count => a + b,
        Fold::Min => if a.above(b) { b } else { a },
        Fold::Max => if b.above(a) { b } else { a },
    }
}

pub(crate) fn step<T: SqlOrd + std::ops::Add<Output = T>>(f: Fold, v: &mut [T], seen: &mut [bool], g: usize, x: T) {
    v[g] = if seen[g] { fold(f, v[g], x) } else { x };
    seen[g] = true;
}
