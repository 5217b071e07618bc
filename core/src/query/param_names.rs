//! The names of query parameters: what each reads, the check that refuses
//! a name a report or view does not read, and the near-miss suggestion in
//! that refusal. Which names each report reads is the report registry's
//! (a layer up); the movement listing's is [`super::MovementFilter`]'s.

use super::ReportParams;
use crate::error::{Error, Result};
use serde::Serialize;

/// One query parameter of a report: its name as written in a query string
/// and what it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReportParam {
    /// The parameter's name in a query string.
    pub name: &'static str,
    /// What values it takes, in words, for catalogues and error messages.
    pub accepts: &'static str,
}

pub(crate) const fn param(name: &'static str, accepts: &'static str) -> ReportParam {
    ReportParam { name, accepts }
}

/// Why a parameter (or a listing's text filter) given empty is refused.
pub(crate) const EMPTY_VALUE: &str =
    "is empty; give a value, or leave the parameter out for its default";

/// Why a parameter whose value is only list separators is refused.
const ONLY_SEPARATORS: &str = "names nothing, only separators (commas or spaces) or empty \
     quotes; give a value, or leave the parameter out for its default";

/// Refuses a parameter `view` (a report, or another computed view) does not
/// read (the first in name order), naming it, suggesting the nearest one
/// it does read and listing them all; then a parameter given with an empty
/// (or blank) value, which would otherwise read as absent: `customer=`
/// filtering nothing is more likely a form's unset field than a choice.
/// A value of separators alone (`country=,`, or `""`) is refused too: a
/// list of no items would read as absent, keeping everyone.
pub(crate) fn check_params(
    view: &str,
    groups: &[&[ReportParam]],
    params: &ReportParams,
) -> Result<()> {
    check_names(view, groups, params.keys().map(String::as_str))?;
    for (name, value) in params {
        if value.trim().is_empty() {
            return Err(Error::query(name, EMPTY_VALUE));
        }
        if super::list_items(value.trim()).is_empty() {
            return Err(Error::query(name, ONLY_SEPARATORS));
        }
    }
    Ok(())
}

/// Refuses the first of `names` (taken in the order given) that `view`
/// does not read, as [`check_params`] does: naming it, suggesting the
/// nearest name it reads and listing them all.
pub(crate) fn check_names<'n>(
    view: &str,
    groups: &[&[ReportParam]],
    mut names: impl Iterator<Item = &'n str>,
) -> Result<()> {
    let known = || groups.iter().flat_map(|group| group.iter()).map(|p| p.name);
    match names.find(|name| !known().any(|k| k == *name)) {
        Some(unknown) => Err(Error::UnknownParameter {
            report: view.to_string(),
            param: unknown.to_string(),
            suggestion: near_miss(unknown, known()).map(str::to_string),
            known: known().collect::<Vec<_>>().join(", "),
        }),
        None => Ok(()),
    }
}

/// A name compared loosely: lower case, without `-` and `_`.
fn loose(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The known name nearest to `given`, when it is a near miss: at most one
/// edit away for names up to 4 characters, two for longer ones, ignoring
/// case, `-` and `_` (the first of equally near names).
pub fn near_miss<'k>(given: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    let given_loose = loose(given);
    let allowed = if given_loose.chars().count() <= 4 {
        1
    } else {
        2
    };
    known
        .map(|name| (edit_distance(&given_loose, &loose(name)), name))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// The Levenshtein distance: the fewest inserted, removed or replaced
/// characters that turn `a` into `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let replace = previous[j] + usize::from(ca != *cb);
            current[j + 1] = replace.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested_and_far_names_are_not() {
        let known = [
            "currency",
            "date",
            "interval",
            "selected-date",
            "baseCurrency",
        ];
        let near = |given| near_miss(given, known.iter().copied());
        assert_eq!(near("curency"), Some("currency"));
        assert_eq!(near("intervall"), Some("interval"));
        assert_eq!(near("selected_date"), Some("selected-date"));
        assert_eq!(near("base_currency"), Some("baseCurrency"));
        assert_eq!(near("dat"), Some("date"));
        assert_eq!(near("colour"), None);
        assert_eq!(near("x"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
