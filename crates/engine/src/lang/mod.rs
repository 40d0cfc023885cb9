//! Language analysis without an LLM: time expressions resolved against the time a text was
//! written ([`time`]), the entities a text names ([`entities`]), and what a question asks
//! for ([`query`]), whether a sentence asks something ([`asks`]), and the most common
//! English words ([`common`]). Pure functions over
//! text: no store, no model.

pub mod asks;
pub mod common;
pub mod entities;
pub mod query;
pub mod time;

/// One word of a text: lower-cased, with its byte span in the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub lower: String,
    pub start: usize,
    pub end: usize,
}

/// The words of `text`: runs of letters and digits, keeping an inner apostrophe ("Mel's",
/// "don't") and an inner '-' or '/' between digits ("2023-05-08", "5/8/2023").
pub fn words(text: &str) -> Vec<Word> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].1.is_alphanumeric() {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut j = i + 1;
        while j < chars.len() {
            let c = chars[j].1;
            let joins = |pred: fn(char) -> bool| {
                j + 1 < chars.len() && pred(chars[j - 1].1) && pred(chars[j + 1].1)
            };
            let keep = c.is_alphanumeric()
                || (matches!(c, '\'' | '’') && joins(char::is_alphabetic))
                || (matches!(c, '-' | '/') && joins(|c| c.is_ascii_digit()));
            if !keep {
                break;
            }
            j += 1;
        }
        let end = chars.get(j).map_or(text.len(), |c| c.0);
        out.push(Word {
            lower: text[start..end].replace('’', "'").to_lowercase(),
            start,
            end,
        });
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_apostrophes_and_numeric_dates_together() {
        let w: Vec<String> = words("Mel's party on 2023-05-08, don't go - 5/8!")
            .into_iter()
            .map(|w| w.lower)
            .collect();
        assert_eq!(
            w,
            vec!["mel's", "party", "on", "2023-05-08", "don't", "go", "5/8"]
        );
    }

    #[test]
    fn word_spans_point_into_the_original_text() {
        let text = "Ünïcode ’quotes’ fine";
        for w in words(text) {
            assert_eq!(
                text[w.start..w.end].to_lowercase().replace('’', "'"),
                w.lower
            );
        }
    }
}
