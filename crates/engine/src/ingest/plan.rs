//! The plan stage of an `add`: validation, provenance, messages already stored skipped,
//! and for each remaining message what the policies make of it: an episodic bubble with
//! 5W1H, importance and its causal cue, and the facts it states. Nothing is written.

use super::{
    extract_facts, find_cue, importance, validate_message, w5h1_for_turn, AddOptions, AddReport,
    Policies, Records, Update, FACT_IMPORTANCE,
};
use crate::memory::{embedding_text, l_score, Kind, NewMemory, L_SCORE_THRESHOLD};
use crate::store::{Message, Store};
use crate::{Error, Result};
use std::sync::Mutex;

/// One planned memory of a batch before it has an id.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    /// Index of the message (among the fresh ones) it comes from.
    pub message: usize,
    pub memory: NewMemory,
    pub embed_text: String,
    /// Where an episode's cause is, when its text has a causal cue.
    pub cause: Option<CauseRef>,
    /// A fact another system made (an imported mem0 memory, a Letta memory block): stored
    /// as it is, never reconciled away as a duplicate or a replacement.
    pub verbatim: bool,
}

/// The cause of a turn with a causal cue.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CauseRef {
    /// The clause with this index among the batch's cause clauses (embedded with the batch).
    Clause(usize),
    /// The turn just before.
    Previous,
}

/// What a batch will write.
#[derive(Debug)]
pub(crate) struct BatchPlan<'m> {
    /// Messages not stored yet, in order.
    pub fresh: Vec<&'m Message>,
    /// Bubbles and facts, each after the bubble of its message.
    pub planned: Vec<Planned>,
    /// Cause clauses to embed with the batch.
    pub clauses: Vec<String>,
    /// A policy asked for a complex update (summaries refresh the window still filling).
    pub complex_update: bool,
    /// The provenance score of what this input creates.
    pub base_score: f64,
    /// Skipped and ignored messages so far.
    pub report: AddReport,
}

/// Validates the batch and plans it; reads the store (parents, stored messages) briefly.
pub(crate) fn plan_batch<'m>(
    store: &Mutex<Store>,
    conversation: &str,
    messages: &'m [Message],
    records: Records,
    opts: &AddOptions,
    policies: &Policies,
) -> Result<BatchPlan<'m>> {
    if conversation.trim().is_empty() {
        return Err(Error::InvalidInput("the conversation name is empty".into()));
    }
    for m in messages {
        validate_message(m)?;
    }
    let guard = store.lock().unwrap_or_else(|p| p.into_inner());
    let read = guard.read();
    let parent_scores: Vec<f64> = opts
        .parents
        .iter()
        .map(|&p| read.require_memory(p).map(|m| m.l_score))
        .collect::<Result<_>>()?;
    let base_score = l_score(opts.source, &parent_scores);
    if base_score < L_SCORE_THRESHOLD {
        return Err(Error::ProvenanceBelowThreshold {
            l_score: base_score,
            threshold: L_SCORE_THRESHOLD,
        });
    }
    // Skip messages already stored (resumed imports), plan the rest.
    let mut report = AddReport::default();
    let mut fresh = Vec::new();
    for m in messages {
        let exists = match &m.external_id {
            Some(ext) => read.message_exists(conversation, ext)?,
            None => false,
        };
        if exists {
            report.messages_skipped += 1;
        } else {
            fresh.push(m);
        }
    }
    drop(guard);
    let mut plan = BatchPlan {
        fresh,
        planned: Vec::new(),
        clauses: Vec::new(),
        complex_update: false,
        base_score,
        report,
    };
    for i in 0..plan.fresh.len() {
        match records {
            Records::Turns => plan_message(&mut plan, i, conversation, opts, policies),
            Records::Facts => plan_stated_fact(&mut plan, i, conversation, opts),
        }
    }
    Ok(plan)
}

/// Plans fresh message `i`: its bubble (unless a policy skips it) and its facts.
fn plan_message(
    plan: &mut BatchPlan<'_>,
    i: usize,
    conversation: &str,
    opts: &AddOptions,
    policies: &Policies,
) {
    let m = plan.fresh[i];
    let speaker = m.speaker.clone().unwrap_or_else(|| m.role.clone());
    let given_event = m
        .metadata
        .get("event")
        .and_then(|e| e.as_str())
        .map(str::to_string);
    let decision = policies.decide(
        conversation,
        &m.role,
        &speaker,
        &m.text,
        given_event.as_deref(),
    );
    if decision.skip {
        plan.report.messages_ignored += 1;
        return;
    }
    plan.complex_update |= decision.update == Update::Complex;
    let body = policies.truncated(&m.text, &decision.event);
    let facts = if decision.extract_facts.unwrap_or(opts.extract_facts) {
        extract_facts(&speaker, &m.text)
    } else {
        Vec::new()
    };
    let mut bubble = NewMemory::new(
        Kind::Episode,
        policies.format(&speaker, &body, &decision.event),
    );
    bubble.w5h1 = w5h1_for_turn(
        &speaker,
        &body,
        m.occurred_at,
        conversation,
        m.session.as_deref(),
    );
    bubble.conversation = Some(conversation.to_string());
    bubble.session = m.session.clone();
    bubble.occurred_at = m.occurred_at;
    let base = importance(&body, !facts.is_empty()) + decision.importance_boost;
    bubble.importance = base
        .max(decision.importance_min.unwrap_or(0.0))
        .clamp(0.0, 1.0);
    bubble.source = opts.source;
    bubble.parents = opts.parents.clone();
    bubble.metadata = metadata_of(m);
    if given_event.is_none() && decision.event != "statement" {
        if let Some(o) = bubble.metadata.as_object_mut() {
            o.insert("event".into(), decision.event.clone().into());
        }
    }
    let cause = find_cue(&body).map(|c| match c.cause {
        Some(clause) => {
            plan.clauses.push(clause);
            CauseRef::Clause(plan.clauses.len() - 1)
        }
        None => CauseRef::Previous,
    });
    plan.planned.push(Planned {
        message: i,
        embed_text: embedding_text(Kind::Episode, &bubble.text, &bubble.w5h1),
        memory: bubble,
        cause,
        verbatim: false,
    });
    for fact in facts {
        let mut f = NewMemory::new(Kind::Fact, fact.clone());
        f.w5h1.who = Some(speaker.clone());
        f.w5h1.what = Some(fact.clone());
        f.conversation = Some(conversation.to_string());
        // A fact is as old as the message that stated it, not its extraction.
        f.session = m.session.clone();
        f.occurred_at = m.occurred_at;
        f.importance = FACT_IMPORTANCE;
        f.source = opts.source;
        f.metadata = metadata_of(m);
        plan.planned.push(Planned {
            message: i,
            embed_text: fact,
            memory: f,
            cause: None,
            verbatim: false,
        });
    }
}

/// Plans fresh message `i`, a memory another system made, as one fact: its text as
/// given, who it is about or by, its time (event time and validity from it), its
/// metadata, and the message it came from.
fn plan_stated_fact(plan: &mut BatchPlan<'_>, i: usize, conversation: &str, opts: &AddOptions) {
    let m = plan.fresh[i];
    let speaker = m.speaker.clone().unwrap_or_else(|| m.role.clone());
    let mut f = NewMemory::new(Kind::Fact, m.text.clone());
    f.w5h1.who = Some(speaker);
    f.conversation = Some(conversation.to_string());
    f.session = m.session.clone();
    f.occurred_at = m.occurred_at;
    f.importance = FACT_IMPORTANCE;
    f.source = opts.source;
    f.metadata = metadata_of(m);
    plan.planned.push(Planned {
        message: i,
        embed_text: embedding_text(Kind::Fact, &f.text, &f.w5h1),
        memory: f,
        cause: None,
        verbatim: true,
    });
}

/// A message's metadata, `{}` when it has none.
fn metadata_of(m: &Message) -> serde_json::Value {
    if m.metadata.is_null() {
        serde_json::json!({})
    } else {
        m.metadata.clone()
    }
}

/// The vectors of a batch plan.
#[derive(Debug)]
pub(crate) struct Embedded {
    /// One per planned memory, in plan order.
    pub vectors: Vec<Vec<f32>>,
    /// One per cause clause.
    pub clause_vectors: Vec<Vec<f32>>,
}

/// The embed stage: one batch with every planned memory's text, then the cause clauses.
pub(crate) fn embed_plan(
    plan: &BatchPlan<'_>,
    embed: &dyn Fn(Vec<String>) -> Result<Vec<Vec<f32>>>,
) -> Result<Embedded> {
    let mut vectors = embed(
        plan.planned
            .iter()
            .map(|p| p.embed_text.clone())
            .chain(plan.clauses.iter().cloned())
            .collect(),
    )?;
    let clause_vectors = vectors.split_off(plan.planned.len());
    Ok(Embedded {
        vectors,
        clause_vectors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Source;

    fn message(text: &str, ext: Option<&str>) -> Message {
        Message {
            role: "user".into(),
            speaker: Some("Ada".into()),
            text: text.into(),
            session: Some("s1".into()),
            occurred_at: Some(1_000),
            external_id: ext.map(str::to_string),
            metadata: serde_json::Value::Null,
        }
    }

    fn run<'m>(
        messages: &'m [Message],
        opts: &AddOptions,
        policies: &Policies,
    ) -> Result<BatchPlan<'m>> {
        let store = Mutex::new(Store::open_in_memory().unwrap());
        plan_batch(&store, "c1", messages, Records::Turns, opts, policies)
    }

    #[test]
    fn bad_input_is_refused_before_anything_is_planned() {
        let opts = AddOptions::default();
        let p = Policies::default();
        let ok = [message("hello", None)];
        let store = Mutex::new(Store::open_in_memory().unwrap());
        let err = plan_batch(&store, " ", &ok, Records::Turns, &opts, &p).unwrap_err();
        assert_eq!(err.code(), "invalid_input");
        let bad = [message("hello", None), message("  ", None)];
        assert_eq!(run(&bad, &opts, &p).unwrap_err().code(), "invalid_input");
        let orphan = AddOptions {
            parents: vec![42],
            ..AddOptions::default()
        };
        assert!(
            run(&ok, &orphan, &p).is_err(),
            "a missing parent is refused"
        );
    }

    #[test]
    fn a_turn_becomes_a_bubble_followed_by_its_facts() {
        let msgs = [message("I live in Lisbon. It is sunny.", None)];
        let plan = run(&msgs, &AddOptions::default(), &Policies::default()).unwrap();
        assert_eq!(plan.fresh.len(), 1);
        let kinds: Vec<Kind> = plan.planned.iter().map(|p| p.memory.kind).collect();
        assert_eq!(kinds[0], Kind::Episode);
        assert!(kinds[1..].iter().all(|k| *k == Kind::Fact) && kinds.len() > 1);
        let bubble = &plan.planned[0].memory;
        assert_eq!(bubble.conversation.as_deref(), Some("c1"));
        assert_eq!(bubble.w5h1.who.as_deref(), Some("Ada"));
        assert_eq!(bubble.metadata, serde_json::json!({}));
        assert_eq!(bubble.source, Source::UserInput);
        let fact = &plan.planned[1];
        assert_eq!((fact.message, fact.memory.importance), (0, FACT_IMPORTANCE));
        assert_eq!(fact.embed_text, fact.memory.text);
        assert_eq!(
            (fact.memory.occurred_at, fact.memory.session.as_deref()),
            (Some(1_000), Some("s1")),
            "a fact keeps the time and session of the message that stated it"
        );
        assert_eq!(plan.base_score, l_score(Source::UserInput, &[]));
    }

    #[test]
    fn facts_are_not_extracted_when_the_caller_says_not_to() {
        let msgs = [message("I live in Lisbon.", None)];
        let opts = AddOptions {
            extract_facts: false,
            ..AddOptions::default()
        };
        let plan = run(&msgs, &opts, &Policies::default()).unwrap();
        assert_eq!(plan.planned.len(), 1);
    }

    #[test]
    fn a_causal_cue_plans_its_cause_clause_for_embedding() {
        let msgs = [
            message("The build failed.", None),
            message("I quit because the build failed again.", None),
            message("So I went home.", None),
        ];
        let opts = AddOptions {
            extract_facts: false,
            ..AddOptions::default()
        };
        let plan = run(&msgs, &opts, &Policies::default()).unwrap();
        let causes: Vec<Option<CauseRef>> = plan.planned.iter().map(|p| p.cause.clone()).collect();
        assert_eq!(causes[0], None);
        assert_eq!(causes[1], Some(CauseRef::Clause(0)));
        assert_eq!(causes[2], Some(CauseRef::Previous));
        assert_eq!(plan.clauses.len(), 1);
        let e = embed_plan(&plan, &|texts| {
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        })
        .unwrap();
        assert_eq!((e.vectors.len(), e.clause_vectors.len()), (3, 1));
        assert_eq!(e.clause_vectors[0], vec![plan.clauses[0].len() as f32]);
    }

    #[test]
    fn stored_messages_are_skipped_and_counted() {
        let store = Mutex::new(Store::open_in_memory().unwrap());
        let first = message("hello", Some("d1"));
        store
            .lock()
            .unwrap()
            .transaction(|tx| tx.insert_message("c1", &first, 0))
            .unwrap();
        let msgs = [first.clone(), message("again", Some("d2"))];
        let plan = plan_batch(
            &store,
            "c1",
            &msgs,
            Records::Turns,
            &AddOptions::default(),
            &Policies::default(),
        )
        .unwrap();
        assert_eq!(plan.report.messages_skipped, 1);
        assert_eq!(plan.fresh.len(), 1);
        assert_eq!(plan.fresh[0].text, "again");
    }
}
