//! Instants as records state them. A bare date means midnight in the ledger's
//! time zone, so it is kept as a date and resolved against the time zone when
//! a computation needs the instant; a timestamp without an offset is UTC.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use serde::{Serialize, Serializer};
use std::fmt;

/// A point in time as a record gave it: an exact instant, kept to the
/// millisecond (finer digits are dropped), or a calendar date, 00:00 of that
/// day in the ledger's time zone. Eight bytes, and an optional one too: a
/// stored invoice holds three.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// The UTC day of an instant, or the calendar date.
    date: NaiveDate,
    /// [`CALENDAR_DATE`], or the instant's time of day in UTC: seconds since
    /// midnight shifted left by 11 bits, then milliseconds (up to 1,999
    /// during a leap second).
    time: u32,
}

/// The `time` of a calendar date.
const CALENDAR_DATE: u32 = u32::MAX;
const MILLISECOND_BITS: u32 = 11;

/// What a [`Timestamp`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// An exact instant (the input had a time of day).
    Instant(DateTime<Utc>),
    /// A calendar date: 00:00 of that day in the ledger's time zone.
    Date(NaiveDate),
}

impl Timestamp {
    /// An exact instant, to the millisecond.
    pub fn from_instant(instant: DateTime<Utc>) -> Timestamp {
        let time = instant.time();
        Timestamp {
            date: instant.date_naive(),
            time: (time.num_seconds_from_midnight() << MILLISECOND_BITS)
                | (time.nanosecond() / 1_000_000),
        }
    }

    /// The instant `millis` milliseconds after 1970-01-01T00:00:00Z, as
    /// [`Timestamp::from_instant`] keeps it, computed from the count without
    /// a `DateTime` in between; `None` past the dates chrono represents.
    pub fn from_unix_millis(millis: i64) -> Option<Timestamp> {
        const MILLIS_PER_DAY: i64 = 86_400_000;
        let days = i32::try_from(millis.div_euclid(MILLIS_PER_DAY)).ok()?;
        let of_day = millis.rem_euclid(MILLIS_PER_DAY) as u32;
        Some(Timestamp {
            date: NaiveDate::from_epoch_days(days)?,
            time: ((of_day / 1000) << MILLISECOND_BITS) | (of_day % 1000),
        })
    }

    /// A calendar date.
    pub fn from_date(date: NaiveDate) -> Timestamp {
        Timestamp {
            date,
            time: CALENDAR_DATE,
        }
    }

    /// The instant or the date.
    pub fn moment(&self) -> Moment {
        if self.time == CALENDAR_DATE {
            return Moment::Date(self.date);
        }
        let seconds = self.time >> MILLISECOND_BITS;
        let millis = self.time & ((1 << MILLISECOND_BITS) - 1);
        // Every stored time came from a valid instant.
        let time = NaiveTime::from_num_seconds_from_midnight_opt(seconds, millis * 1_000_000)
            .unwrap_or(NaiveTime::MIN);
        Moment::Instant(self.date.and_time(time).and_utc())
    }

    /// The years a record's dates may fall in (UTC day of an instant): a
    /// date outside them is far more likely a slip (`0000`, `20244`, a
    /// number of seconds) than a real invoice or rate.
    pub const YEARS: std::ops::RangeInclusive<i32> = 1900..=2200;

    /// Parses ISO 8601: `2024-01-31`, `2024-01-31T10:00:00Z`, with an offset,
    /// with fractional seconds, or without an offset (then UTC). A space may
    /// stand for the `T`. A date outside [`Timestamp::YEARS`] is `None`.
    pub fn parse(text: &str) -> Option<Timestamp> {
        Timestamp::parse_any_year(crate::blank::trimmed(text)).filter(Timestamp::within_years)
    }

    /// Whether the timestamp's year is within [`Timestamp::YEARS`], the
    /// range every record's dates are read in.
    pub fn within_years(&self) -> bool {
        Timestamp::YEARS.contains(&self.date.year())
    }

    /// [`Timestamp::parse`] without the range of years.
    fn parse_any_year(text: &str) -> Option<Timestamp> {
        if let Some(date) = plain_date(text) {
            return Some(Timestamp::from_date(date));
        }
        if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            return Some(Timestamp::from_date(date));
        }
        if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
            return Some(Timestamp::from_instant(instant.with_timezone(&Utc)));
        }
        let normalized = text.replacen(' ', "T", 1);
        if let Ok(instant) = DateTime::parse_from_rfc3339(&normalized) {
            return Some(Timestamp::from_instant(instant.with_timezone(&Utc)));
        }
        for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(&normalized, format) {
                return Some(Timestamp::from_instant(naive.and_utc()));
            }
        }
        None
    }

    /// The instant this timestamp names in the given time zone.
    pub fn instant(&self, tz: Tz) -> DateTime<Utc> {
        match self.moment() {
            Moment::Instant(instant) => instant,
            Moment::Date(date) => start_of_day(date, tz),
        }
    }

    /// The instant this timestamp names in `tz` as milliseconds, with its
    /// local day there. In UTC it is read from the stored date and time of
    /// day without calendar types.
    /// The UTC path is inlined into its callers, the other zones' is not.
    #[inline(always)]
    pub fn millis_and_day(&self, tz: Tz) -> (UnixMillis, NaiveDate) {
        if tz == Tz::UTC {
            let (date, millis_of_day) = self.utc_date_and_millis();
            return (UnixMillis::at_day(date, millis_of_day), date);
        }
        self.millis_and_day_in_zone(tz)
    }

    #[inline(never)]
    fn millis_and_day_in_zone(&self, tz: Tz) -> (UnixMillis, NaiveDate) {
        let instant = self.instant(tz);
        (
            UnixMillis::floor(instant),
            instant.with_timezone(&tz).date_naive(),
        )
    }

    /// The stored date and, in UTC, the milliseconds since its midnight
    /// (0 for a calendar date; past 86,399,999 during a leap second).
    #[inline]
    pub(crate) fn utc_date_and_millis(&self) -> (NaiveDate, i64) {
        if self.time == CALENDAR_DATE {
            return (self.date, 0);
        }
        let seconds = i64::from(self.time >> MILLISECOND_BITS);
        let millis = i64::from(self.time & ((1 << MILLISECOND_BITS) - 1));
        (self.date, seconds * 1000 + millis)
    }

    /// The calendar day of this timestamp in the given time zone.
    pub fn local_date(&self, tz: Tz) -> NaiveDate {
        match self.moment() {
            Moment::Instant(instant) => instant.with_timezone(&tz).date_naive(),
            Moment::Date(date) => date,
        }
    }
}

/// An instant as whole milliseconds since 1970-01-01T00:00:00Z: what a
/// timeline orders and compares, in integer arithmetic instead of calendar
/// types. Stored timestamps are whole milliseconds and convert exactly; an
/// instant with finer digits rounds down ([`UnixMillis::floor`]) or up
/// ([`UnixMillis::ceil`]), whichever keeps a comparison exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixMillis(pub i64);

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
const UNIX_EPOCH_DAYS_FROM_CE: i64 = 719_163;

impl UnixMillis {
    /// The last whole millisecond at or before `at`.
    #[inline]
    pub fn floor(at: DateTime<Utc>) -> UnixMillis {
        UnixMillis(at.timestamp_millis())
    }

    /// The first whole millisecond at or after `at`: `at > x` exactly when
    /// `ceil(at) > x` for a whole millisecond `x`.
    #[inline]
    pub fn ceil(at: DateTime<Utc>) -> UnixMillis {
        let finer = !at.timestamp_subsec_nanos().is_multiple_of(1_000_000);
        UnixMillis(at.timestamp_millis() + i64::from(finer))
    }

    /// `millis_of_day` after the UTC midnight that starts `date`.
    #[inline]
    pub fn at_day(date: NaiveDate, millis_of_day: i64) -> UnixMillis {
        let days = i64::from(date.num_days_from_ce()) - UNIX_EPOCH_DAYS_FROM_CE;
        UnixMillis(days * 86_400_000 + millis_of_day)
    }

    /// This instant `millis` later, held at the ends of the `i64` range.
    #[inline]
    pub fn saturating_add(self, millis: i64) -> UnixMillis {
        UnixMillis(self.0.saturating_add(millis))
    }

    /// As a `DateTime`, held at the ends of the range chrono represents.
    #[inline]
    pub fn to_datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.0).unwrap_or(if self.0 < 0 {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        })
    }
}

/// `YYYY-MM-DD` with exactly those digits, read without a format parser
/// (the common case); anything else is left to [`Timestamp::parse`]'s formats.
pub(crate) fn plain_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let number = |digits: &[u8]| {
        digits.iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let year = i32::try_from(number(&b[..4])?).ok()?;
    NaiveDate::from_ymd_opt(year, number(&b[5..7])?, number(&b[8..])?)
}

/// The first instant of a calendar day in a time zone (the day may start after
/// 00:00 when a DST gap swallows midnight).
pub fn start_of_day(date: NaiveDate, tz: Tz) -> DateTime<Utc> {
    if tz == Tz::UTC {
        return date.and_time(NaiveTime::MIN).and_utc();
    }
    let mut time = NaiveTime::MIN;
    for _ in 0..48 {
        match tz.from_local_datetime(&date.and_time(time)) {
            chrono::LocalResult::Single(t) => return t.with_timezone(&Utc),
            chrono::LocalResult::Ambiguous(earliest, _) => return earliest.with_timezone(&Utc),
            chrono::LocalResult::None => time += chrono::Duration::minutes(30),
        }
    }
    date.and_time(NaiveTime::MIN).and_utc()
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.moment() {
            Moment::Instant(instant) => write!(f, "{}", instant.format("%Y-%m-%dT%H:%M:%SZ")),
            Moment::Date(date) => write!(f, "{}", date.format("%Y-%m-%d")),
        }
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.moment().fmt(f)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A count of milliseconds gives the timestamp of the instant it
        /// counts to, before 1970 too, and nothing where chrono has no date.
        #[test]
        fn unix_milliseconds_give_the_instant_they_count_to(millis in proptest::prelude::any::<i64>()) {
            let by_instant = DateTime::from_timestamp_millis(millis).map(Timestamp::from_instant);
            proptest::prop_assert_eq!(Timestamp::from_unix_millis(millis), by_instant);
        }

        #[test]
        fn unix_milliseconds_near_the_epoch(millis in -400_000_000_000_000i64..400_000_000_000_000) {
            let by_instant = DateTime::from_timestamp_millis(millis).map(Timestamp::from_instant);
            proptest::prop_assert_eq!(Timestamp::from_unix_millis(millis), by_instant);
        }
    }

    #[test]
    fn bare_date_is_midnight_in_the_time_zone() {
        let t = Timestamp::parse("2024-03-01").unwrap();
        let tz: Tz = "America/New_York".parse().unwrap();
        assert_eq!(t.instant(tz).to_rfc3339(), "2024-03-01T05:00:00+00:00");
    }

    #[test]
    fn timestamp_without_offset_is_utc() {
        let t = Timestamp::parse("2024-03-01T10:30:00").unwrap();
        assert_eq!(
            t,
            Timestamp::from_instant("2024-03-01T10:30:00Z".parse().unwrap())
        );
    }

    #[test]
    fn offsets_and_spaces_are_understood() {
        let a = Timestamp::parse("2024-03-01T12:00:00+02:00").unwrap();
        let b = Timestamp::parse("2024-03-01 10:00:00Z").unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn plain_dates_read_as_the_format_reads_them() {
        for text in [
            "2024-02-29",
            "2023-02-29",
            "0000-01-01",
            "9999-12-31",
            "2024-00-10",
            "2024-1-10",
            "2024-01-1a",
            "+024-01-10",
            " 2024-01-10 ",
        ] {
            // Where the fast path answers, the format agrees; where it does
            // not, the format reads it (or rejects it) as before.
            let by_format = NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok();
            if let Some(date) = plain_date(text.trim()) {
                assert_eq!(Some(date), by_format, "{text}");
            }
            assert_eq!(
                Timestamp::parse_any_year(text.trim()),
                by_format.map(Timestamp::from_date),
                "{text}"
            );
        }
    }

    #[test]
    fn a_timestamp_and_an_optional_one_take_eight_bytes() {
        assert_eq!(std::mem::size_of::<Timestamp>(), 8);
        assert_eq!(std::mem::size_of::<Option<Timestamp>>(), 8);
    }

    #[test]
    fn instants_keep_milliseconds_and_drop_finer_digits() {
        let t = Timestamp::parse("2024-03-01T10:30:05.123987Z").unwrap();
        let expected: DateTime<Utc> = "2024-03-01T10:30:05.123Z".parse().unwrap();
        assert_eq!(t.moment(), Moment::Instant(expected));
        assert_eq!(t.to_string(), "2024-03-01T10:30:05Z");
    }

    #[test]
    fn instants_round_trip_at_the_edges_of_the_calendar_and_in_a_leap_second() {
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_milli_opt(23, 59, 59, 1_999)
            .unwrap()
            .and_utc();
        let first = NaiveDate::MIN.and_time(NaiveTime::MIN).and_utc();
        let last = NaiveDate::MAX
            .and_hms_milli_opt(23, 59, 59, 999)
            .unwrap()
            .and_utc();
        for instant in [leap, first, last, DateTime::UNIX_EPOCH] {
            assert_eq!(
                Timestamp::from_instant(instant).moment(),
                Moment::Instant(instant)
            );
        }
        for date in [NaiveDate::MIN, NaiveDate::MAX] {
            assert_eq!(Timestamp::from_date(date).moment(), Moment::Date(date));
        }
    }

    #[test]
    fn a_date_is_not_the_instant_of_its_midnight() {
        let date = NaiveDate::from_ymd_opt(2024, 3, 1).unwrap();
        let midnight = Timestamp::from_instant(date.and_time(NaiveTime::MIN).and_utc());
        assert_ne!(Timestamp::from_date(date), midnight);
        assert_eq!(
            Timestamp::from_date(date).instant(Tz::UTC),
            midnight.instant(Tz::UTC)
        );
    }

    #[test]
    fn unix_millis_match_chrono_and_round_finer_digits_either_way() {
        let tz: Tz = "America/New_York".parse().unwrap();
        for text in [
            "2024-03-01",
            "1969-12-31T23:59:59.999Z",
            "1970-01-01T00:00:00.001Z",
            "0001-01-01",
            "2024-03-10T07:30:00Z",
        ] {
            let t = Timestamp::parse_any_year(text).unwrap();
            for zone in [Tz::UTC, tz] {
                let instant = t.instant(zone);
                let (millis, day) = t.millis_and_day(zone);
                assert_eq!(millis.0, instant.timestamp_millis(), "{text} {zone}");
                assert_eq!(millis.to_datetime(), instant, "{text} {zone}");
                assert_eq!(
                    day,
                    instant.with_timezone(&zone).date_naive(),
                    "{text} {zone}"
                );
            }
        }
        let fine: DateTime<Utc> = "1969-12-31T23:59:59.9995Z".parse().unwrap();
        assert_eq!(UnixMillis::floor(fine), UnixMillis(-1));
        assert_eq!(UnixMillis::ceil(fine), UnixMillis(0));
        let whole: DateTime<Utc> = "2024-03-01T00:00:00.250Z".parse().unwrap();
        assert_eq!(UnixMillis::ceil(whole), UnixMillis::floor(whole));
        assert_eq!(UnixMillis(i64::MAX).to_datetime(), DateTime::<Utc>::MAX_UTC);
        assert_eq!(UnixMillis(i64::MIN).to_datetime(), DateTime::<Utc>::MIN_UTC);
        assert_eq!(
            UnixMillis(i64::MAX - 1).saturating_add(5),
            UnixMillis(i64::MAX)
        );
    }

    #[test]
    fn a_leap_second_counts_into_the_next_second_as_chrono_counts_it() {
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_milli_opt(23, 59, 59, 1_500)
            .unwrap()
            .and_utc();
        let (millis, day) = Timestamp::from_instant(leap).millis_and_day(Tz::UTC);
        assert_eq!(millis.0, leap.timestamp_millis());
        assert_eq!(day, leap.date_naive());
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(Timestamp::parse("2024-13-01").is_none());
        assert!(Timestamp::parse("yesterday").is_none());
    }
}
