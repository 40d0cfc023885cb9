//! Leave-one-conversation-out evaluation: every tunable retrieval constant is chosen on
//! four conversations and scored on the fifth, and the five held-out scores are averaged.
//! A gain that shows when the constants are fitted on all five conversations but not in
//! this average did not generalise.
//!
//! The inputs are rankings already made: one run over every question per point of a grid
//! of constants (see [`Grid`]). Choosing a point for a fold only re-reads those runs, so
//! the folds cost no more searches than the grid itself.

use super::locomo::{score, Gold, Judged, Question, Report, Scores};
use super::metrics::{all_at_k, recall_at_k};
use crate::retrieve::{Route, SearchQuery};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A question's ranking and the route that made it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub question: Question,
    pub gold: Gold,
    pub ranked: Vec<String>,
    pub route: Route,
}

/// Named retrieval constants and the values to try for each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub axes: Vec<(String, Vec<f64>)>,
}

/// One assignment of the grid's constants.
pub type Point = Vec<(String, f64)>;

impl Grid {
    /// Parses `NAME=V1,V2,…` specs; each name must be a constant [`apply`] knows.
    pub fn parse(specs: &[String]) -> Result<Self> {
        let mut axes = Vec::new();
        for spec in specs {
            let (name, values) = spec.split_once('=').ok_or_else(|| {
                Error::InvalidInput(format!("grid axis {spec:?}: expected NAME=V1,V2,…"))
            })?;
            let values = values
                .split(',')
                .map(|v| {
                    v.trim().parse::<f64>().map_err(|_| {
                        Error::InvalidInput(format!("grid axis {name}: {v:?} is not a number"))
                    })
                })
                .collect::<Result<Vec<f64>>>()?;
            apply(&mut SearchQuery::new("probe"), name.trim(), values[0])?;
            axes.push((name.trim().to_string(), values));
        }
        Ok(Self { axes })
    }

    /// Every point of the grid (the cartesian product), first values first. An empty grid
    /// has one point: the defaults.
    pub fn points(&self) -> Vec<Point> {
        let mut points: Vec<Point> = vec![Vec::new()];
        for (name, values) in &self.axes {
            points = points
                .into_iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut q = p.clone();
                        q.push((name.clone(), *v));
                        q
                    })
                })
                .collect();
        }
        points
    }
}

/// Sets the constant `name` of a search to `value`. Fusion weights other than semantic
/// move weight to or from semantic, so the weights still sum to 1.
pub fn apply(q: &mut SearchQuery, name: &str, value: f64) -> Result<()> {
    let w = &mut q.weights;
    let rebalance = |field: &mut f64, semantic: &mut f64| {
        *semantic += *field - value;
        *field = value;
    };
    match name {
        "neighbour_weight" => q.neighbour_weight = value,
        "mmr_lambda" => q.mmr_lambda = value,
        "lexical" => rebalance(&mut w.lexical, &mut w.semantic),
        "recency" => rebalance(&mut w.recency, &mut w.semantic),
        "actor" => rebalance(&mut w.actor, &mut w.semantic),
        "spatial" => rebalance(&mut w.spatial, &mut w.semantic),
        "usage" => rebalance(&mut w.usage, &mut w.semantic),
        other => {
            if !q.tuning.set(other, value) {
                return Err(Error::InvalidInput(format!(
                    "unknown retrieval constant {other:?}; known: neighbour_weight, mmr_lambda, \
                     lexical, recency, actor, spatial, usage, {}",
                    crate::retrieve::Tuning::NAMES.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// What a fold is chosen by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// Mean R@10 over the training questions.
    #[default]
    Recall10,
    /// Mean of R@10 and All@10.
    RecallAll10,
}

impl std::str::FromStr for Objective {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "r10" => Ok(Objective::Recall10),
            "r10+all10" => Ok(Objective::RecallAll10),
            other => Err(Error::InvalidInput(format!(
                "unknown objective {other:?}; expected r10 or r10+all10"
            ))),
        }
    }
}

impl Objective {
    fn of(self, outcomes: &[&Outcome]) -> f64 {
        let scored: Vec<&&Outcome> = outcomes
            .iter()
            .filter(|o| !o.gold.evidence.is_empty())
            .collect();
        if scored.is_empty() {
            return 0.0;
        }
        let n = scored.len() as f64;
        let r10 = scored
            .iter()
            .map(|o| recall_at_k(&o.ranked, &o.gold.evidence, 10))
            .sum::<f64>()
            / n;
        match self {
            Objective::Recall10 => r10,
            Objective::RecallAll10 => {
                let all = scored
                    .iter()
                    .map(|o| all_at_k(&o.ranked, &o.gold.evidence, 10))
                    .sum::<f64>()
                    / n;
                (r10 + all) / 2.0
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FoldResult {
    /// The conversation scored.
    pub held_out: String,
    /// The grid point the other conversations chose.
    pub chosen: Point,
    /// Its objective on the other conversations.
    pub train_objective: f64,
    pub test: Report,
    /// By the route the router chose, on the held-out conversation.
    pub test_by_route: BTreeMap<String, Scores>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FoldReport {
    pub objective: Objective,
    pub grid: Grid,
    pub folds: Vec<FoldResult>,
    /// Mean over folds of each fold's held-out scores (a category a fold lacks is left
    /// out of that category's mean).
    pub average: Scores,
    pub average_by_category: BTreeMap<u32, Scores>,
    /// Mean over folds, by route (folds where the route was never chosen left out).
    pub average_by_route: BTreeMap<String, Scores>,
    /// The point best on all conversations at once, and its scores there: the fit that
    /// the fold average is compared with.
    pub full_fit: Point,
    pub full_fit_scores: Scores,
}

fn judged(outcomes: &[&Outcome]) -> Vec<Judged> {
    outcomes
        .iter()
        .map(|o| (o.question.clone(), o.gold.clone(), o.ranked.clone()))
        .collect()
}

fn report_of(outcomes: &[&Outcome]) -> Report {
    score(&judged(outcomes), &mut [])
}

/// The mean of several score rows (by field; `questions` is summed).
pub fn mean_scores(rows: &[&Scores]) -> Scores {
    let n = rows.len().max(1) as f64;
    let mean = |f: fn(&Scores) -> f64| rows.iter().map(|s| f(s)).sum::<f64>() / n;
    Scores {
        questions: rows.iter().map(|s| s.questions).sum(),
        recall_at_5: mean(|s| s.recall_at_5),
        recall_at_10: mean(|s| s.recall_at_10),
        recall_at_20: mean(|s| s.recall_at_20),
        all_at_10: mean(|s| s.all_at_10),
        ndcg_at_10: mean(|s| s.ndcg_at_10),
    }
}

/// Scores by route among `outcomes`.
pub fn by_route(outcomes: &[&Outcome]) -> BTreeMap<String, Scores> {
    let mut groups: BTreeMap<String, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        groups
            .entry(o.route.as_str().to_string())
            .or_default()
            .push(o);
    }
    groups
        .into_iter()
        .map(|(r, os)| (r, report_of(&os).overall))
        .collect()
}

/// Leave-one-conversation-out over `runs` (one per grid point, each with every question
/// in the same order).
pub fn folds(grid: &Grid, runs: &[Vec<Outcome>], objective: Objective) -> Result<FoldReport> {
    let points = grid.points();
    if runs.is_empty() || runs.len() != points.len() {
        return Err(Error::InvalidInput(format!(
            "{} runs for {} grid points",
            runs.len(),
            points.len()
        )));
    }
    let mut conversations: Vec<String> = runs[0]
        .iter()
        .map(|o| o.question.conversation.clone())
        .collect();
    conversations.dedup();
    conversations.sort();
    conversations.dedup();
    if conversations.len() < 2 {
        return Err(Error::InvalidInput(
            "folds need at least two conversations".into(),
        ));
    }
    let best = |keep: &dyn Fn(&Outcome) -> bool| -> (usize, f64) {
        let mut best = (0, f64::MIN);
        for (i, run) in runs.iter().enumerate() {
            let part: Vec<&Outcome> = run.iter().filter(|o| keep(o)).collect();
            let v = objective.of(&part);
            if v > best.1 + 1e-12 {
                best = (i, v);
            }
        }
        best
    };
    let mut fold_results = Vec::new();
    for conv in &conversations {
        let (chosen, train) = best(&|o: &Outcome| &o.question.conversation != conv);
        let test: Vec<&Outcome> = runs[chosen]
            .iter()
            .filter(|o| &o.question.conversation == conv)
            .collect();
        fold_results.push(FoldResult {
            held_out: conv.clone(),
            chosen: points[chosen].clone(),
            train_objective: train,
            test: report_of(&test),
            test_by_route: by_route(&test),
        });
    }
    let overall: Vec<&Scores> = fold_results.iter().map(|f| &f.test.overall).collect();
    let mut categories: BTreeMap<u32, Vec<&Scores>> = BTreeMap::new();
    let mut routes: BTreeMap<String, Vec<&Scores>> = BTreeMap::new();
    for f in &fold_results {
        for (c, s) in &f.test.by_category {
            categories.entry(*c).or_default().push(s);
        }
        for (r, s) in &f.test_by_route {
            routes.entry(r.clone()).or_default().push(s);
        }
    }
    let (full, _) = best(&|_: &Outcome| true);
    let all: Vec<&Outcome> = runs[full].iter().collect();
    Ok(FoldReport {
        objective,
        grid: grid.clone(),
        average: mean_scores(&overall),
        average_by_category: categories
            .iter()
            .map(|(c, rows)| (*c, mean_scores(rows)))
            .collect(),
        average_by_route: routes
            .iter()
            .map(|(r, rows)| (r.clone(), mean_scores(rows)))
            .collect(),
        folds: fold_results,
        full_fit: points[full].clone(),
        full_fit_scores: report_of(&all).overall,
    })
}

/// For each route the router chose, the scores of its questions under every forced route
/// (`forced[r]` ranks every question with route `r`; `chosen` gives the router's pick per
/// question, in the same order). A route earns its place when its own column is best on
/// its row.
pub fn route_matrix(
    chosen: &[Outcome],
    forced: &[(Route, Vec<Outcome>)],
) -> BTreeMap<String, BTreeMap<String, Scores>> {
    let mut out: BTreeMap<String, BTreeMap<String, Scores>> = BTreeMap::new();
    for row in Route::ALL {
        let picks: Vec<usize> = (0..chosen.len())
            .filter(|&i| chosen[i].route == *row)
            .collect();
        if picks.is_empty() {
            continue;
        }
        for (route, run) in forced {
            let part: Vec<&Outcome> = picks.iter().map(|&i| &run[i]).collect();
            out.entry(row.as_str().to_string())
                .or_default()
                .insert(route.as_str().to_string(), report_of(&part).overall);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn outcome(conv: &str, i: usize, found: bool) -> Outcome {
        Outcome {
            question: Question {
                conversation: conv.into(),
                index: i,
                text: format!("q{i}"),
                category: 4,
            },
            gold: Gold {
                evidence: HashSet::from(["D1:1".to_string()]),
            },
            ranked: if found {
                vec!["D1:1".into()]
            } else {
                vec!["D9:9".into()]
            },
            route: Route::Hybrid,
        }
    }

    #[test]
    fn grid_points_are_the_cartesian_product_and_names_are_checked() {
        let g = Grid::parse(&[
            "neighbour_weight=0.2,0.4".into(),
            "lexical=0.1,0.2,0.3".into(),
        ])
        .unwrap();
        let points = g.points();
        assert_eq!(points.len(), 6);
        assert_eq!(
            points[0],
            vec![("neighbour_weight".into(), 0.2), ("lexical".into(), 0.1)]
        );
        assert_eq!(Grid::default().points(), vec![Vec::new()]);
        assert_eq!(
            Grid::parse(&["bogus=1".into()]).unwrap_err().code(),
            "invalid_input"
        );
        assert!(Grid::parse(&["lexical=x".into()]).is_err());
        assert!(Grid::parse(&["lexical".into()]).is_err());
    }

    #[test]
    fn rebalanced_weights_still_sum_to_one() {
        let mut q = SearchQuery::new("x");
        apply(&mut q, "lexical", 0.35).unwrap();
        assert_eq!(q.weights.lexical, 0.35);
        q.weights.validate().unwrap();
    }

    #[test]
    fn each_fold_is_scored_with_the_point_the_other_conversations_chose() {
        // Point 0 is perfect on a and b, useless on c; point 1 the reverse. With c held
        // out, a and b choose point 0, which scores 0 on c: the fold average shows the
        // overfit that the full fit (point 0 wins 2 of 3) hides.
        let grid = Grid::parse(&["neighbour_weight=0.1,0.9".into()]).unwrap();
        let run = |good: &[&str]| -> Vec<Outcome> {
            ["a", "b", "c"]
                .iter()
                .flat_map(|c| (0..4).map(move |i| (c, i)))
                .map(|(c, i)| outcome(c, i, good.contains(c)))
                .collect()
        };
        let runs = vec![run(&["a", "b"]), run(&["c"])];
        let r = folds(&grid, &runs, Objective::Recall10).unwrap();
        let held: Vec<(&str, f64)> = r
            .folds
            .iter()
            .map(|f| (f.held_out.as_str(), f.test.overall.recall_at_10))
            .collect();
        // Held out a: b (point 0) and c (point 1) tie at 4 of 8; the first point wins ties.
        assert_eq!(held, vec![("a", 1.0), ("b", 1.0), ("c", 0.0)]);
        assert!((r.average.recall_at_10 - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.full_fit, vec![("neighbour_weight".to_string(), 0.1)]);
        assert!((r.full_fit_scores.recall_at_10 - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.average_by_route["hybrid"].questions, 12);
    }

    #[test]
    fn the_route_matrix_scores_each_routers_pick_under_every_route() {
        let mut chosen: Vec<Outcome> = (0..4).map(|i| outcome("a", i, true)).collect();
        chosen[0].route = Route::Causal;
        let good: Vec<Outcome> = (0..4).map(|i| outcome("a", i, true)).collect();
        let bad: Vec<Outcome> = (0..4).map(|i| outcome("a", i, false)).collect();
        let m = route_matrix(&chosen, &[(Route::Causal, good), (Route::Direct, bad)]);
        assert_eq!(m["causal"]["causal"].recall_at_10, 1.0);
        assert_eq!(m["causal"]["direct"].recall_at_10, 0.0);
        assert_eq!(m["hybrid"]["causal"].questions, 3);
    }
}
