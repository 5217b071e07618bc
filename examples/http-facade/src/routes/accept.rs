//! The `Accept` header weighed as RFC 9110 (section 12.5.1) reads it: each
//! media range with its quality (`q`, 1 unless given, 0 meaning "not
//! this"); a media type takes the quality of the most specific range that
//! matches it (`text/csv`, then `text/*`, then `*/*`). Of the types a route
//! answers, the one with the highest quality wins; on equal quality, the one
//! named more specifically, then the one named first, then the route's own
//! order. A lone `*` counts as `*/*`, and a quality written `.5` as `0.5`,
//! as some clients send them; a quality that is no number from 0 to 1 is an
//! error naming it. Answers are UTF-8: a range whose `charset` names another
//! encoding matches nothing.

use crate::error::ApiError;
use axum::extract::Request;
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// A media range of the header, in the order given.
#[derive(Debug, PartialEq, Eq)]
struct MediaRange<'a> {
    kind: &'a str,
    subtype: &'a str,
    /// The quality in thousandths: 0 to 1000.
    quality: u16,
}

/// How well a media range names a type: more specific ranges take
/// precedence over less specific ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Specificity {
    AnyType,
    AnySubtype,
    Exact,
}

/// The media ranges of a request's `Accept` headers, several headers
/// read as one list.
pub struct Accept {
    text: String,
}

impl Accept {
    /// The `Accept` list of `headers`: `None` when there is none, or only
    /// empty ones (which accept anything); a value that is not visible
    /// ASCII is an error.
    pub fn of(headers: &HeaderMap) -> Result<Option<Accept>, ApiError> {
        let mut values = Vec::new();
        for value in headers.get_all(header::ACCEPT) {
            let value = value.to_str().map_err(|_| {
                ApiError::bad_field(
                    "Accept",
                    "header `Accept`: the value is not visible ASCII text",
                )
            })?;
            if !value.trim().is_empty() {
                values.push(value);
            }
        }
        Ok((!values.is_empty()).then(|| Accept {
            text: values.join(","),
        }))
    }

    /// Of `offered` (each with its `type/subtype`, in the route's order),
    /// the one the list prefers; `None` when it accepts none of them.
    pub fn preferred<T: Copy>(&self, offered: &[(T, &str)]) -> Result<Option<T>, ApiError> {
        let ranges = ranges(&self.text)?;
        let weighed = offered
            .iter()
            .enumerate()
            .filter_map(|(order, &(offer, media))| {
                let (quality, specificity, position) = weigh(&ranges, media)?;
                let rank = (
                    quality,
                    specificity,
                    std::cmp::Reverse(position),
                    std::cmp::Reverse(order),
                );
                (quality > 0).then_some((rank, offer))
            });
        Ok(weighed
            .max_by_key(|(rank, _)| *rank)
            .map(|(_, offer)| offer))
    }
}

/// Runs the request when its `Accept` header (if any) takes `media`, the
/// one type the endpoint answers in; else answers 406 naming that type (an
/// unreadable header is a 400).
pub async fn answers_only(media: &'static str, request: Request, next: Next) -> Response {
    let accepted = Accept::of(request.headers())
        .and_then(|accept| accept.map_or(Ok(Some(())), |accept| accept.preferred(&[((), media)])));
    match accepted {
        Ok(Some(())) => next.run(request).await,
        Ok(None) => ApiError::NotAcceptable(format!(
            "header `Accept` does not accept {media}, the one type this answers in"
        ))
        .into_response(),
        Err(error) => error.into_response(),
    }
}

/// The ranges of a list, each entry `type/subtype` followed by
/// `;name=value` parameters of which only `q` counts. Empty entries (`a,,b`)
/// are passed over.
fn ranges(text: &str) -> Result<Vec<MediaRange<'_>>, ApiError> {
    let mut ranges = Vec::new();
    for entry in text.split(',') {
        let mut parts = entry.split(';');
        let media = parts.next().unwrap_or_default().trim();
        if media.is_empty() {
            continue;
        }
        let (kind, subtype) = match media.split_once('/') {
            Some((kind, subtype)) => (kind.trim(), subtype.trim()),
            None if media == "*" => ("*", "*"),
            None => (media, ""),
        };
        let mut quality = 1000;
        let mut servable = true;
        for parameter in parts {
            let Some((name, value)) = parameter.split_once('=') else {
                continue;
            };
            // Every answer is UTF-8: a range asking for another charset
            // names nothing the service answers.
            if name.trim().eq_ignore_ascii_case("charset") {
                let charset = value.trim().trim_matches('"');
                servable &=
                    charset.eq_ignore_ascii_case("utf-8") || charset.eq_ignore_ascii_case("utf8");
            }
            if name.trim().eq_ignore_ascii_case("q") {
                quality = quality_of(value.trim()).ok_or_else(|| {
                    ApiError::bad_field(
                        "Accept",
                        format!(
                            "header `Accept`: `q={}` (in `{}`) is not a quality from 0 to 1 \
                             with at most three decimals",
                            value.trim(),
                            entry.trim()
                        ),
                    )
                })?;
            }
        }
        if servable {
            ranges.push(MediaRange {
                kind,
                subtype,
                quality,
            });
        }
    }
    Ok(ranges)
}

/// A quality (`0`, `0.5`, `1.000`, or `.5`) in thousandths.
fn quality_of(text: &str) -> Option<u16> {
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    if decimals.len() > 3 || !decimals.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u16 = match whole {
        "" if !decimals.is_empty() => 0,
        "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let thousandths: u16 = format!("{decimals:0<3}").parse().ok()?;
    let quality = whole * 1000 + thousandths;
    (quality <= 1000).then_some(quality)
}

/// The quality the most specific range matching `media` gives it, how
/// specifically, and that range's position (the first of equally specific
/// ones); `None` when no range matches.
fn weigh(ranges: &[MediaRange<'_>], media: &str) -> Option<(u16, Specificity, usize)> {
    let (kind, subtype) = media.split_once('/')?;
    let mut best: Option<(u16, Specificity, usize)> = None;
    for (position, range) in ranges.iter().enumerate() {
        let specificity = if range.kind == "*" && range.subtype == "*" {
            Specificity::AnyType
        } else if !range.kind.eq_ignore_ascii_case(kind) {
            continue;
        } else if range.subtype == "*" {
            Specificity::AnySubtype
        } else if range.subtype.eq_ignore_ascii_case(subtype) {
            Specificity::Exact
        } else {
            continue;
        };
        if best.is_none_or(|(_, known, _)| specificity > known) {
            best = Some((range.quality, specificity, position));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const OFFERED: &[(&str, &str)] = &[
        ("json", "application/json"),
        ("csv", "text/csv"),
        ("arrow", "application/vnd.apache.arrow.stream"),
    ];

    fn preferred(values: &[&str]) -> Result<Option<&'static str>, String> {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        }
        match Accept::of(&headers).map_err(|e| e.to_string())? {
            None => Ok(Some("no list")),
            Some(accept) => accept.preferred(OFFERED).map_err(|e| e.to_string()),
        }
    }

    /// Answers are UTF-8: a range asking for another charset matches
    /// nothing, one asking for UTF-8 (in any spelling) matches as without.
    #[test]
    fn a_charset_other_than_utf8_is_never_answered() {
        assert_eq!(preferred(&["text/csv;charset=latin1"]), Ok(None));
        assert_eq!(
            preferred(&["text/csv;charset=ISO-8859-1, application/json;q=0.5"]),
            Ok(Some("json"))
        );
        assert_eq!(preferred(&["text/csv; charset=\"UTF-8\""]), Ok(Some("csv")));
        assert_eq!(preferred(&["text/csv;charset=utf8;q=0.9"]), Ok(Some("csv")));
    }

    #[test]
    fn the_highest_quality_wins_and_zero_refuses() {
        assert_eq!(
            preferred(&["text/csv;q=0.5, application/json"]),
            Ok(Some("json"))
        );
        assert_eq!(
            preferred(&["application/json;q=0.2, text/csv;q=0.3"]),
            Ok(Some("csv"))
        );
        assert_eq!(
            preferred(&["application/json;q=0, text/csv;q=0.001"]),
            Ok(Some("csv"))
        );
        assert_eq!(preferred(&["application/json;q=0"]), Ok(None));
        assert_eq!(preferred(&["image/png"]), Ok(None));
        assert_eq!(preferred(&["text/*;q=0, */*"]), Ok(Some("json")));
    }

    #[test]
    fn on_equal_quality_the_more_specific_then_the_first_named_wins() {
        assert_eq!(preferred(&["*/*, text/csv"]), Ok(Some("csv")));
        assert_eq!(preferred(&["text/csv, application/json"]), Ok(Some("csv")));
        assert_eq!(
            preferred(&["application/vnd.apache.arrow.stream, */*"]),
            Ok(Some("arrow"))
        );
        // A wildcard names JSON and Arrow alike: the route's order decides.
        assert_eq!(preferred(&["application/*"]), Ok(Some("json")));
        assert_eq!(preferred(&["*/*"]), Ok(Some("json")));
        assert_eq!(preferred(&["text/*"]), Ok(Some("csv")));
    }

    #[test]
    fn the_most_specific_range_sets_a_types_quality() {
        // `text/csv;q=0` refuses CSV although `*/*` would take it.
        assert_eq!(preferred(&["*/*;q=0.9, text/csv;q=0"]), Ok(Some("json")));
        assert_eq!(preferred(&["text/csv;q=0, */*"]), Ok(Some("json")));
        assert_eq!(preferred(&["*/*;q=0.1, text/csv;q=0.2"]), Ok(Some("csv")));
    }

    #[test]
    fn headers_are_one_list_and_names_ignore_case() {
        assert_eq!(
            preferred(&["application/json;q=0.1", "TEXT/CSV"]),
            Ok(Some("csv"))
        );
        assert_eq!(
            preferred(&["Text/Csv;Q=0, application/JSON"]),
            Ok(Some("json"))
        );
        assert_eq!(preferred(&["", " "]), Ok(Some("no list")));
        assert_eq!(preferred(&["text/csv,,"]), Ok(Some("csv")));
    }

    #[test]
    fn old_client_spellings_are_read() {
        // As some HTTP libraries send it by default.
        assert_eq!(
            preferred(&["text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2"]),
            Ok(Some("json"))
        );
        assert_eq!(quality_of(".25"), Some(250));
        assert_eq!(quality_of("1.000"), Some(1000));
        assert_eq!(quality_of("0.5"), Some(500));
        assert_eq!(quality_of("1"), Some(1000));
    }

    #[test]
    fn a_quality_out_of_range_or_not_a_number_is_an_error_naming_it() {
        assert_eq!(
            preferred(&["text/csv;q=high"]),
            Err(
                "header `Accept`: `q=high` (in `text/csv;q=high`) is not a quality from 0 \
                 to 1 with at most three decimals"
                    .to_string()
            )
        );
        for text in ["1.5", "2", "0.1234", "-0.5", "", "0.x", "."] {
            assert_eq!(quality_of(text), None, "{text}");
        }
    }
}
