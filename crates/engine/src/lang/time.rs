//! Time expressions in running text, resolved against the day the text was written:
//! "yesterday", "last week", "two weekends ago", "next month", "in May 2023", "last
//! Friday", "the week before", "8 May", "this summer", "Christmas"… Each becomes a range of
//! days (weeks run Monday to Sunday). Without a day to resolve against (a question), only
//! what names its own date is kept, and a month without a year matches that month of any
//! year.
//!
//! Why not a crate: `two_timer` and `chrono-english` parse a string that *is* a time
//! expression; here the expressions sit inside sentences ("I went to a support group
//! yesterday and it was so powerful") and have to be found first, with their tense, and
//! "the week before" refers to the expression before it.

use super::{words, Word};
use chrono::{Datelike, Duration, NaiveDate, Weekday};
use serde::{Deserialize, Serialize};

/// An inclusive range of days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DayRange {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub start: NaiveDate,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub end: NaiveDate,
}

impl DayRange {
    pub fn new(a: NaiveDate, b: NaiveDate) -> Self {
        Self {
            start: a.min(b),
            end: a.max(b),
        }
    }

    pub fn day(d: NaiveDate) -> Self {
        Self { start: d, end: d }
    }

    /// The Monday-to-Sunday week holding `d`.
    pub fn week_of(d: NaiveDate) -> Self {
        let monday = d - Duration::days(d.weekday().num_days_from_monday() as i64);
        Self::new(monday, monday + Duration::days(6))
    }

    pub fn month(year: i32, month: u32) -> Option<Self> {
        let first = NaiveDate::from_ymd_opt(year, month, 1)?;
        let next = if month == 12 {
            NaiveDate::from_ymd_opt(year + 1, 1, 1)?
        } else {
            NaiveDate::from_ymd_opt(year, month + 1, 1)?
        };
        Some(Self::new(first, next - Duration::days(1)))
    }

    pub fn year(year: i32) -> Option<Self> {
        Some(Self::new(
            NaiveDate::from_ymd_opt(year, 1, 1)?,
            NaiveDate::from_ymd_opt(year, 12, 31)?,
        ))
    }

    /// Number of days covered.
    pub fn days(&self) -> i64 {
        (self.end - self.start).num_days() + 1
    }

    pub fn contains(&self, d: NaiveDate) -> bool {
        self.start <= d && d <= self.end
    }

    pub fn overlaps(&self, o: &DayRange) -> bool {
        self.start <= o.end && o.start <= self.end
    }

    /// Days between the two ranges; 0 when they overlap.
    pub fn gap_days(&self, o: &DayRange) -> i64 {
        if self.overlaps(o) {
            0
        } else if self.end < o.start {
            (o.start - self.end).num_days()
        } else {
            (self.start - o.end).num_days()
        }
    }

    fn union(self, o: DayRange) -> Self {
        Self::new(self.start.min(o.start), self.end.max(o.end))
    }

    /// "7 May 2023", "1–7 May 2023", "May 2023", "2023", or "30 Apr – 6 May 2023".
    pub fn label(&self) -> String {
        let (s, e) = (self.start, self.end);
        if s == e {
            return s.format("%-d %B %Y").to_string();
        }
        if Some(*self) == Self::year(s.year()) {
            return s.year().to_string();
        }
        if Some(*self) == Self::month(s.year(), s.month()) {
            return s.format("%B %Y").to_string();
        }
        if s.year() == e.year() && s.month() == e.month() {
            return format!("{}–{}", s.day(), e.format("%-d %B %Y"));
        }
        if s.year() == e.year() {
            return format!("{} – {}", s.format("%-d %b"), e.format("%-d %b %Y"));
        }
        format!("{} – {}", s.format("%-d %b %Y"), e.format("%-d %b %Y"))
    }
}

/// What a time expression pins down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// A range of days.
    Range(DayRange),
    /// A month of any year: "in August" in a text with no date of its own.
    MonthOfYear(u32),
}

impl When {
    /// Whether a day falls in it.
    pub fn contains(&self, d: NaiveDate) -> bool {
        match self {
            When::Range(r) => r.contains(d),
            When::MonthOfYear(m) => d.month() == *m,
        }
    }

    /// Days from `r` to it (0 when they overlap; a month of any year is compared with the
    /// same month in the years around `r`).
    pub fn gap_days(&self, r: &DayRange) -> i64 {
        match self {
            When::Range(x) => x.gap_days(r),
            When::MonthOfYear(m) => (r.start.year() - 1..=r.end.year() + 1)
                .filter_map(|y| DayRange::month(y, *m))
                .map(|x| x.gap_days(r))
                .min()
                .unwrap_or(i64::MAX),
        }
    }

    pub fn label(&self) -> String {
        match self {
            When::Range(r) => r.label(),
            When::MonthOfYear(m) => month_name(*m).to_string(),
        }
    }
}

/// A time expression found in a text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimeMention {
    /// The words as written.
    pub phrase: String,
    /// Byte span in the text.
    pub start: usize,
    pub end: usize,
    pub when: When,
    /// A loose reference ("recently", "a few weeks ago", "the other day").
    pub vague: bool,
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn month_name(m: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES[(m.clamp(1, 12) - 1) as usize]
}

/// A word that, right before a month's name, makes it the month: "in May", "since March",
/// "until June", "mid July". Both readers of a bare month name start from these and add their
/// own.
fn before_a_month(word: &str) -> bool {
    matches!(
        word,
        "in" | "since" | "during" | "until" | "till" | "early" | "mid" | "late"
    )
}

fn month_of(word: &str) -> Option<u32> {
    let w = word.trim_end_matches('.');
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() >= 3 && m.len() > 4 && m.starts_with(w) && w != "mar"))
        .map(|i| i as u32 + 1)
        .or(match w {
            "sept" => Some(9),
            _ => None,
        })
}

/// A month word that is also an ordinary word or a name in lower case: "may", "march",
/// and the abbreviations ("jan", "sep", "dec").
fn ambiguous_month(word: &str) -> bool {
    let w = word.trim_end_matches('.');
    matches!(w, "may" | "march") || !MONTHS.contains(&w)
}

fn weekday_of(word: &str) -> Option<Weekday> {
    // "on Fridays" reads as the weekday too.
    let w = word
        .strip_suffix("days")
        .map_or(word, |stem| &word[..stem.len() + 3]);
    Some(match w {
        "monday" => Weekday::Mon,
        "tuesday" | "tues" => Weekday::Tue,
        "wednesday" => Weekday::Wed,
        "thursday" | "thurs" => Weekday::Thu,
        "friday" => Weekday::Fri,
        "saturday" => Weekday::Sat,
        "sunday" => Weekday::Sun,
        _ => return None,
    })
}

/// "two" → 2, "a" → 1, "3" → 3; "few"/"several"/"couple" are loose (the bool).
fn number_of(word: &str) -> Option<(i64, bool)> {
    if let Ok(n) = word.parse::<i64>() {
        return (1..=1000).contains(&n).then_some((n, false));
    }
    Some(match word {
        "a" | "an" | "one" => (1, false),
        "two" => (2, false),
        "three" => (3, false),
        "four" => (4, false),
        "five" => (5, false),
        "six" => (6, false),
        "seven" => (7, false),
        "eight" => (8, false),
        "nine" => (9, false),
        "ten" => (10, false),
        "eleven" => (11, false),
        "twelve" => (12, false),
        "couple" => (2, true),
        "few" => (3, true),
        "several" => (3, true),
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Weekend,
    Month,
    Year,
}

fn unit_of(word: &str) -> Option<Unit> {
    Some(match word {
        "day" | "days" => Unit::Day,
        "week" | "weeks" => Unit::Week,
        "weekend" | "weekends" => Unit::Weekend,
        "month" | "months" => Unit::Month,
        "year" | "years" => Unit::Year,
        _ => return None,
    })
}

fn ordinal_day(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year_of(word: &str) -> Option<i32> {
    if word.len() != 4 {
        return None;
    }
    word.parse().ok().filter(|y| (1900..=2100).contains(y))
}

/// The date `months` calendar months from `d` (day clamped to the month's length).
fn add_months(d: NaiveDate, months: i64) -> NaiveDate {
    let total = d.year() as i64 * 12 + d.month0() as i64 + months;
    let (y, m) = (total.div_euclid(12) as i32, total.rem_euclid(12) as u32 + 1);
    (1..=d.day())
        .rev()
        .find_map(|day| NaiveDate::from_ymd_opt(y, m, day))
        .unwrap_or(d)
}

fn month_range_of(d: NaiveDate) -> DayRange {
    DayRange::month(d.year(), d.month()).unwrap_or(DayRange::day(d))
}

fn year_range_of(d: NaiveDate) -> DayRange {
    DayRange::year(d.year()).unwrap_or(DayRange::day(d))
}

/// The range `n` units before (negative: after) the one holding `anchor`.
fn units_from(anchor: NaiveDate, unit: Unit, n: i64) -> DayRange {
    match unit {
        Unit::Day => DayRange::day(anchor - Duration::days(n)),
        Unit::Week => DayRange::week_of(anchor - Duration::days(7 * n)),
        Unit::Weekend => {
            let week = DayRange::week_of(anchor - Duration::days(7 * n));
            DayRange::new(week.start + Duration::days(5), week.end)
        }
        Unit::Month => month_range_of(add_months(anchor, -n)),
        Unit::Year => year_range_of(add_months(anchor, -12 * n)),
    }
}

/// `n` units ago; a loose count spreads over the units either side.
fn ago(anchor: NaiveDate, unit: Unit, n: i64, loose: bool) -> DayRange {
    let r = units_from(anchor, unit, n);
    if loose {
        r.union(units_from(anchor, unit, n + 1))
            .union(units_from(anchor, unit, (n - 1).max(1)))
    } else {
        r
    }
}

/// Words that make a sentence about the future.
const FUTURE: &[&str] = &[
    "will", "i'll", "we'll", "you'll", "he'll", "she'll", "they'll", "gonna", "planning", "plan",
    "plans", "going", "upcoming", "soon", "tomorrow", "next", "can't", "forward",
];

/// Whether the sentence around words `[i, j)` speaks of the future ("going" counts only
/// before "to").
fn future_sentence(w: &[Word], text: &str, i: usize, j: usize) -> bool {
    let bounded = |k: usize| {
        let between = &text[w[k].end..w[k + 1].start];
        between.contains(['.', '!', '?', '\n'])
    };
    let mut s = i;
    while s > 0 && !bounded(s - 1) {
        s -= 1;
    }
    let mut e = j.max(i + 1).min(w.len());
    while e < w.len() && !bounded(e - 1) {
        e += 1;
    }
    (s..e).any(|k| {
        let x = w[k].lower.as_str();
        match x {
            "going" => w.get(k + 1).is_some_and(|n| n.lower == "to"),
            "can't" => w.get(k + 1).is_some_and(|n| n.lower == "wait"),
            "forward" => k > 0 && w[k - 1].lower == "looking",
            _ => FUTURE.contains(&x),
        }
    })
}

/// What a match found: words consumed, what they mean, whether loosely.
type Found = (usize, When, bool);

struct Scan<'a> {
    text: &'a str,
    w: Vec<Word>,
    anchor: Option<NaiveDate>,
    /// The range of the last expression found (for "the week before").
    last: Option<DayRange>,
}

impl Scan<'_> {
    fn word(&self, i: usize) -> &str {
        self.w.get(i).map_or("", |w| w.lower.as_str())
    }

    fn capitalised(&self, i: usize) -> bool {
        self.w
            .get(i)
            .and_then(|w| self.text[w.start..].chars().next())
            .is_some_and(char::is_uppercase)
    }

    fn future(&self, i: usize, j: usize) -> bool {
        future_sentence(&self.w, self.text, i, j)
    }

    /// Tries every pattern at word `i`, longest first.
    fn at(&self, i: usize) -> Option<Found> {
        self.numeric_date(i)
            .or_else(|| self.explicit_date(i))
            .or_else(|| self.relative_to_last(i))
            .or_else(|| self.anchored(i))
    }

    /// "2023-05-08", "5/8/2023", "5/8/23".
    fn numeric_date(&self, i: usize) -> Option<Found> {
        let w = self.word(i);
        let parts: Vec<&str> = w.split(['-', '/']).collect();
        if parts.len() != 3 || !parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit())) {
            return None;
        }
        let n: Vec<i32> = parts.iter().filter_map(|p| p.parse().ok()).collect();
        let date = if w.contains('-') && parts[0].len() == 4 {
            NaiveDate::from_ymd_opt(n[0], n[1] as u32, n[2] as u32)
        } else if w.contains('/') {
            let year = if parts[2].len() == 2 {
                2000 + n[2]
            } else {
                n[2]
            };
            NaiveDate::from_ymd_opt(year, n[0] as u32, n[1] as u32)
        } else {
            None
        }?;
        Some((1, When::Range(DayRange::day(date)), false))
    }

    /// A month name with a day and/or year: "May 8", "May 8th, 2023", "8 May 2023",
    /// "the 8th of May", "May 2023", "in May"; and "in 2022".
    fn explicit_date(&self, i: usize) -> Option<Found> {
        let (mut j, day, month) = if let Some(m) = self.month_at(i) {
            match ordinal_day(self.word(i + 1)) {
                Some(d) if year_of(self.word(i + 1)).is_none() => (i + 2, Some(d), m),
                _ => (i + 1, None, m),
            }
        } else if let Some(d) = ordinal_day(self.word(i)) {
            let of = usize::from(self.word(i + 1) == "of");
            let m = self.month_at(i + 1 + of)?;
            (i + 2 + of, Some(d), m)
        } else if let Some(y) = year_of(self.word(i)) {
            let before = if i > 0 { self.word(i - 1) } else { "" };
            if !matches!(before, "in" | "during" | "of" | "since" | "from" | "by") {
                return None;
            }
            let r = DayRange::year(y)?;
            return Some((1, When::Range(r), false));
        } else {
            return None;
        };
        let mut year = None;
        if self.word(j) == "of" && year_of(self.word(j + 1)).is_some() {
            j += 1;
        }
        if let Some(y) = year_of(self.word(j)) {
            year = Some(y);
            j += 1;
        }
        // A bare month name needs a preposition before it: "May" is also a verb.
        if day.is_none() && year.is_none() {
            let before = if i > 0 { self.word(i - 1) } else { "" };
            let modifier = matches!(before, "last" | "next" | "this");
            let preposed = before_a_month(before)
                || matches!(
                    before,
                    "of" | "by" | "through" | "throughout" | "end" | "beginning"
                );
            if !preposed || modifier {
                return None;
            }
        }
        let when = match (year, self.anchor) {
            (Some(y), _) => match day {
                Some(d) => DayRange::day(NaiveDate::from_ymd_opt(y, month, d)?),
                None => DayRange::month(y, month)?,
            },
            (None, Some(anchor)) => {
                let future = self.future(i, j);
                let y = nearest_year(anchor, month, day, future);
                match day {
                    Some(d) => DayRange::day(NaiveDate::from_ymd_opt(y, month, d)?),
                    None => DayRange::month(y, month)?,
                }
            }
            (None, None) => return Some((j - i, When::MonthOfYear(month), false)),
        };
        Some((j - i, When::Range(when), false))
    }

    /// A month name as a month. People who type in lower case write "june" and "in may
    /// 2023" too, so a month's full name reads as the month in either case, except "may"
    /// and "march", which are words as well, and the abbreviations ("jan", "dec"): in
    /// lower case those need a day or a year beside them ("may 8", "8 may", "may 2023")
    /// or one of a few prepositions before them ("in may", "since march").
    fn month_at(&self, i: usize) -> Option<u32> {
        let m = month_of(self.word(i))?;
        if self.capitalised(i) || !ambiguous_month(self.word(i)) {
            return Some(m);
        }
        let next = self.word(i + 1);
        let dated = ordinal_day(next).is_some() || year_of(next).is_some();
        let before = if i > 0 { self.word(i - 1) } else { "" };
        let day_before = (i > 0 && ordinal_day(before).is_some())
            || (before == "of" && i > 1 && ordinal_day(self.word(i - 2)).is_some());
        // ("last may", "next march": "this may" is more often "this may be …")
        let preposed = before_a_month(before) || matches!(before, "last" | "next");
        (dated || day_before || preposed).then_some(m)
    }

    /// "the week before", "the day after", "the previous month", "two days later".
    fn relative_to_last(&self, i: usize) -> Option<Found> {
        if matches!(self.word(i + 3), "yesterday" | "tomorrow") {
            return None;
        }
        let base = self.last.or_else(|| self.anchor.map(DayRange::day))?;
        let (j, unit, dir, n) = match (self.word(i), self.word(i + 1), self.word(i + 2)) {
            ("the", u, d @ ("before" | "after")) => (i + 3, unit_of(u)?, d, 1),
            ("the", d @ ("previous" | "following"), u) => (i + 3, unit_of(u)?, d, 1),
            (n, u, d @ ("later" | "earlier")) if self.last.is_some() => {
                (i + 3, unit_of(u)?, d, number_of(n)?.0)
            }
            _ => return None,
        };
        let back = matches!(dir, "before" | "previous" | "earlier");
        let from = if back { base.start } else { base.end };
        let r = units_from(from, unit, if back { n } else { -n });
        Some((j - i, When::Range(r), false))
    }

    /// Everything that needs the day the text was written.
    fn anchored(&self, i: usize) -> Option<Found> {
        let anchor = self.anchor?;
        let (a, b, c, d) = (
            self.word(i),
            self.word(i + 1),
            self.word(i + 2),
            self.word(i + 3),
        );
        let day = |n: i64| When::Range(DayRange::day(anchor + Duration::days(n)));
        match (a, b, c, d) {
            ("the", "day", "before", "yesterday") => return Some((4, day(-2), false)),
            ("the", "day", "after", "tomorrow") => return Some((4, day(2), false)),
            ("the", "other", "day", _) => {
                let r = DayRange::new(anchor - Duration::days(7), anchor - Duration::days(1));
                return Some((3, When::Range(r), true));
            }
            ("today" | "tonight", ..) => return Some((1, day(0), false)),
            ("this", "morning" | "afternoon" | "evening", ..) => return Some((2, day(0), false)),
            ("yesterday", ..) => return Some((1, day(-1), false)),
            ("last", "night", ..) => return Some((2, day(-1), false)),
            ("tomorrow", ..) => return Some((1, day(1), false)),
            ("recently" | "lately", ..) => {
                let r = DayRange::new(anchor - Duration::days(30), anchor);
                return Some((1, When::Range(r), true));
            }
            _ => {}
        }
        // "N units ago", "a couple of weeks ago", "a few days ago".
        let (n_at, skip) = match (a, b, c) {
            ("a", "couple" | "few", "of") => (i + 1, 3),
            ("a", "few" | "couple", _) => (i + 1, 2),
            _ => (i, 1),
        };
        if let Some((n, loose)) = number_of(self.word(n_at)) {
            let unit_at = i + skip;
            if let Some(unit) = unit_of(self.word(unit_at)) {
                if self.word(unit_at + 1) == "ago" {
                    return Some((skip + 2, When::Range(ago(anchor, unit, n, loose)), loose));
                }
            }
        }
        // "in N days/weeks" (the future).
        if a == "in" {
            if let Some((n, loose)) = number_of(b) {
                if let Some(unit) = unit_of(c) {
                    let r = ago(anchor, unit, -n, false);
                    return Some((3, When::Range(r), loose));
                }
            }
        }
        // "last/this/next/past + unit, weekday, month or season", "earlier this week".
        if let Some(f) = self.modified(i, anchor) {
            return Some(f);
        }
        if let Some(f) = self.weekday(i, anchor) {
            return Some(f);
        }
        if let Some(f) = self.season(i, anchor, None) {
            return Some(f);
        }
        self.holiday(i, anchor, None)
    }

    /// "last week", "this month", "next year", "the past weekend", "earlier this week",
    /// "last Friday", "next May", "last summer", "last Christmas".
    fn modified(&self, i: usize, anchor: NaiveDate) -> Option<Found> {
        let (mut at, mut part) = (i, None);
        if matches!(self.word(i), "earlier" | "later") && self.word(i + 1) == "this" {
            part = Some(self.word(i) == "earlier");
            at += 1;
        }
        if self.word(at) == "the" && self.word(at + 1) == "past" {
            at += 1;
        }
        let modifier = match (self.word(at), self.word(at + 1)) {
            ("this", "past") => {
                at += 1;
                "last"
            }
            (m @ ("last" | "past" | "previous" | "this" | "next" | "coming"), _) => m,
            _ => return None,
        };
        let k = at + 1;
        let next = self.word(k);
        let consumed = |end: usize| end - i;
        if let Some(unit) = unit_of(next) {
            let r = match (modifier, unit) {
                ("past", Unit::Day) => return None,
                ("this", Unit::Weekend) => {
                    let weekend = anchor.weekday().num_days_from_monday() >= 5;
                    if weekend || self.future(i, k + 1) {
                        units_from(anchor, unit, 0)
                    } else {
                        units_from(anchor, unit, 1)
                    }
                }
                ("this", _) => units_from(anchor, unit, 0),
                ("next" | "coming", _) => units_from(anchor, unit, -1),
                _ => units_from(anchor, unit, 1),
            };
            let r = match part {
                Some(true) => DayRange::new(r.start, anchor.min(r.end)),
                Some(false) => DayRange::new(anchor.max(r.start), r.end),
                None => r,
            };
            return Some((consumed(k + 1), When::Range(r), false));
        }
        if let Some(wd) = weekday_of(next) {
            let d = match modifier {
                "next" | "coming" => next_weekday(anchor, wd),
                "this" if self.future(i, k + 1) => next_or_today(anchor, wd),
                "this" => previous_or_today(anchor, wd),
                _ => previous_weekday(anchor, wd),
            };
            return Some((consumed(k + 1), When::Range(DayRange::day(d)), false));
        }
        if let Some(m) = self.month_at(k) {
            let y = match modifier {
                "this" => anchor.year(),
                "next" | "coming" => {
                    if m > anchor.month() {
                        anchor.year()
                    } else {
                        anchor.year() + 1
                    }
                }
                _ => {
                    if m < anchor.month() {
                        anchor.year()
                    } else {
                        anchor.year() - 1
                    }
                }
            };
            return Some((consumed(k + 1), When::Range(DayRange::month(y, m)?), false));
        }
        let dir = match modifier {
            "this" => 0,
            "next" | "coming" => 1,
            _ => -1,
        };
        if let Some((n, when, vague)) = self.season(k, anchor, Some(dir)) {
            return Some((consumed(k + n), when, vague));
        }
        if let Some((n, when, vague)) = self.holiday(k, anchor, Some(dir)) {
            return Some((consumed(k + n), when, vague));
        }
        None
    }

    /// "on Friday", "Saturday": the nearest such day before the text (after it when the
    /// sentence speaks of the future); vague when it is a habit ("every Tuesday").
    fn weekday(&self, i: usize, anchor: NaiveDate) -> Option<Found> {
        // In lower case ("sunday best") only after a preposition: "on friday".
        let preposed =
            i > 0 && matches!(self.word(i - 1), "on" | "since" | "until" | "till" | "by");
        let wd = weekday_of(self.word(i)).filter(|_| self.capitalised(i) || preposed)?;
        let d = if self.future(i, i + 1) {
            next_or_today(anchor, wd)
        } else {
            previous_weekday(anchor, wd)
        };
        // "every Tuesday", "on Fridays": a habit, not a day.
        let habit = self.word(i).ends_with("days")
            || (i > 0 && matches!(self.word(i - 1), "every" | "each" | "most" | "all"));
        Some((1, When::Range(DayRange::day(d)), habit))
    }

    /// "in the summer", "this winter", "last spring" (northern seasons by month:
    /// spring March–May, summer June–August, autumn September–November, winter
    /// December–February). `dir`: -1 last, 0 this, 1 next; `None` lets the tense decide.
    fn season(&self, i: usize, anchor: NaiveDate, dir: Option<i32>) -> Option<Found> {
        let (skip, name) = match (self.word(i), self.word(i + 1)) {
            ("the", s) => (2, s),
            (s, _) => (1, s),
        };
        let first_month = match name {
            "spring" => 3,
            "summer" => 6,
            "fall" | "autumn" => 9,
            "winter" => 12,
            _ => return None,
        };
        if dir.is_none() {
            // Bare "summer" only after "in", "over", "during", "this".
            let before = if i > 0 { self.word(i - 1) } else { "" };
            if !matches!(before, "in" | "over" | "during" | "for" | "all") {
                return None;
            }
        }
        let season = |year: i32| -> Option<DayRange> {
            let start = NaiveDate::from_ymd_opt(year, first_month, 1)?;
            let end = add_months(start, 3) - Duration::days(1);
            Some(DayRange::new(start, end))
        };
        let y = anchor.year();
        let candidates: Vec<DayRange> = (y - 2..=y + 1).filter_map(season).collect();
        let current = candidates.iter().find(|r| r.contains(anchor)).copied();
        let before = candidates.iter().rev().find(|r| r.end < anchor).copied();
        let after = candidates.iter().find(|r| r.start > anchor).copied();
        let dir = dir.unwrap_or(if self.future(i, i + skip) { 1 } else { -1 });
        let r = match dir {
            0 => current.or_else(|| candidates.iter().find(|r| r.start.year() == y).copied()),
            1 => after,
            _ => current.or(before),
        }?;
        Some((skip, When::Range(r), false))
    }

    /// Holidays with a fixed or computable day: Christmas (Eve), New Year's (Eve),
    /// Halloween, Valentine's Day, the Fourth of July, Thanksgiving.
    fn holiday(&self, i: usize, anchor: NaiveDate, dir: Option<i32>) -> Option<Found> {
        let (n, day): (usize, fn(i32) -> Option<NaiveDate>) =
            match (self.word(i), self.word(i + 1), self.word(i + 2)) {
                ("christmas", "eve", _) => (2, |y| NaiveDate::from_ymd_opt(y, 12, 24)),
                ("christmas" | "xmas", ..) => (1, |y| NaiveDate::from_ymd_opt(y, 12, 25)),
                ("new", "year's", "eve") => (3, |y| NaiveDate::from_ymd_opt(y, 12, 31)),
                ("new", "year's" | "years", _) => (2, |y| NaiveDate::from_ymd_opt(y, 1, 1)),
                ("halloween", ..) => (1, |y| NaiveDate::from_ymd_opt(y, 10, 31)),
                ("valentine's" | "valentines", ..) => {
                    let n = if self.word(i + 1) == "day" { 2 } else { 1 };
                    (n, |y| NaiveDate::from_ymd_opt(y, 2, 14))
                }
                ("fourth", "of", "july") => (3, |y| NaiveDate::from_ymd_opt(y, 7, 4)),
                ("thanksgiving", ..) => (1, |y| {
                    let first = NaiveDate::from_ymd_opt(y, 11, 1)?;
                    let to_thu = (7 + 3 - first.weekday().num_days_from_monday() as i64) % 7;
                    Some(first + Duration::days(to_thu + 21))
                }),
                _ => return None,
            };
        let y = anchor.year();
        let days: Vec<NaiveDate> = (y - 1..=y + 1).filter_map(day).collect();
        let future = dir.map_or_else(|| self.future(i, i + n), |d| d > 0);
        let d = match dir {
            Some(0) => days.iter().find(|d| d.year() == y).copied(),
            _ if future => days.iter().find(|d| **d >= anchor).copied(),
            _ => days.iter().rev().find(|d| **d <= anchor).copied(),
        }?;
        Some((n, When::Range(DayRange::day(d)), false))
    }
}

/// The year that puts `month` (and `day`) nearest the anchor on the side the tense says.
fn nearest_year(anchor: NaiveDate, month: u32, day: Option<u32>, future: bool) -> i32 {
    let key = (month, day.unwrap_or(if future { 31 } else { 1 }));
    let now = (anchor.month(), anchor.day());
    match (future, key >= now) {
        (true, true) | (false, false) => anchor.year(),
        (true, false) => anchor.year() + 1,
        (false, true) => {
            if day.is_none() && month == anchor.month() {
                anchor.year()
            } else {
                anchor.year() - 1
            }
        }
    }
}

fn previous_weekday(anchor: NaiveDate, wd: Weekday) -> NaiveDate {
    let back =
        (anchor.weekday().num_days_from_monday() as i64 - wd.num_days_from_monday() as i64 + 7) % 7;
    anchor - Duration::days(if back == 0 { 7 } else { back })
}

fn previous_or_today(anchor: NaiveDate, wd: Weekday) -> NaiveDate {
    if anchor.weekday() == wd {
        anchor
    } else {
        previous_weekday(anchor, wd)
    }
}

fn next_weekday(anchor: NaiveDate, wd: Weekday) -> NaiveDate {
    let ahead =
        (wd.num_days_from_monday() as i64 - anchor.weekday().num_days_from_monday() as i64 + 7) % 7;
    anchor + Duration::days(if ahead == 0 { 7 } else { ahead })
}

fn next_or_today(anchor: NaiveDate, wd: Weekday) -> NaiveDate {
    if anchor.weekday() == wd {
        anchor
    } else {
        next_weekday(anchor, wd)
    }
}

/// The word a chat's short or misspelt time word stands for ("tmrw", "yday", "wknd",
/// "2 wks ago"), or `None` when it is not one.
fn chat_spelling(word: &str) -> Option<&'static str> {
    Some(match word {
        "tmrw" | "tmr" | "tmrow" | "tomorow" | "tommorow" | "tommorrow" => "tomorrow",
        "yday" | "yesterdy" | "yestrday" => "yesterday",
        "tonite" | "2nite" => "tonight",
        "2day" => "today",
        "wknd" | "wkend" => "weekend",
        "wknds" | "wkends" => "weekends",
        "wk" => "week",
        "wks" => "weeks",
        "yr" => "year",
        "yrs" => "years",
        "mnth" | "mth" => "month",
        "mnths" | "mths" => "months",
        "nxt" => "next",
        _ => return None,
    })
}

/// Every time expression in `text`, resolved against `anchor` (the day it was written).
/// Without an anchor only expressions that carry their own date are found.
pub fn find_times(text: &str, anchor: Option<NaiveDate>) -> Vec<TimeMention> {
    let mut w = words(text);
    for word in &mut w {
        if let Some(full) = chat_spelling(&word.lower) {
            word.lower = full.to_string();
        }
    }
    let mut scan = Scan {
        text,
        w,
        anchor,
        last: None,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < scan.w.len() {
        match scan.at(i) {
            Some((n, when, vague)) if n > 0 => {
                let (start, end) = (scan.w[i].start, scan.w[i + n - 1].end);
                if let When::Range(r) = when {
                    scan.last = Some(r);
                }
                out.push(TimeMention {
                    phrase: text[start..end].to_string(),
                    start,
                    end,
                    when,
                    vague,
                });
                i += n;
            }
            _ => i += 1,
        }
    }
    out
}

/// The day of a Unix-ms time (UTC).
pub fn day_of_ms(ms: i64) -> Option<NaiveDate> {
    chrono::DateTime::from_timestamp_millis(ms).map(|t| t.date_naive())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Monday 8 May 2023, the day of LoCoMo's first session.
    fn monday() -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(2023, 5, 8)
    }

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn one(text: &str) -> When {
        let found = find_times(text, monday());
        assert_eq!(found.len(), 1, "{text:?}: {found:?}");
        found[0].when
    }

    fn range(a: NaiveDate, b: NaiveDate) -> When {
        When::Range(DayRange::new(a, b))
    }

    #[test]
    fn days_around_the_anchor_resolve() {
        assert_eq!(
            one("I went to a LGBTQ support group yesterday and it was so powerful."),
            range(d(2023, 5, 7), d(2023, 5, 7))
        );
        assert_eq!(
            one("see you tomorrow!"),
            range(d(2023, 5, 9), d(2023, 5, 9))
        );
        assert_eq!(
            one("We ate out last night"),
            range(d(2023, 5, 7), d(2023, 5, 7))
        );
        assert_eq!(
            one("the day before yesterday"),
            range(d(2023, 5, 6), d(2023, 5, 6))
        );
        assert_eq!(one("3 days ago"), range(d(2023, 5, 5), d(2023, 5, 5)));
    }

    #[test]
    fn a_weekday_said_as_a_habit_is_vague() {
        for habit in ["I polish the lens every Tuesday.", "We swim on Fridays."] {
            let found = find_times(habit, monday());
            assert!(found.len() == 1 && found[0].vague, "{habit}: {found:?}");
        }
        let once = find_times("I saw her on Friday.", monday());
        assert!(!once[0].vague);
    }

    #[test]
    fn weeks_months_and_years_are_calendar_ranges() {
        assert_eq!(
            one("I ran a race last week."),
            range(d(2023, 5, 1), d(2023, 5, 7))
        );
        assert_eq!(one("busy this week"), range(d(2023, 5, 8), d(2023, 5, 14)));
        assert_eq!(
            one("I'm moving next month"),
            range(d(2023, 6, 1), d(2023, 6, 30))
        );
        assert_eq!(
            one("last year was rough"),
            range(d(2022, 1, 1), d(2022, 12, 31))
        );
        assert_eq!(one("two weeks ago"), range(d(2023, 4, 24), d(2023, 4, 30)));
        assert_eq!(
            one("a couple of months ago"),
            range(d(2023, 2, 1), d(2023, 4, 30))
        );
        assert_eq!(
            one("earlier this month"),
            range(d(2023, 5, 1), d(2023, 5, 8))
        );
    }

    #[test]
    fn weekends_count_back_from_the_last_one() {
        assert_eq!(
            one("We went camping last weekend"),
            range(d(2023, 5, 6), d(2023, 5, 7))
        );
        assert_eq!(
            one("I painted that two weekends ago."),
            range(d(2023, 4, 29), d(2023, 4, 30))
        );
        // Said on a Monday in the past tense, "this weekend" is the one just gone…
        assert_eq!(
            one("We went hiking this weekend."),
            range(d(2023, 5, 6), d(2023, 5, 7))
        );
        // …and in the future tense the coming one.
        assert_eq!(
            one("We will go hiking this weekend."),
            range(d(2023, 5, 13), d(2023, 5, 14))
        );
    }

    #[test]
    fn weekday_names_follow_the_tense() {
        assert_eq!(
            one("I saw her on Friday."),
            range(d(2023, 5, 5), d(2023, 5, 5))
        );
        assert_eq!(
            one("I'm going to see her on Friday."),
            range(d(2023, 5, 12), d(2023, 5, 12))
        );
        assert_eq!(one("last Friday"), range(d(2023, 5, 5), d(2023, 5, 5)));
        assert_eq!(one("next Monday"), range(d(2023, 5, 15), d(2023, 5, 15)));
        // Lower-case weekday names in running text are still weekdays after a modifier,
        // but a bare capitalised one is needed otherwise.
        assert!(find_times("sunday best", monday()).is_empty());
    }

    #[test]
    fn months_and_explicit_dates_resolve() {
        assert_eq!(one("in May 2023"), range(d(2023, 5, 1), d(2023, 5, 31)));
        assert_eq!(one("back in March"), range(d(2023, 3, 1), d(2023, 3, 31)));
        // A month after the anchor, in the past tense, is last year's.
        assert_eq!(
            one("we met in August"),
            range(d(2022, 8, 1), d(2022, 8, 31))
        );
        assert_eq!(
            one("the wedding will be in August"),
            range(d(2023, 8, 1), d(2023, 8, 31))
        );
        assert_eq!(one("on May 3rd"), range(d(2023, 5, 3), d(2023, 5, 3)));
        assert_eq!(
            one("on the 20th of June, 2022"),
            range(d(2022, 6, 20), d(2022, 6, 20))
        );
        assert_eq!(one("on 2023-04-01"), range(d(2023, 4, 1), d(2023, 4, 1)));
        assert_eq!(one("since 2019"), range(d(2019, 1, 1), d(2019, 12, 31)));
        assert_eq!(one("last May"), range(d(2022, 5, 1), d(2022, 5, 31)));
        // "may" and "march" as words are not months.
        assert!(find_times("You may march on.", monday()).is_empty());
        assert!(find_times("May I come?", monday()).is_empty());
    }

    #[test]
    fn months_and_weekdays_typed_in_lower_case_still_resolve() {
        // Full month names other than "may" and "march" are months in any case; those two
        // need a day, a year or a preposition beside them; a weekday, a preposition.
        let cases = [
            ("in january 2022", d(2022, 1, 1), d(2022, 1, 31)),
            ("we met in august", d(2022, 8, 1), d(2022, 8, 31)),
            ("on 31 july, 2022", d(2022, 7, 31), d(2022, 7, 31)),
            ("the 8th of december, 2022", d(2022, 12, 8), d(2022, 12, 8)),
            ("in may 2023", d(2023, 5, 1), d(2023, 5, 31)),
            ("on may 3rd", d(2023, 5, 3), d(2023, 5, 3)),
            ("on 3 may", d(2023, 5, 3), d(2023, 5, 3)),
            ("back in march", d(2023, 3, 1), d(2023, 3, 31)),
            ("last may", d(2022, 5, 1), d(2022, 5, 31)),
            ("i saw her on friday", d(2023, 5, 5), d(2023, 5, 5)),
        ];
        for (text, from, to) in cases {
            assert_eq!(one(text), range(from, to), "{text}");
        }
        for words in [
            "you may march on.",
            "this may be hard",
            "in the end may it go well",
            "by may i come?",
        ] {
            assert!(find_times(words, monday()).is_empty(), "{words}");
        }
        assert!(find_times("sunday best", monday()).is_empty());
    }

    #[test]
    fn a_chat_s_short_time_words_resolve_like_the_full_ones() {
        assert_eq!(one("saw her yday"), one("saw her yesterday"));
        assert_eq!(one("going tmrw"), one("going tomorrow"));
        assert_eq!(one("last wknd was fun"), one("last weekend was fun"));
        assert_eq!(one("2 wks ago"), one("2 weeks ago"));
        assert_eq!(one("a few yrs ago"), one("a few years ago"));
        assert_eq!(one("nxt month"), one("next month"));
        // The phrase is as written.
        assert_eq!(find_times("saw her yday", monday())[0].phrase, "yday");
    }

    #[test]
    fn the_week_before_refers_to_the_expression_before_it() {
        let found = find_times(
            "We moved last week, and the week before we packed.",
            monday(),
        );
        let whens: Vec<When> = found.iter().map(|m| m.when).collect();
        assert_eq!(
            whens,
            vec![
                range(d(2023, 5, 1), d(2023, 5, 7)),
                range(d(2023, 4, 24), d(2023, 4, 30))
            ]
        );
        // Alone, it counts back from the anchor.
        assert_eq!(one("the week before"), range(d(2023, 5, 1), d(2023, 5, 7)));
        assert_eq!(
            one("the following day"),
            range(d(2023, 5, 9), d(2023, 5, 9))
        );
    }

    #[test]
    fn seasons_and_holidays_resolve() {
        assert_eq!(one("last summer"), range(d(2022, 6, 1), d(2022, 8, 31)));
        assert_eq!(
            one("we'll travel in the summer"),
            range(d(2023, 6, 1), d(2023, 8, 31))
        );
        assert_eq!(one("at Christmas"), range(d(2022, 12, 25), d(2022, 12, 25)));
        assert_eq!(
            one("next Thanksgiving"),
            range(d(2023, 11, 23), d(2023, 11, 23))
        );
    }

    #[test]
    fn loose_expressions_are_marked_vague() {
        let f = find_times("a few weeks ago", monday());
        assert!(f[0].vague);
        assert_eq!(f[0].when, range(d(2023, 4, 10), d(2023, 4, 30)));
        assert!(find_times("the other day", monday())[0].vague);
        assert!(!find_times("yesterday", monday())[0].vague);
    }

    #[test]
    fn without_an_anchor_only_dated_expressions_count() {
        assert!(find_times("what did she do yesterday", None).is_empty());
        let f = find_times("When did Caroline attend a pride parade in August?", None);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].when, When::MonthOfYear(8));
        assert_eq!(f[0].phrase, "August");
        let f = find_times("What did Melanie do in May 2023?", None);
        assert_eq!(f[0].when, range(d(2023, 5, 1), d(2023, 5, 31)));
    }

    #[test]
    fn ranges_measure_gaps_and_read_well() {
        let week = DayRange::week_of(d(2023, 5, 8));
        assert_eq!(week.label(), "8–14 May 2023");
        assert_eq!(DayRange::day(d(2023, 5, 7)).label(), "7 May 2023");
        assert_eq!(DayRange::month(2023, 5).unwrap().label(), "May 2023");
        assert_eq!(DayRange::year(2022).unwrap().label(), "2022");
        assert_eq!(week.gap_days(&DayRange::day(d(2023, 5, 20))), 6);
        assert_eq!(week.gap_days(&DayRange::day(d(2023, 5, 10))), 0);
        assert_eq!(
            When::MonthOfYear(8).gap_days(&DayRange::day(d(2021, 8, 3))),
            0
        );
        assert!(When::MonthOfYear(8).contains(d(2020, 8, 31)));
    }

    #[test]
    fn odd_text_does_not_panic() {
        for t in [
            "",
            "🙂 yesterday 🙂",
            "31/31/2023",
            "2023-13-45",
            "the",
            "a few",
            "in 99999 days",
        ] {
            let _ = find_times(t, monday());
            let _ = find_times(t, None);
        }
    }
}
