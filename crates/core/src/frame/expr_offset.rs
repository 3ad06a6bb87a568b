//! `dt.offsetBy`: dates and timestamps moved by months, days and
//! milliseconds, in that order, as Polars' `offset_by` and DuckDB's
//! `+ INTERVAL` move them: a month step holds the day to the new month's
//! last (2020-01-31 plus a month is 2020-02-29), then days, then time.
//! UTC only, as the date parts (a time zone's rules are not in the core).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Date64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray};
use arrow_schema::{DataType, TimeUnit};

use super::expr::Val;
use super::expr_fns::civil;
use super::frame_error;
use crate::Result;

/// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    let leap = y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0);
    [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][(m - 1) as usize]
}

/// A day moved by `months` (held to the month's last day), then `days`.
pub(crate) fn shift_day(day: i64, months: i64, days: i64) -> i64 {
    let (y, m, d) = civil(day);
    let total = y * 12 + (m - 1) + months;
    let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    days_from_civil(ny, nm, d.min(days_in_month(ny, nm))) + days
}

/// Each value of a column whose values count `per_day` ticks a day, moved; an error where one leaves i64.
fn shift<T: ArrowPrimitiveType<Native = i64>>(a: &ArrayRef, per_day: i64, months: i64, days: i64, ticks: i64) -> Result<ArrayRef> {
    let a = a.as_primitive::<T>();
    let mut values = Vec::with_capacity(a.len());
    for (i, &v) in a.values().iter().enumerate() {
        let (day, rem) = (v.div_euclid(per_day), v.rem_euclid(per_day));
        match shift_day(day, months, days).checked_mul(per_day).and_then(|x| x.checked_add(rem)).and_then(|x| x.checked_add(ticks)) {
            Some(x) => values.push(x),
            None if a.is_null(i) => values.push(0),
            None => return Err(frame_error(format!("dt.offsetBy moves the value {v} (row {i} of the partition) past the range of {}", a.data_type()))),
        }
    }
    let out = PrimitiveArray::<T>::new(values.into(), a.nulls().cloned());
    Ok(Arc::new(out.with_data_type(a.data_type().clone())))
}

/// `v` moved by `months`, `days` and `ms` milliseconds (the client checked that a date moves by whole days).
pub(crate) fn offset_by(v: Val, months: i64, days: i64, ms: i64) -> Result<Val> {
    let a = &v.array;
    let array: ArrayRef = match a.data_type() {
        DataType::Date32 => {
            if ms % 86_400_000 != 0 {
                return Err(frame_error("dt.offsetBy moves a date by whole days"));
            }
            let out: PrimitiveArray<Date32Type> = a.as_primitive::<Date32Type>().unary(|d| shift_day(i64::from(d), months, days + ms / 86_400_000) as i32);
            Arc::new(out)
        }
        DataType::Date64 => shift::<Date64Type>(a, 86_400_000, months, days, ms)?,
        DataType::Timestamp(TimeUnit::Second, None) => shift::<TimestampSecondType>(a, 86_400, months, days, ms / 1_000)?,
        DataType::Timestamp(TimeUnit::Millisecond, None) => shift::<TimestampMillisecondType>(a, 86_400_000, months, days, ms)?,
        DataType::Timestamp(TimeUnit::Microsecond, None) => shift::<TimestampMicrosecondType>(a, 86_400_000_000, months, days, ms * 1_000)?,
        DataType::Timestamp(TimeUnit::Nanosecond, None) => shift::<TimestampNanosecondType>(a, 86_400_000_000_000, months, days, ms * 1_000_000)?,
        t => return Err(frame_error(format!("dt.offsetBy takes a date32, date64 or timestamp column without a time zone, not {t}"))),
    };
    Ok(Val { array, scalar: v.scalar })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i64, m: i64, d: i64) -> i64 {
        days_from_civil(y, m, d)
    }

    #[test]
    fn days_from_civil_inverts_civil_over_forty_thousand_years() {
        for d in (-8_000_000..8_000_000).step_by(997) {
            let (y, m, dd) = civil(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(day(1970, 1, 1), 0);
        assert_eq!(day(2000, 3, 1), 11_017);
    }

    #[test]
    fn months_hold_the_day_to_the_month_end_then_days_follow() {
        assert_eq!(shift_day(day(2020, 1, 31), 1, 0), day(2020, 2, 29));
        assert_eq!(shift_day(day(2021, 1, 31), 1, 0), day(2021, 2, 28));
        assert_eq!(shift_day(day(2020, 2, 29), 12, 0), day(2021, 2, 28));
        assert_eq!(shift_day(day(2020, 3, 31), -1, 0), day(2020, 2, 29));
        assert_eq!(shift_day(day(1600, 2, 29), -12 * 400, 0), day(1200, 2, 29));
        assert_eq!(shift_day(day(1999, 12, 31), 0, 1), day(2000, 1, 1));
        assert_eq!(shift_day(day(2020, 1, 31), 1, 1), day(2020, 3, 1), "months first, then the day");
        assert_eq!(shift_day(day(1969, 12, 31), 2, -90), day(1969, 11, 30));
    }
}
