#!/usr/bin/env python3
"""Generate Somna's bundled demo dataset: assets/demo/demo.jsonl.

Six fictional people each chat with an AI assistant ("Somna") over eight weeks
(2026-09-01 to 2026-10-27). Every line of text was written for this script by the
Somna team; nothing is taken from LoCoMo or any other dataset.

The output is built compositionally and deterministically (fixed seed, standard
library only): each persona has a timeline of dated story beats (hand-written
exchanges that move arcs forward: a flat move, a job change, a race, a birth) and,
per topic, a pool of templated exchanges whose slots are filled from the persona's
facts and the state of that arc in the week the session happens. A sentence counter
rejects any candidate that would make a sentence appear more than twice in the file.

Usage:
    python3 scripts/make_demo.py            # writes assets/demo/demo.jsonl, prints counts
    python3 scripts/make_demo.py --out PATH

Output format (chat JSONL, one message per line):
    {"conversation", "role": "user"|"assistant", "name", "timestamp" (RFC 3339 UTC), "content"}
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import random
import re
import string
import sys
from pathlib import Path

SEED = 20260901
START = dt.date(2026, 9, 1)
END = dt.date(2026, 10, 27)
WEEKS = 8
ASSISTANT = "Somna"
MAX_SENTENCE_REPEATS = 2
MAX_TEMPLATE_USES = 4  # per persona; slot values differ between weeks, identical texts are skipped
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "assets" / "demo" / "demo.jsonl"

NUM_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


# --------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------


def D(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


def pretty(d: dt.date) -> str:
    return f"{d:%B} {d.day}"


class S:
    """A fact that changes on given dates: S(before, "2026-10-03", after, ...)."""

    def __init__(self, first, *changes):
        self.first = first
        self.changes = [(D(changes[i]), changes[i + 1]) for i in range(0, len(changes), 2)]

    def at(self, day: dt.date):
        v = self.first
        for d, nv in self.changes:
            if day >= d:
                v = nv
        return v


class T:
    """A templated exchange: a user line and one or more assistant replies.

    `when` restricts it relative to the arc's pivot date: "pre", "post", "near"
    (pivot within 8 days), "far" (more than 8 days away), or a callable on the state.
    """

    def __init__(self, user: str, *assistant: str, when=None):
        self.user = user
        self.assistant = list(assistant)
        self.when = when


def week_of(day: dt.date) -> int:
    return min((day - START).days // 7, WEEKS - 1)


def countdown(days: int) -> str:
    if days <= 0:
        return "no time at all"
    if days == 1:
        return "one day"
    if days < 14:
        return f"{NUM_WORDS[days] if days <= 10 else days} days"
    weeks = days // 7
    return f"{NUM_WORDS[weeks] if weeks <= 10 else weeks} weeks"


def resolve(v, day: dt.date, week: int):
    if isinstance(v, S):
        return v.at(day)
    if isinstance(v, list):
        return v[week]
    return v


class Strict(dict):
    def __missing__(self, key):
        raise KeyError(key)


def fill(tpl: str, st: dict) -> str:
    return string.Formatter().vformat(tpl, (), Strict(st))


SENT_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


def sentences(text: str):
    """Sentences of a message for the repetition check (fenced code is skipped)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\b(St|Dr|Mr|Mrs|Ms)\. ", lambda m: m.group(1) + "\u2024 ", text)
    out = []
    for part in SENT_SPLIT.split(text):
        norm = re.sub(r"\s+", " ", part).strip().lower()
        if norm and re.search(r"\w", norm):
            out.append(norm)
    return out


# --------------------------------------------------------------------------------------
# shared topic pools
# --------------------------------------------------------------------------------------

POOLS: dict[str, list[T]] = {}

POOLS["running"] = [
    T("Long run done: {long_km} km {route}, averaging about {pace} per km.",
      "{long_km} km at {pace} with {countdown} to go until {race} is right on track. Keep tomorrow properly easy so the run turns into fitness.",
      "Well done, {first} — that's {long_km} km banked. Did you eat anything on the way round, or was it water only?", when="pre"),
    T("Total for the week: {weekly_km} km. Last week was {prev_weekly_km}.",
      "Going from {prev_weekly_km} to {weekly_km} km is {trend}. See how your legs feel on your next easy day before adding more.",
      "{weekly_km} km after {prev_weekly_km} last week is {trend}. Sleep and food matter more than usual this week.", when="pre"),
    T("Body check: {niggle}.",
      "Thanks for the update, {first}. If it ever changes how you run, swap the session for the bike or rest — {race} matters more than any single workout.",
      "Noted. Keep an eye on it during the next long run and stop if it starts changing your stride.", when="pre"),
    T("What should I eat the night before a {long_km} km run? I usually just have pasta.",
      "Pasta is fine: a normal-sized, carb-heavy dinner you've eaten before, not a feast. A small breakfast about two hours before the run works for most people.",
      "Stick with the pasta and skip anything very fibrous or new. Before {race} itself you'll want exactly the same routine, so treat this as practice.", when="pre"),
    T("Is {pace} per km a sensible long-run pace if I want to finish {race} {goal}?",
      "Yes — long runs should be slower than race pace. For {goal} you'd race at roughly {goal_pace} per km, so {pace} keeps the long run aerobic.",
      "It is. Race pace for {goal} is about {goal_pace} per km, and long runs are meant to sit well below that.", when="pre"),
    T("{club} do intervals on {club_day}s. Should I join in or keep it easy this week?",
      "Join the intervals if your long run is more than two days away; otherwise run with the slower group and enjoy the company.",
      "With {countdown} until {race}, one interval session a week is plenty. Do the {club_day} one and keep everything else easy.", when="pre"),
    T("My {shoe} have about {shoe_km} km on them. Do I need new ones before {race}?",
      "At {shoe_km} km the foam is probably tired. Buy the same model now so you have a few weeks to run them in before {race_date}.",
      "Probably, yes. Get the same model rather than something new, and do at least one long run in them before race day.", when="far"),
    T("How long until {race} now? I've lost track of the weeks.",
      "{race} is on {race_date}, so you have {countdown} left.",
      "It's {countdown} until {race_date}. The hay is mostly in the barn at this point — consistency beats heroics.", when="pre"),
    T("Skipped today's run because {skip_reason}. Should I double up tomorrow?",
      "I wouldn't. One missed easy run costs you nothing; just pick the plan up again tomorrow as written.",
      "No need — missing one run won't change your {race}. Doubling up is how niggles start.", when="pre"),
    T("Do you think I should run {race} with a pacing group for {goal}?",
      "A pacing group helps if you tend to start too fast. Tuck in behind them for the first half and decide later whether to push on.",
      "If the {goal} group exists, yes — it takes the maths out of the first half. Just don't panic if they surge at the water stations.", when="pre"),
    T("I've been doing the physio exercises for my {niggle_part} every evening: {physio_ex}.",
      "Good — that's the boring work that actually fixes a {niggle_part} problem. Keep it going even once it stops hurting.",
      "Keep at it. Two or three sessions a week is enough once the {niggle_part} has settled.", when="pre"),
    T("My {pr_label} PR is {pr}. Could I realistically go faster this autumn?",
      "Your training says probably yes. A flat course on a cool day is the place to try to get under {pr}.",
      "With your long runs getting quicker, a faster {pr_label} than {pr} is very plausible. Pick a flat race and go out slightly conservative."),
    T("How much should I cut back in the last week before {race}?",
      "Cut volume by roughly 40–50% but keep a little pace in, like a few short strides. Feeling sluggish during a taper is normal.",
      "Drop the mileage by about half and keep one short run at goal pace. Sleep is the main job this week.", when="near"),
    T("Slept badly and my resting heart rate is {rhr} this morning, a good five beats higher than usual.",
      "A jump like that often means fatigue or a cold coming on. Swap today's session for an easy 30 minutes or take the day off.",
      "I'd take that seriously: rest today and see whether it settles tomorrow."),
    T("Ran {route} today — {run_note}.",
      "That sounds like a good one. {route_cap} is a great choice for an easy day.",
      "Lovely. Log it and keep the rest of the week as planned."),
    T("Can you remind me what goal I set for {race}? I keep changing my mind.",
      "You told me you're aiming to finish {goal}. With your recent long runs around {pace}, that still looks realistic.",
      "Your stated goal is {goal}. I'd keep it — nothing in your training suggests it's out of reach.", when="pre"),
    T("What's a good warm-up before a {pr_label} race?",
      "Ten minutes of easy jogging, a few drills like skips and high knees, then three or four 20-second strides at race pace. Finish about ten minutes before the start.",
      "Jog ten minutes, do some leg swings and four short strides, and get to the start line warm but not tired."),
    T("My watch says my VO2 max went up to {vo2}.",
      "Watch estimates are rough, but a rising trend lines up with your faster long runs. Nice to see.",
      "Take it as encouragement rather than gospel — but {vo2} is a good trend."),
    T("Should I be doing strength training alongside running for {race}?",
      "Yes, twice a week is plenty: squats, lunges, calf raises and a plank. Put it on easy-run days, never the day before a long run.",
      "Definitely. Twenty minutes twice a week makes the legs more durable for the last miles of {race}.", when="pre"),
    T("Gels: I'm using {gel}. How often should I take them during {race}?",
      "Roughly every 30–40 minutes, starting before you feel you need one. Practise the exact timing on your next long run.",
      "About one every 35 minutes with a few sips of water. Don't try anything new on race day.", when="pre"),
    T("Legs are still sore from {race}. When can I run again?",
      "Walk and stretch for a few days, then try an easy 20–30 minutes once stairs stop hurting — usually within a week.",
      "Give it a few days. Short walks help more than total rest; run again when you can jog down stairs without wincing.", when=lambda st: 0 <= -st["days_left"] <= 6),
    T("I'm already thinking about what to do after {race}. Maybe {next_goal}?",
      "{next_goal_cap} sounds like a good next target. Take two easy weeks first and then start building again.",
      "I like it. Recover properly first, then we can sketch a plan for {next_goal}.", when="post"),
    T("Easy run {route} this morning, the first one where nothing hurt since {race}.",
      "That's the sign you were waiting for. Keep it relaxed for another week before adding anything quick.",
      "Great to hear, {first}. Enjoy the easy miles — the next build can wait.", when="post"),
]

POOLS["sourdough"] = [
    T("Fed {starter} at {feed_time}. {starter_note}",
      "{starter_cap} sounds {starter_mood}. At your kitchen temperature of about {kitchen_temp} °C, expect it to peak in roughly {peak_hours} hours.",
      "Good. If you log feed time and peak time in {log_path} for a week, we'll see the pattern clearly."),
    T("This week's loaf: {hydration}% hydration, {flour}. {loaf_note}",
      "{hydration}% with {flour} is a nice combination. {loaf_tip}",
      "Sounds like progress. {loaf_tip}"),
    T("My kitchen is about {kitchen_temp} °C at the moment. Is that why bulk fermentation takes forever?",
      "Yes, temperature is the biggest lever. At {kitchen_temp} °C bulk can easily take {bulk_hours} hours; a warm spot like the oven with only the light on speeds it up.",
      "Almost certainly. Use warmer water when mixing (around 30 °C) and judge bulk by rise and bubbles, not the clock."),
    T("How do I know when bulk fermentation is done? I always second-guess it.",
      "Look for a 50–75% rise, a domed surface with bubbles on the sides, and a dough that jiggles when you shake the bowl.",
      "Use a straight-sided container and mark the starting height; when it's up by about half and wobbly, shape it."),
    T("The crumb on my last loaf had big tunnels near the top and dense bits at the bottom.",
      "That's the classic sign of under-fermentation. Let bulk go a bit longer next time and shape a little tighter.",
      "Tunnels plus dense patches usually mean bulk was cut short. Give it another hour or a warmer spot."),
    T("I want to try a {experiment} loaf next weekend. Any tips?",
      "For {experiment}, keep your usual hydration but add the extras at the last stretch-and-fold so the gluten is already built.",
      "Start with your base recipe and change only one thing. For {experiment}, add it after the first two folds."),
    T("Can I leave {starter} in the fridge while I'm busy this week?",
      "Yes — feed it, let it rise an hour, then refrigerate. It'll be fine for a week or two; give it two feeds at room temperature before baking.",
      "Absolutely. A well-fed starter sleeps happily in the fridge for a week; just wake it up a day before you bake."),
    T("Scored the loaf with a single {score} this time and got a proper ear for once.",
      "A proper ear means good surface tension and a confident cut. Remember what you did differently.",
      "Nice! A shallow angle and one decisive slash is most of the trick."),
    T("Baked for {bake_minutes} minutes at {oven_temp} °C, lid off for the last 20. The base was a bit pale.",
      "Put a baking tray on the rack below the pot or bake the last ten minutes directly on the rack. A pale base usually means not enough bottom heat.",
      "Try preheating the pot for a full 45 minutes. The base needs that stored heat."),
    T("I've started keeping a proper bake log at {log_path}.",
      "Great idea. Columns for flour, hydration, kitchen temperature, bulk time and a crumb photo will make patterns jump out.",
      "Perfect — bring it along whenever a loaf surprises you and we can compare it with earlier bakes."),
    T("Does the brand of flour really matter? I've been buying {flour_brand}.",
      "Protein content matters more than the brand. Around 12–13% protein gives you a stronger dough that holds shape.",
      "Sticking to one flour while you learn is the real win. {flour_brand} is fine if it's consistent."),
    T("Quick one: how long should I autolyse?",
      "Thirty to sixty minutes is plenty for most flours. Longer is fine if you're busy, just keep the salt out until later.",
      "Anywhere from 30 minutes to two hours. It's a convenience as much as a technique."),
    T("Gave a loaf to {gift_to}. {gift_note}",
      "That's the best part of baking. {gift_reply}",
      "Lovely. {gift_reply}"),
    T("Why does my starter smell like nail polish remover?",
      "That acetone smell means it's hungry. Feed it more often or at a higher ratio, like 1:5:5, for a couple of days.",
      "It's just hungry and producing acetic compounds. A couple of bigger feeds will sweeten it up."),
    T("Trying a cold retard overnight this time: shaped at {shape_time} and into the fridge until morning.",
      "Cold retarding makes scoring easier and the flavour tangier. Bake it straight from the fridge.",
      "Good plan. Twelve to sixteen hours in the fridge is a sweet spot for most doughs."),
]

POOLS["language"] = [
    T("New phrase from today's lesson with {tutor}: \"{phrase}\" — {phrase_en}.",
      "Nice one. \"{phrase}\" will come up constantly — try using it at least twice before your next lesson.",
      "Good phrase to own. Say it out loud a few times; {lang} rewards muscle memory."),
    T("My {app} streak is at {streak} days.",
      "{streak} days is real consistency, {first}. Streaks matter less than the daily habit, and you've clearly built it.",
      "Great streak. Consider adding ten minutes of listening each day now that the app habit is solid."),
    T("I'm struggling with {struggle}.",
      "{struggle_cap} trips up almost every learner. Short daily drills beat one long session — want me to quiz you on it?",
      "That's normal at your stage. Try writing five sentences a day that use it and read them out loud."),
    T("How do I say \"{ask_en}\" in {lang}?",
      "{ask_answer}",
      "{ask_answer} Try it on someone this week."),
    T("I think I know about {words} words now, according to my flashcards.",
      "That's enough to get through most everyday situations with some gestures. Keep adding words you actually need for {goal_event}.",
      "{words} words is a solid base. Focus on high-frequency verbs next; they unlock the most sentences."),
    T("Lesson with {tutor} on {lesson_day} was mostly {lesson_focus}.",
      "Sounds useful. Write down three sentences from the lesson tonight while they're fresh.",
      "{lesson_focus_cap} is exactly the right thing to practise with a real person."),
    T("Is it worth watching TV in {lang} with subtitles, or is that cheating?",
      "It's not cheating. Start with {lang} subtitles rather than English ones, so you link sounds to words.",
      "Worth it. Pick something you'd watch anyway; short episodes you can rewatch are ideal."),
    T("Remind me why I'm doing this again — {goal_event} feels far away some days.",
      "You told me {lang_reason}. {goal_event_cap} is on {goal_date}, and you're much further along than in early September.",
      "Because {lang_reason}. Keep the sessions short on hard days; the habit is what gets you to {goal_event}."),
    T("Can you quiz me on numbers in {lang}? I always freeze on prices.",
      "Sure: how would you say 47, 1,250 and 3.80? Answer in {lang} and I'll check.",
      "Let's do it. First one: 68. Then 915. Then 2,400."),
    T("I had a tiny conversation in {lang} today: {tiny_convo}.",
      "That's how it starts — real, small wins. Each one makes the next easier.",
      "Brilliant. Notice how much you understood even if you couldn't say everything."),
    T("Grammar question: {grammar_q}",
      "{grammar_a}",
      "{grammar_a} It clicks with practice."),
    T("Should I take a class or keep going with {tutor}?",
      "Keep {tutor} for speaking — one-to-one is hard to beat. Add a cheap group class only if you want structure for {goal_event}.",
      "Stay with {tutor}. Speaking time is what you need most right now."),
]

POOLS["caregiving"] = [
    T("Phoned {parent_name} this evening. {call_note}",
      "Thanks for telling me. {call_reply}",
      "That's good to know, {first}. {call_reply}"),
    T("Can you keep track of this: {parent_name}'s next appointment is {next_appt}.",
      "Noted — {next_appt}. I'll remind you when you mention that week.",
      "Got it: {next_appt}. Do you need to arrange transport or time off for it?"),
    T("{sibling_cap} and I argued again about who does what for {parent}.",
      "That's very common when one sibling is nearer. Writing a simple rota — even a shared note — can take some heat out of it.",
      "It's hard when the load isn't even. Would it help to list the tasks and ask {sibling} to own two of them?"),
    T("I'm exhausted. Between work and {parent}, I haven't had an evening off in two weeks.",
      "That's a real warning sign, {first}. Even one protected evening a week matters; is there anyone who could cover one visit?",
      "You can't pour from an empty cup. Could {sibling} take one weekend this month?"),
    T("{parent_name} is {age} and still insists {insists}.",
      "Independence means a lot at {age}. Maybe look for a compromise that keeps {parent_name} in charge but safer.",
      "That's understandable from {parent_name}'s side. Small, respectful changes usually land better than big rules."),
    T("The {med} is making {parent} {side_effect}. Is that normal?",
      "{side_effect_cap} is a known side effect of {med}. Mention it to the GP or pharmacist; sometimes changing the time of the dose helps.",
      "It can be. Keep a short log of when it happens and bring it to the next appointment."),
    T("Sorting out the paperwork for {parent}: {paperwork}.",
      "That's a lot of admin. Keep everything in one folder — {care_doc} is a good home for it.",
      "Good that you're starting now rather than in a crisis. Want a checklist for {paperwork}?"),
    T("Visited {parent_name} at {parent_home} today. {visit_note}",
      "{visit_reply}",
      "Thanks for the update. {visit_reply}"),
    T("What are good activities for someone with {dementia}?",
      "Familiar routines, short walks, music they love and looking through old photos tend to work well. Keep it calm and unhurried.",
      "Anything familiar and low-pressure: music from their twenties, simple cooking, folding laundry together."),
    T("I feel guilty that I'm not doing more for {parent}.",
      "Almost every carer says that, and it usually means you're doing a lot. You've organised {help_note}; that counts.",
      "Guilt isn't a measure of how much you're doing. From everything you've told me, {parent_name} is well looked after."),
    T("Keeping notes on {parent_name}'s good and bad days in {care_doc}.",
      "Great — dated notes are gold for doctors. Include sleep, appetite and mood, even in one line each.",
      "That log will help a lot at appointments. Bring it to {next_appt_short}."),
]

POOLS["garden"] = [
    T("Spent the afternoon at {plot}. {garden_task}",
      "Sounds like a productive day. {garden_reply}",
      "{garden_reply}"),
    T("Harvest this week: {harvest}.",
      "That's a lovely haul for {month}. Logging it in {garden_log} will show you next year what was worth the space.",
      "Nice! Anything you'd grow more of next year?"),
    T("When should I plant garlic here?",
      "In {garden_region}, mid-October to early November is ideal — the cloves need a cold spell to form proper bulbs.",
      "Plant it in the next few weeks, before the ground gets cold. Pointy end up, about 15 cm apart."),
    T("Slugs got into the {slug_target} again.",
      "Beer traps and going out with a torch after dark both work. Wool pellets around young plants help too.",
      "Annoying! Clear hiding spots like old boards near the bed and check under them in the morning."),
    T("Should I cover the beds over winter or leave them bare?",
      "Cover them: a mulch of leaves or compost, or a green manure like field beans, protects the soil structure.",
      "Don't leave them bare — even cardboard with compost on top stops the rain washing out nutrients."),
    T("Compost heap is steaming this morning.",
      "That's it working properly. Turn it in a week or two to keep the middle hot.",
      "Excellent — a hot heap means the balance of greens and browns is right."),
    T("The {problem_crop} have {problem}.",
      "{problem_reply}",
      "{problem_reply} Worth noting in {garden_log} so you can plan next year."),
    T("Thinking about next year's layout already. {layout_note}",
      "Good time to plan. Rotate the families so the same crop isn't in the same bed two years running.",
      "I like it. Sketch it now and we can check rotations against this year's beds in {garden_log}."),
    T("It rained all week so I haven't been able to do anything in the garden.",
      "A week off won't hurt anything this time of year. Use it to order seed garlic or clean the tools.",
      "The plants are enjoying it even if you're not. Good week for planning."),
    T("First frost forecast for {frost_date}. What needs protecting?",
      "Bring in anything tender — {tender} — and fleece what's left. Hardy greens like kale will actually taste sweeter after frost.",
      "Pick the last {tender} before then. Kale, leeks and garlic can handle it."),
    T("Saved seeds from the {seed_crop} today.",
      "Dry them on paper somewhere airy for a week, then store them in labelled envelopes in a cool, dry place.",
      "Nice habit. Label them with the variety and year — you'll thank yourself in spring."),
]

POOLS["coding"] = [
    T("Working on {project} again tonight. {code_task}",
      "Sounds like a good evening's work. {code_reply}",
      "{code_reply}"),
    T("{project} now has {tests} tests and they all pass.",
      "{tests} tests is solid coverage for a side project. Are the tricky cases — {edge_case} — covered?",
      "Nice. Keep adding a test every time you fix a bug; that's where the real value is."),
    T("Someone opened an issue on {project}: {issue}.",
      "Good sign that people are using it. {issue_reply}",
      "{issue_reply}"),
    T("Should I publish {project} {version} now or wait until {next_feature} is done?",
      "Ship {version} now. Small releases are easier to debug, and {next_feature} can be the next one.",
      "Release early. Users care more about a working tool today than a bigger release later."),
    T("The repo is at {repo_url} if you want the details.",
      "Thanks — I'll refer to it as the home of {project}. A short README with one example goes a long way.",
      "Noted. Make sure the README shows how to run it in one command."),
    T("Spent two hours chasing a bug in {code_file}. {bug_story}",
      "Classic. {bug_reply}",
      "{bug_reply} Add a test so it can't come back."),
    T("Which is better for config: TOML or YAML?",
      "For a small {lang} tool, TOML: fewer surprises, good library support and easy to read.",
      "TOML, unless you need deep nesting. YAML's implicit typing causes subtle bugs."),
    T("{project} has {stars} stars now. Tiny, but it's something.",
      "It's a real signal. Each of those is someone who found it useful enough to bookmark.",
      "{stars} people found it — that's a community starting. Keep the issues tidy."),
    T("Do I need CI for a project this small?",
      "A single workflow that runs the tests and a formatter on each push costs five minutes to set up and saves you embarrassment.",
      "Yes, the minimal kind: tests and lint on every push. Nothing fancy."),
    T("I keep putting off writing docs for {project}.",
      "Write the three things a new user needs: install, one example, and where to report bugs. That's enough for now.",
      "Start with a single example that shows the main feature. Docs can grow from there."),
    T("Refactoring {code_file} because it's grown to {loc} lines.",
      "{loc} lines in one file is a good time to split it. Move pure functions out first; they're easiest to test.",
      "Split by responsibility — parsing, logic, output — and keep the public interface unchanged."),
]

POOLS["kids"] = [
    T("{kid_a} {kid_a_note}",
      "{kid_a_reply}",
      "Ha — sounds like {kid_a}. {kid_a_reply}"),
    T("School update: {school_note}",
      "{school_reply}",
      "Thanks for the update. {school_reply}"),
    T("Need an idea for a rainy weekend with {kids_phrase}.",
      "Indoor camping with a blanket fort, a baking project, or a trip to the library followed by a home reading den. {kid_pick}",
      "A board-game tournament with silly prizes usually works. {kid_pick}"),
    T("Bedtime has been a battle all week.",
      "Consistency helps most: same time, same routine, screens off an hour before. Let them choose the book to give back some control.",
      "Try moving the wind-down earlier by fifteen minutes and keeping it boring and predictable."),
    T("What's a healthy packed lunch that isn't just a sandwich?",
      "Pasta salad, wraps, cheese and crackers with veg sticks, or leftover fried rice in a thermos all travel well.",
      "Make a mini 'snack plate': cheese cubes, crackers, cucumber, grapes and a boiled egg."),
    T("{kid_a} asked me {kid_question}",
      "{kid_answer}",
      "Great question from {kid_a}. {kid_answer}"),
]

POOLS["pet"] = [
    T("{pet} {pet_note}",
      "{pet_reply}",
      "Classic {pet}. {pet_reply}"),
    T("How much exercise does a {pet_kind} really need?",
      "{pet_exercise}",
      "{pet_exercise} Mental work like sniffing games counts too."),
    T("{pet} has a vet check on {vet_date}.",
      "Noted — {vet_date}. Jot down any questions beforehand; it's easy to forget them in the room.",
      "Good. Bring a list of anything odd you've noticed about {pet} lately."),
    T("Is it OK to give {pet} {treat}?",
      "{treat_answer}",
      "{treat_answer} When in doubt, ask the vet on {vet_date}."),
]

OPENERS = {
    "morning": ["Morning!", "Good morning.", "Quick one before work.", "Up early today.", "Coffee in hand, let's go.",
                "Morning, Somna.", "Before I forget:", "Early start today.", "Hi — ten minutes before I head out."],
    "midday": ["Lunch break.", "Hi again.", "Quick question.", "On my lunch break, so quickly:", "Hey Somna.",
               "Got a minute?", "Midday check-in.", "Stealing five minutes.", "Hello!"],
    "evening": ["Evening!", "Long day.", "Finally sat down.", "Hey, me again.", "Evening check-in.",
                "Hi Somna.", "Brain dump time.", "Winding down for the night.", "Sofa time."],
    "night": ["Can't sleep.", "Late one tonight.", "Still up.", "Night owl mode.", "One more thing before bed."],
}


# --------------------------------------------------------------------------------------
# personas
# --------------------------------------------------------------------------------------

PERSONAS: list[dict] = []

# ---------------------------------------------------------------- Maya Chen, Lisbon
POOLS["maya_home"] = [
    T("The tram outside my flat in Graça went past at 6:02 this morning. I really need to move.",
      "Noted: quieter flat is the priority. Are you looking to stay central, or would you trade a longer commute to the river for more space?", when="pre"),
    T("Checklist for the new flat: {move_task}.",
      "Good — one job a day keeps moving week sane. Anything on the list that needs the landlord or the NIF sorted first?",
      "That's a solid list. Book the movers early; Saturdays in Lisbon go fast.", when="pre"),
    T("Rent in Arroios will be €1,150 a month, up from €950 in Graça. Is that crazy for Lisbon?",
      "It's roughly the going rate for a one-bedroom with a balcony in Arroios right now. The extra €200 buys you sleep, which is worth a lot in marathon season.", when="pre"),
    T("How do I transfer the electricity contract to the new flat? The landlord just said 'trata disso'.",
      "You'll need the CPE code from a bill or the meter, your NIF and the contract start date. Most suppliers let you do it online in ten minutes.", when="pre"),
    T("Still unpacking. {unpack_note}",
      "One room at a time — kitchen and bed first, everything else is optional. {unpack_reply}",
      "{unpack_reply}", when="post"),
    T("Need to update my address with Tidewell, the bank and Finanças now that I live in Arroios.",
      "Finanças first, since the other two often check against it. You can change it online with your Portal das Finanças login.", when="post"),
    T("I forgot how loud Avenida Almirante Reis is on a Friday night, but the bedroom faces the courtyard so I can't hear it.",
      "The courtyard bedroom was exactly the point — sounds like the move did its job.", when="post"),
    T("The new flat gets sun on the balcony from about 3pm. I've put two chairs and a basil plant out there.",
      "That sounds like the best room in the flat now. Basil will love a sunny Lisbon balcony until November.", when="post"),
    T("My landlord in Graça still hasn't returned the deposit. It's been {deposit_days} days.",
      "In Portugal the contract usually gives a deadline; if it's passed, send a short written request with your IBAN and the check-out date. Keep it polite and in writing.", when="post"),
]

POOLS["maya_work"] = [
    T("Design review with {manager} went {review_mood}. {review_note}",
      "{review_reply}",
      "Thanks for the update. {review_reply}"),
    T("I work remotely for Tidewell, but this week I'm at the co-working space in {cowork} three days.",
      "A change of scene helps. Do you find you focus better there or just enjoy the people?",
      "Nice. Remember to keep your long-run day free of back-to-back calls."),
    T("What's a good way to run a usability test with only five participants?",
      "Five is enough to find most big problems. Give each person the same three tasks, stay silent while they work, and note where they hesitate.",
      "Pick three core tasks, record the screen, and ask them to think aloud. Patterns show up by the third participant."),
    T("My Figma file for the onboarding flow is at {figma_url} — {figma_note}",
      "Thanks, I'll think of that file as the source of truth for the onboarding work. {figma_reply}",
      "{figma_reply}"),
    T("Am I the only designer who hates writing case studies?",
      "Definitely not. A simple structure — problem, constraints, two decisions you made, result — makes them far less painful.",
      "You're in good company. Write it as a story about one hard decision; that's what hiring managers remember."),
    T("Tidewell's {project} is my main project this quarter.",
      "Got it. What does success look like for {project} — conversion, fewer support tickets, something else?",
      "Noted. I'll keep {project} in mind when you mention deadlines."),
    T("Focus was terrible today. Slack all morning, meetings all afternoon.",
      "Try blocking two hours tomorrow morning as 'heads-down' in your calendar and closing Slack for that time.",
      "Days like that happen. Pick one small design task for tomorrow morning and protect it."),
]

PERSONAS.append(dict(
    id="maya-chen", name="Maya",
    tz=[("2026-09-01", 1), ("2026-10-25", 0)],
    weekday_slots=[(7, 9, 2), (12, 14, 1), (19, 23, 4)],
    weekend_slots=[(9, 12, 2), (15, 19, 2), (20, 23, 2)],
    sessions=(3, 4),
    topics={"running": 5, "language": 3, "sourdough": 3, "maya_home": 2, "maya_work": 2, "pet": 1},
    facts=dict(first="Maya", city="Lisbon", home_area=S("Graça", "2026-10-03", "Arroios"), manager="Rui"),
    arcs={
        "running": dict(
            pivot=D("2026-10-18"), race="the Lisbon Marathon", race_date="Sunday, October 18", goal="under four hours",
            goal_pace="5:40", long_km=[24, 26, 21, 28, 30, 32, 14, 8], weekly_km=[48, 52, 40, 55, 60, 64, 36, 18],
            pace=["5:58", "5:52", "6:10", "5:49", "5:44", "5:41", "5:35", "6:25"],
            route=["along the river from Cais do Sodré to Belém", "up and down Monsanto", "out to Parque das Nações",
                   "along the river to Algés and back", "around the Parque das Nações waterfront",
                   "from Arroios up to Campo Grande", "down Avenida Almirante Reis to the river", "around Jardim da Estrela"],
            run_note=["the sunrise over the Tagus was ridiculous", "the Monsanto hills nearly finished me",
                      "I kept the same pace the whole way for once", "tailwind out, headwind back, naturally",
                      "I ran the last 3 km at goal pace and it felt controlled", "I got slightly lost starting from the new flat",
                      "legs felt fresh, so the taper is working", "the first jog after the marathon, very slow and very happy"],
            niggle=["my left knee feels a little tight on downhills", "nothing hurts, which feels suspicious",
                    "the outside of my left knee aches after about 15 km", "the knee only twinges on stairs now",
                    "my left knee has been quiet for a whole week", "hips feel strong and the knee is fine",
                    "everything feels fresh, even the knee", "my quads are wrecked but the knee survived"],
            niggle_part="left knee", physio_ex="clamshells, side planks and single-leg squats",
            club="Corredores do Tejo", club_day="Tuesday", shoe="Novablast 4s", shoe_km=[560, 600, 620, 650, 680, 40, 80, 110],
            pr_label="10k", pr=S("48:10", "2026-09-26", "47:02"), rhr=[52, 51, 54, 50, 49, 49, 48, 55],
            vo2=[46, 46, 47, 47, 48, 48, 49, 49],
            skip_reason=["a design review ran two hours over", "it was pouring and I felt sorry for myself",
                         "my knee was sore and I chickened out", "I was packing boxes until midnight",
                         "the movers rescheduled and I had to wait in", "I had a migraine",
                         "I'm tapering and got nervous", "I just didn't feel like it"],
            gel="Maurten gels", next_goal="a sub-1:45 half marathon in the spring",
        ),
        "language": dict(
            pivot=D("2026-11-21"), lang="Portuguese", tutor="Inês", lesson_day="Thursday", app="Duolingo",
            streak=[112, 119, 126, 133, 140, 147, 154, 161], words=[850, 900, 950, 1000, 1050, 1100, 1150, 1200],
            phrase=["Pode repetir, por favor?", "Quanto custa?", "Já agora", "Tenho saudades de casa",
                    "Apetece-me um galão", "Vou mudar de casa", "Estou cheia de nervos", "Consegui!"],
            phrase_en=["can you repeat that, please?", "how much is it?", "by the way", "I miss home",
                       "I feel like having a galão", "I'm moving house", "I'm so nervous", "I did it!"],
            struggle=["the difference between ser and estar", "European Portuguese swallowing half the vowels",
                      "the personal infinitive", "the past tenses, pretérito perfeito versus imperfeito",
                      "understanding people on the phone", "prepositions: em, no, na, num",
                      "the subjunctive after 'espero que'", "listening when people talk fast at the café"],
            ask_en=["I'm allergic to peanuts", "I'd like to rent a flat", "where is the post office?",
                    "I'm training for a marathon", "can I pay by card?", "the boxes go in the bedroom",
                    "good luck on Sunday", "I'm very tired but happy"],
            ask_answer=["\"Sou alérgica a amendoins.\" Worth memorising given your allergy.",
                        "\"Gostaria de arrendar um apartamento.\" In Lisbon you'll also hear \"alugar\".",
                        "\"Onde fica os correios?\" — Portuguese uses the plural, os correios.",
                        "\"Estou a treinar para uma maratona.\" Note the European 'estar a + infinitive'.",
                        "\"Posso pagar com cartão?\" Most places will say yes, though some small tascas are cash only.",
                        "\"As caixas vão para o quarto.\" Handy for moving day.",
                        "\"Boa sorte no domingo!\" You'll hear a lot of that this week.",
                        "\"Estou muito cansada, mas feliz.\" Cansada because you're a woman speaking."],
            lesson_focus=["ordering at a café without switching to English", "talking about my daily routine",
                          "describing flats and neighbourhoods", "past tense stories about my weekend",
                          "phone calls with the electricity company", "practice for the CIPLE speaking section",
                          "talking about sport and the marathon", "writing a short email to a landlord"],
            tiny_convo=["the baker asked if I wanted the bread sliced and I understood", "I asked a neighbour where to put the recycling",
                        "I told the physio where it hurt, all in Portuguese", "I chatted with a man at the bus stop about the heat",
                        "I explained to the mover which boxes were fragile", "the woman at the pharmacy complimented my accent",
                        "a spectator shouted 'força, Maya!' and I shouted 'obrigada!' back", "I booked a massage over the phone"],
            grammar_q=["why is it 'a Maya' with an article before my own name?", "when do I use 'tu' versus 'você' in Lisbon?",
                       "what's the difference between 'por' and 'para'?", "is 'estou a fazer' the same as Brazilian 'estou fazendo'?",
                       "why does 'obrigado' change to 'obrigada' for me?", "how do contractions like 'no' and 'na' work?",
                       "what's the future tense people actually use in speech?", "when do I need the subjunctive?"],
            grammar_a=["In European Portuguese it's normal to put a definite article before first names among friends — 'a Maya' sounds natural.",
                       "In Lisbon 'tu' is for friends and family; with strangers people often avoid pronouns and use the verb in the third person.",
                       "'Para' is usually about purpose or destination; 'por' is about cause, exchange or passing through.",
                       "Same meaning: European Portuguese uses 'estar a + infinitive', Brazilian uses the gerund.",
                       "It agrees with the speaker: women say 'obrigada', men say 'obrigado'.",
                       "'Em' plus the article contracts: em + o = no, em + a = na, em + um = num.",
                       "In speech most people use 'ir + infinitive', like 'vou correr', rather than the synthetic future.",
                       "After expressions of wishing, doubt or emotion, like 'espero que', the next verb goes into the subjunctive."],
            goal_event="the CIPLE exam", goal_date="November 21",
            lang_reason="you want Lisbon to feel like home and to stop switching to English at the café",
        ),
        "sourdough": dict(
            starter="Gertrude", feed_time=["7am", "8am", "10pm", "7:30am", "9am", "8am", "6am", "10am"],
            starter_note=["She doubled by lunchtime.", "She's sluggish, barely rose by 40%.", "Lots of hooch on top again.",
                          "She smells like yoghurt, which I think is good?", "She's living in a new kitchen now.",
                          "She peaked in five hours, a record.", "She's been in the fridge most of the week.",
                          "She's very bubbly and smells fruity."],
            starter_mood=["healthy", "cold rather than sick", "hungry", "happy", "settled", "very lively", "dormant but fine", "lively"],
            kitchen_temp=[24, 22, 20, 19, 23, 24, 23, 21], peak_hours=[5, 7, 9, 10, 6, 5, 6, 8],
            bulk_hours=[5, 6, 8, 9, 6, 5, 6, 7],
            hydration=[70, 70, 72, 72, 75, 75, 75, 78],
            flour=["Nacional T65 bread flour", "T65 with 10% rye", "T65 with 20% wholewheat", "T65 with 15% spelt",
                   "T80 from the organic shop", "T65 with 10% rye", "T65 only, keeping it simple", "T65 with 20% wholewheat"],
            loaf_note=["It spread like a pancake.", "Better oven spring than last time.", "Tasted great but the crumb was dense.",
                       "Proper ear, finally!", "First loaf in the new oven, which runs hot.", "Open crumb and a crackly crust.",
                       "No time to bake, so I made pizza dough instead.", "Best loaf yet, honestly."],
            loaf_tip=["A flat loaf usually means over-proofing or weak shaping; try a shorter final proof.",
                      "Keep the same shaping and you'll keep that spring.", "Dense crumb often means bulk was short — give it longer.",
                      "Remember exactly how you scored it.", "Drop the temperature by ten degrees for the first bake in an unfamiliar oven.",
                      "That's what a warm kitchen does for fermentation.", "Pizza counts as sourdough practice.",
                      "Write down everything about this one so you can repeat it."],
            log_path="~/baking/sourdough-log.csv", experiment=["olive and rosemary", "sesame crust", "walnut and raisin",
                                                               "cinnamon swirl", "semolina", "olive and rosemary", "fig and fennel",
                                                               "pumpkin seed"],
            score="long curved slash", bake_minutes=[45, 42, 45, 40, 38, 40, 42, 45], oven_temp=[240, 240, 250, 240, 230, 230, 235, 240],
            flour_brand="Nacional", shape_time=["9pm", "10pm", "8:30pm", "9:30pm", "10pm", "9pm", "11pm", "8pm"],
            gift_to=["my neighbour Dona Lurdes", "my tutor Inês", "the running club", "the guy who helped me view the flat",
                     "my new neighbours in Arroios", "the physio", "my friend Joana", "the concierge downstairs"],
            gift_note=["She gave me a jar of her marmelada in return.", "She says it's better than the bakery on her street.",
                       "It vanished in about ninety seconds after the Tuesday session.", "He asked for the recipe.",
                       "It seemed like a good way to say hello.", "She said I'm allowed to eat carbs for the next three weeks.",
                       "She's now demanding one every weekend.", "He grinned and said 'isto é pão a sério'."],
            gift_reply=["Marmelada and sourdough is a classic pairing.", "High praise from someone who lives in Lisbon.",
                        "Runners are the most grateful audience.", "Share it — teaching someone else is a good test of your own method.",
                        "Bread is a great introduction to new neighbours.", "A physio-approved loaf!",
                        "A standing order is a compliment.", "That's real bread — he means it as a big compliment."],
        ),
        "maya_home": dict(
            pivot=D("2026-10-03"),
            move_task=["ask Rui if I can take the Friday off", "get quotes from three movers", "buy boxes from the supermarket",
                       "book the movers for Saturday, October 3", "pack the kitchen last so I can still bake",
                       "change my address at Finanças", "fix the wobbly shelf", "hang the pictures"],
            unpack_note=["Miso has claimed the empty boxes.", "Found the box with the bread tins, finally.",
                         "Living out of a suitcase until the wardrobe is assembled.", "The kitchen is done; the rest is chaos.",
                         "Bought a rug for the living room.", "One box left, labelled 'misc', which I'm afraid to open.",
                         "The bookshelf is up and level.", "Curtains arrived today."],
            unpack_reply=["Cats and boxes, a perfect match.", "Priorities: bread tins first.", "The wardrobe can wait a weekend.",
                          "Kitchen first is the right call for you.", "A rug makes a flat feel lived in.",
                          "Every move ends with a misc box. Open it with tea.", "Progress!", "Curtains finish a room."],
            deposit_days=[10, 10, 10, 10, 10, 12, 19, 24],
        ),
        "maya_work": dict(
            review_mood=["well", "badly", "okay", "surprisingly well", "fine", "well", "great", "fine"],
            review_note=["Rui liked the simplified sign-up flow.", "Legal wants three more consent checkboxes on screen two.",
                         "We agreed to cut the animated intro.", "The PM finally agreed to drop the mandatory phone number.",
                         "We went through the A/B test results.", "Rui wants me to present to the whole product team.",
                         "He hinted at a bigger role again.", "Mostly planning for next quarter."],
            review_reply=["A simpler sign-up is nearly always a win.", "Consent screens can still be light — group them and use plain language.",
                          "Cutting the intro will speed up the flow.", "That's a big usability win; fewer fields, fewer drop-offs.",
                          "What did the numbers say?", "Presenting to the whole team is a good sign of trust.",
                          "Interesting — what would a bigger role look like for you?", "Planning weeks are a good time to push the ideas you care about."],
            cowork=["Cais do Sodré", "LX Factory", "Cais do Sodré", "Anjos", "Arroios", "Arroios", "Anjos", "Arroios"],
            figma_url="https://example.org/figma/tidewell-onboarding-v3",
            figma_note=["the v3 page is the latest.", "I added the error states.", "comments from Rui are pinned on the left.",
                        "the prototype link is at the top.", "I archived the old flows.", "the dark-mode frames are new.",
                        "it now has the team-lead handover notes.", "final specs are on the last page."],
            figma_reply=["Keep v3 as the single current version to avoid confusion.", "Error states are where onboarding usually breaks.",
                         "Pinned comments keep reviews focused.", "A clickable prototype makes reviews much faster.",
                         "Archiving old flows will save everyone confusion.", "Dark mode doubles the QA; worth a checklist.",
                         "Good handover notes will make the new role easier.", "Clean final specs make developers happy."],
            project="onboarding redesign",
        ),
        "pet": dict(
            pet="Miso", pet_kind="cat", vet_date="October 9",
            pet_note=["sat on my keyboard during a client call and muted me.", "has discovered the balcony railing, which terrifies me.",
                      "ate half a basil leaf and looked betrayed.", "slept on my running kit all week.",
                      "hid under the bed for a whole day after the move.", "now sits in the new window and chatters at pigeons.",
                      "sat on my medal like it was an egg.", "knocked the flour jar off the counter."],
            pet_reply=["Cats have impeccable comedic timing.", "A simple net on the balcony is worth it for peace of mind.",
                       "Basil won't hurt her, luckily.", "She's supporting your training in her own way.",
                       "Totally normal after a move; give her a quiet room and let her come out on her own.",
                       "Window TV is the best cat entertainment.", "She's proud of you.", "At least it wasn't the starter this time."],
            pet_exercise="For an indoor cat, two or three short play sessions a day with a wand toy is plenty.",
            treat=["a bit of tuna", "some of my yoghurt", "cooked chicken", "a dab of butter", "cheese", "cooked fish",
                   "a bit of sardine from the festival", "a lick of milk"],
            treat_answer=["A little plain tuna in water is fine as an occasional treat.", "A tiny bit of plain yoghurt is usually fine, but many cats are lactose intolerant.",
                          "Plain cooked chicken without seasoning is a great treat.", "Better not — butter is just fat and can upset her stomach.",
                          "A small crumb occasionally is fine, but cheese isn't great for most cats.", "Plain cooked fish without bones is fine.",
                          "Grilled sardine without salt or bones is fine in small amounts.", "Skip it; most adult cats don't digest milk well."],
        ),
    },
    beats=[
        ("2026-09-01 20:10", "running", [
            ("Hi Somna. I'm Maya — 34, originally from Vancouver, and I've been living in Lisbon since March. I work remotely as a UX designer for a fintech called Tidewell.",
             "Nice to meet you, Maya. How are you finding Lisbon after six months?"),
            ("Mostly great. I'm training for my first marathon, learning Portuguese, and trying to keep a sourdough starter called Gertrude alive. Also I'm allergic to peanuts, so please never suggest anything with satay.",
             "Got it: first marathon, Portuguese, Gertrude, and no peanuts ever. Which race are you training for?"),
            ("The Lisbon Marathon on October 18. My goal is to finish under four hours.",
             "Seven weeks out is a good place to be. Let's plan the remaining long runs around that date."),
        ]),
        ("2026-09-04 08:05", "pet", [
            ("My cat Miso knocked Gertrude's jar off the counter this morning. About half of the starter survived.",
             "Poor Gertrude! Scrape what survived into a clean jar and feed it 1:1:1 — half a starter is plenty to rebuild from."),
        ]),
        ("2026-09-09 21:15", "maya_home", [
            ("I've decided to look for a new flat. My place in Graça is tiny, the tram noise starts at six, and there's no room to stretch after runs.",
             "That makes sense. What's your budget, and which neighbourhoods are you considering?"),
            ("Up to about €1,200 a month. I'm viewing two one-bedrooms in Arroios on Saturday, one on Rua Pascoal de Melo with a balcony.",
             "Arroios is lively but the side streets are quiet. Check the bedroom orientation and the water pressure at the viewing."),
        ]),
        ("2026-09-14 19:40", "running", [
            ("Bad long run yesterday. The outside of my left knee started hurting around 15 km and I cut it short at 21.",
             "Pain on the outside of the knee that builds with distance is often IT band irritation. Stopping was the right call; avoid downhills for a few days."),
            ("I've booked a physio for Thursday the 17th. Should I run before then?",
             "Short, flat, easy runs are fine if the pain stays below about 3 out of 10. Skip anything hilly until Thursday."),
        ]),
        ("2026-09-17 18:30", "running", [
            ("Physio says it's IT band syndrome, mostly because my hips are weak. She gave me exercises and said I can keep training if the pain stays below 3 out of 10.",
             "That's a good outcome — it's manageable and you don't have to stop. Do the hip exercises daily and we'll keep the next long run a little shorter."),
        ]),
        ("2026-09-20 16:45", "maya_home", [
            ("I signed the lease on the Arroios flat! Rua Pascoal de Melo, third floor, balcony, courtyard bedroom. I'm moving on Saturday, October 3.",
             "Congratulations, Maya! A quiet courtyard bedroom is exactly what you wanted. Moving two weeks before the marathon is tight, so let's plan the long run around it."),
        ]),
        ("2026-09-25 22:10", "maya_work", [
            ("We missed today's deadline for the onboarding redesign because the staging server was down for most of Thursday, so QA couldn't test it. The release slipped to Monday.",
             "That's frustrating but not your fault — a day of lost QA has to go somewhere. Is Monday realistic, or does QA need more than the one extra day?"),
            ("Monday's fine. Rui was relaxed about it, which helped.",
             "Glad Rui took it in his stride. It might be worth asking for a staging health check before future release weeks."),
        ]),
        ("2026-09-26 11:20", "running", [
            ("New 10k PR at the Corrida do Tejo this morning: 47:02! My old best was 48:10.",
             "Over a minute off your 10k best, with a sore knee two weeks ago — brilliant. That result also says under four hours in the marathon is realistic."),
        ]),
        ("2026-10-01 21:00", "language", [
            ("Olá Somna! Hoje consegui pedir um galão e um pastel de nata sem mudar para inglês. A Inês diz que estou a melhorar muito. Ainda tenho dificuldade com o pretérito imperfeito, mas estou contente!",
             "Que bom, Maya! Pedir tudo em português é uma grande vitória. In English: you ordered a galão and a pastel de nata without switching to English, and Inês says you're improving a lot — the imperfect tense will come with practice."),
        ]),
        ("2026-10-03 20:30", "maya_home", [
            ("Moved! I live in Arroios now. Everything's in boxes, the movers were two hours late, and Miso is hiding under the bed.",
             "You did it! Two hours late is annoying but survivable. Give Miso a quiet room with her litter and food and she'll come out when she's ready."),
        ]),
        ("2026-10-08 08:10", "sourdough", [
            ("The new kitchen in Arroios is much warmer, about 24 °C, so Gertrude now doubles in five hours instead of nine. I had to move my whole baking schedule.",
             "The warmer kitchen explains it — fermentation roughly doubles in speed for every 8–10 °C. Feed her later in the day or use a 1:5:5 ratio to slow her down."),
        ]),
        ("2026-10-14 21:40", "running", [
            ("Taper week and I'm a nervous wreck. Every little twinge feels like an injury.",
             "Taper madness is real — nearly every runner feels phantom pains this week. Your training's done; the job now is sleep, carbs and not doing anything new."),
        ]),
        ("2026-10-17 20:50", "running", [
            ("Race kit is laid out: Novablast 4s, the blue singlet, four Maurten gels, and my bib number 8127. Start is 8am from Cascais.",
             "Everything sounds ready. Eat your usual breakfast about three hours before the start, and keep the first 10 km slower than feels right."),
        ]),
        ("2026-10-18 14:25", "running", [
            ("I DID IT!!! 🎉🏃‍♀️ 3:58:41 — under four hours by 79 seconds 😭 The last 5 km along the river were pure pain but I didn't walk once 💪",
             "MAYA! 🎉 3:58:41 in your first marathon, with a knee scare in September and a house move in the middle. Eat something, put your legs up and enjoy this."),
        ]),
        ("2026-10-21 19:30", "maya_work", [
            ("Big news on the work front: Rui offered me the design team lead role at Tidewell, starting November 2. I said yes.",
             "Congratulations! So from November you'll be leading the design team at Tidewell rather than working as an individual designer. How many people will you be managing?"),
            ("Three designers, one of them in Porto. I'm excited and slightly terrified.",
             "That's the right mix of feelings. Your first weeks are mostly about listening and one-to-ones."),
        ]),
        ("2026-10-24 10:15", "language", [
            ("I registered for the CIPLE A2 exam on November 21. It's at the university, and it costs €80.",
             "Good — a fixed date will focus the practice. We can aim Inês's Thursday lessons at the speaking and listening parts for the next four weeks."),
        ]),
    ],
    callbacks=[
        ("2026-09-19", "2026-09-25", "Last week your left knee was hurting — are the physio exercises helping?"),
        ("2026-10-05", "2026-10-11", "How is Miso settling into the Arroios flat?"),
        ("2026-10-20", "2026-10-26", "How are your legs feeling a few days after the marathon?"),
        ("2026-09-28", "2026-10-02", "Did the onboarding release go out on Monday after the staging outage?"),
    ],
))

# ---------------------------------------------------------------- Daniel Okafor, Manchester
POOLS["daniel_work"] = [
    T("Three night shifts in a row in A&E this week. {shift_note}",
      "That's a brutal run of nights. {shift_reply}",
      "{shift_reply}", when="pre"),
    T("How do I answer 'tell me about a time you disagreed with a colleague' for a district nursing interview?",
      "Pick a real clinical example, explain how you raised it calmly with evidence, and finish with what happened to the patient. Keep it to two minutes.", when=lambda st: st["day"] < D("2026-09-17")),
    T("Handed in my notice at St. Mary's. My last shift in A&E is October 3.",
      "That's a big step after years in A&E. Are you planning anything for your last shift?", when=lambda st: D("2026-09-24") <= st["day"] < D("2026-10-03")),
    T("Community nursing is so different from A&E. {community_note}",
      "{community_reply}",
      "It sounds like a big adjustment. {community_reply}", when="post"),
    T("Any tips for sleeping in the day after a night shift?",
      "Blackout blinds, earplugs, a cool room, and a fixed sleep window like 9am to 4pm. Avoid caffeine in the last four hours of the shift.", when="pre"),
    T("I'm on earlies now and I keep waking at 3am out of night-shift habit.",
      "Your body clock takes a couple of weeks to flip. Get bright light first thing in the morning and keep the bedtime the same every night.", when="post"),
    T("How do I keep patient visit notes organised when I'm driving between houses all day?",
      "Record the key points right after each visit while parked, even as voice notes, then write them up in one block. The EMIS app on the tablet helps if your trust uses it.", when="post"),
    T("One of the charge nurses, {colleague}, {colleague_note}",
      "{colleague_reply}",
      "Sounds like a good colleague to have. {colleague_reply}"),
]

PERSONAS.append(dict(
    id="daniel-okafor", name="Daniel",
    tz=[("2026-09-01", 1), ("2026-10-25", 0)],
    weekday_slots=[(6, 8, 2), (13, 15, 1), (20, 23, 3)],
    weekend_slots=[(8, 11, 2), (14, 18, 2), (20, 22, 2)],
    sessions=(3, 4),
    topics={"caregiving": 4, "daniel_work": 3, "garden": 3, "running": 4, "kids": 2},
    facts=dict(first="Daniel", city="Manchester", colleague=S("Bernie", "2026-10-06", "Priyanka"),
               kids_phrase="Tobi and Zara"),
    arcs={
        "caregiving": dict(
            parent="Mum", parent_name="Grace", age=74, sibling="my sister Ngozi",
            condition=S("memory problems", "2026-09-10", "early-stage Alzheimer's"), med="donepezil",
            dementia=S("-", "2026-09-10", "early-stage Alzheimer's"),
            parent_home="her flat in Stretford", care_doc="~/Documents/mum/care-notes.docx",
            call_note=["She'd forgotten we talked yesterday but was cheerful.", "She asked about Dad again, as if he were still alive.",
                       "She remembered Zara's birthday is coming up, which made me so happy.", "She was upset because she couldn't find her glasses.",
                       "She sounded tired and a bit flat.", "She told me all about the carer, who she likes.",
                       "She'd been to church with Auntie Bisi and was buzzing.", "She was confused about what day it was but in good spirits."],
            call_reply=["Cheerful matters more than remembering.", "That's hard to hear. Gently redirecting to a happy memory of him often works better than correcting her.",
                        "Moments like that are worth holding on to.", "A fixed spot for glasses, like a bright tray by the door, can save a lot of distress.",
                        "Worth noting in the care log in case it becomes a pattern.", "That's a relief — liking the carer makes everything easier.",
                        "Church with her sister sounds like the perfect routine for her.", "Day confusion is common. A big clock with the date can help."],
            next_appt=["the memory clinic at Wythenshawe on September 10 at 10:30", "a GP review on September 24",
                       "the GP review on Thursday the 24th", "the carer assessment on September 29",
                       "a pharmacy medication review on October 8", "the memory nurse home visit on October 15",
                       "the memory nurse home visit on October 15", "a follow-up at the memory clinic on November 12"],
            next_appt_short=["the clinic", "the GP", "the GP", "the assessment", "the pharmacist", "the memory nurse", "the memory nurse", "the clinic"],
            insists=["on taking the bus to the market by herself", "she doesn't need anyone checking on her",
                     "on cooking jollof for everyone on Sundays", "she can manage her own tablets",
                     "the carer is a 'nice visitor' rather than a carer", "on walking to church alone",
                     "on doing her own shopping", "she'll host Christmas this year"],
            side_effect=["a bit nauseous in the mornings", "have vivid dreams", "a bit nauseous", "sleepy after lunch",
                         "lose her appetite", "have vivid dreams", "dizzy when she stands up", "a bit nauseous"],
            paperwork=["the blue badge application", "the Attendance Allowance form", "the lasting power of attorney forms",
                       "the council tax reduction for dementia", "the carer's assessment paperwork", "registering the LPA with the Office of the Public Guardian",
                       "the Attendance Allowance form", "telling the DVLA she's stopped driving"],
            visit_note=["She'd made pepper soup and insisted I take some home.", "The flat was spotless, but the fridge was full of out-of-date milk.",
                        "We looked through old photos from Lagos and she told me stories I'd never heard.", "She'd left the gas on again, just for a few minutes.",
                        "She was calm and we watched Countdown together.", "The carer had left a note saying she'd eaten well all week.",
                        "She was tired and a bit tearful.", "She asked me to help her write her Christmas card list already."],
            visit_reply=["Sounds like a good day for her.", "A weekly fridge check could become part of the visit routine.",
                         "Those stories are worth writing down while she can tell them.", "A gas safety valve or a hob guard is worth asking the council about.",
                         "Quiet, familiar routines like that are gold.", "Good to have that reassurance from the carer.",
                         "Tearful days happen. Being there is the main thing.", "That's lovely — it gives her a project she enjoys."],
            help_note=S("the memory clinic appointment", "2026-09-28", "a morning carer, the LPA and the memory clinic follow-up"),
        ),
        "daniel_work": dict(
            pivot=D("2026-10-06"),
            shift_note=["We had two cardiac arrests before 2am.", "Corridor care again, 14 patients waiting for beds.",
                        "Quiet night, for once.", "A drunk lad headbutted the triage screen.", "My last set of nights, ever.",
                        "-", "-", "-"],
            shift_reply=["That's a heavy night even by A&E standards. Eat something proper before you sleep.",
                         "Corridor care is exhausting and demoralising. It's not a reflection on your nursing.",
                         "Enjoy it — quiet nights are rare.", "I hope nobody was hurt. Please report it, even if it feels routine.",
                         "The end of an era. Sleep well.", "-", "-", "-"],
            community_note=["-", "-", "-", "-", "-", "I spent more time driving than with patients today.",
                            "I had twelve visits, mostly wound care and insulin.", "I had a cup of tea in six different living rooms today."],
            community_reply=["-", "-", "-", "-", "-", "Driving time shrinks once you learn the patch and the routes.",
                             "Twelve is a full list. Wound care gets faster with familiarity too.", "That's the best bit of community nursing, people say."],
            colleague_note=["covered my break so I could phone Mum.", "showed me a trick for difficult cannulas.",
                            "told me to go for the district nursing job.", "is organising my leaving do.",
                            "cried when I said goodbye, which set me off.", "is my new mentor and knows every street in Sale.",
                            "drove with me on my first solo round.", "says I'm a natural at home visits."],
            colleague_reply=["That kind of cover is worth a lot.", "Good tricks get passed down like that.",
                             "Sounds like she knows you well.", "Enjoy the send-off; you've earned it.",
                             "Leaving a team you like is hard.", "A mentor who knows the patch makes the first months much easier.",
                             "A supported first solo round is the right start.", "High praise for your second week."],
        ),
        "garden": dict(
            plot="plot 14 at the Chorlton allotments", garden_log="~/allotment/harvest-2026.csv", garden_region="Manchester",
            garden_task=["Cleared the bolted lettuce and weeded the onion bed.", "Lifted the last of the potatoes.",
                         "Cut back the raspberry canes that fruited.", "Spread a barrow of manure over the empty bed.",
                         "Tobi helped me dig out the bindweed.", "Planted two rows of garlic, Germidour and Solent Wight.",
                         "Sowed field beans as green manure.", "Tidied the shed and fixed the water butt."],
            garden_reply=["Onions appreciate the space.", "How was the crop this year?", "That sets them up well for next summer.",
                          "The worms will pull it in over winter.", "Teenage labour is the best labour.", "Perfect timing for garlic.",
                          "Field beans are great for the soil.", "A working water butt will pay off next summer."],
            harvest=["runner beans, courgettes and the first squash", "a bucket of potatoes and a few late raspberries",
                     "two pumpkins and more runner beans than we can eat", "leeks and chard",
                     "the last tomatoes, still green", "kale and a few beetroot", "leeks and the final carrots", "kale, leeks and a single brave courgette"],
            slug_target=["lettuces", "chard", "young kale", "brassicas", "garlic bed", "spring cabbages", "chard", "field beans"],
            problem_crop=["tomatoes", "courgettes", "leeks", "sprouts", "squash", "kale", "leeks", "garlic"],
            problem=["blight on the lower leaves", "powdery mildew", "orange spots on the leaves", "mealy grey aphids",
                     "soft patches on the skin", "whitefly under the leaves", "rust, I think", "yellow tips already"],
            problem_reply=["Blight spreads fast in wet weather; strip affected leaves and pick the green fruit to ripen indoors.",
                           "Mildew this late in the season is normal. Remove the worst leaves and enjoy the last fruits.",
                           "That sounds like leek rust. It's mostly cosmetic; the leeks are still fine to eat.",
                           "Mealy cabbage aphids — squash them or blast them off with water.",
                           "Soft patches mean rot; use those squash first and cure the rest somewhere dry.",
                           "Cabbage whitefly is mostly cosmetic on kale. Wash the leaves before cooking.",
                           "Rust on leeks is common in damp autumns; it rarely ruins the crop.",
                           "Yellow tips this early can be normal transplant stress. Keep an eye on it."],
            layout_note=["I want a proper bed for asparagus.", "Maybe a small polytunnel.", "Fewer courgettes, more beans.",
                         "Zara wants a sunflower patch.", "Squash along the fence this time.", "Mum wants me to grow bitter leaf.",
                         "A strawberry bed near the gate.", "Moving the compost bins to the shady corner."],
            frost_date=["late October", "late October", "the middle of October", "mid-October",
                        "next Thursday", "this weekend", "Tuesday night", "tomorrow night"],
            tender="the last tomatoes, courgettes and any squash still on the vine",
            seed_crop=["runner beans", "tomatoes", "calendula", "runner beans", "chillies", "sunflowers", "poppies", "borlotti beans"],
        ),
        "running": dict(
            pivot=D("2026-10-11"), race="the Manchester Half", race_date="Sunday, October 11", goal="under two hours",
            goal_pace="5:40", long_km=[14, 15, 16, 17, 18, 12, 8, 10], weekly_km=[30, 32, 34, 36, 38, 28, 15, 22],
            pace=["6:20", "6:15", "6:12", "6:05", "6:02", "5:58", "6:30", "6:10"],
            route=["along the Mersey from Jackson's Boat", "round Chorlton Water Park", "out to Sale Water Park and back",
                   "along the Fallowfield Loop", "through Chorlton Ees", "round Wythenshawe Park",
                   "along the canal towpath in Stretford", "a slow loop of Chorlton Meadows"],
            run_note=["it chucked it down the whole way", "straight after a night shift, which was a mistake",
                      "I finally felt like a runner", "Tobi rode his bike beside me the whole way", "the calf held up fine",
                      "mostly to clear my head after visiting Mum", "a recovery jog, legs still heavy from the half",
                      "I ran home from my new work base"],
            niggle=["my right calf is tight after night shifts", "calf is fine, knees are fine, just tired",
                    "the calf niggled again on the hills", "the calf seems happier since I started eccentric raises",
                    "nothing to report, touch wood", "legs feel springy with the taper", "everything aches after the half in the good way",
                    "all clear"],
            niggle_part="right calf", physio_ex="eccentric calf raises off the bottom stair and some foam rolling",
            club="the Chorlton parkrun crew", club_day="Saturday", shoe="Pegasus 40s", shoe_km=[410, 430, 450, 470, 490, 510, 520, 540],
            pr_label="5k", pr=S("26:40", "2026-09-19", "25:55", "2026-10-03", "25:31"), rhr=[58, 61, 57, 57, 56, 55, 57, 56],
            vo2=[41, 41, 42, 42, 43, 43, 43, 44],
            skip_reason=["I was on nights and slept through my alarm", "Mum had a bad day and I went round",
                         "Zara was off school with a temperature", "I had interview prep to finish", "my shift overran by three hours",
                         "it was my first week in the new job and I was shattered", "my legs still hate me after the half",
                         "the rain was biblical"],
            gel="SiS gels", next_goal="the Manchester Marathon in April",
        ),
        "kids": dict(
            kid_a=["Tobi", "Zara", "Tobi", "Zara", "Tobi", "Zara", "Tobi", "Zara"],
            kid_a_note=["has lost his school blazer twice in his first week of Year 7.", "wants a hamster more than anything in the world.",
                        "has decided he wants to be a paramedic, not a nurse like me, because 'ambulances are cooler'.",
                        "read a whole chapter book by herself for the first time.",
                        "made the Year 7 football team as a defender.", "turned 8 and hasn't stopped talking about her hamster Pudding.",
                        "is teaching his grandma to play Uno.", "asked if Grandma will forget her one day."],
            kid_a_reply=["Name labels in everything — it's a rite of passage.", "A classic seven-year-old campaign.",
                         "Ambulances are objectively cool. Either way, the caring gene is clearly there.",
                         "That's a big milestone. Keep the library trips coming.", "Congratulations to him! Defence builds patience.",
                         "Pudding is a perfect hamster name.", "That's lovely for both of them; card games are great for memory.",
                         "That's a tender question. Honest, simple answers help: Grandma's brain is poorly, but she'll always love her."],
            school_note=["Tobi started Year 7 at Chorlton High and already has more homework than I expected.",
                         "Zara's teacher says she's a strong reader but rushes her maths.",
                         "Parents' evening for Tobi is on October 1.", "Zara's class is doing a topic on the Romans.",
                         "Tobi got a merit for his science project on volcanoes.", "Half-term starts October 23.",
                         "Zara got picked to read in assembly.", "Both kids are off for half-term this week."],
            school_reply=["Secondary homework is a shock at first; a fixed homework slot after tea helps.",
                          "Rushing maths is common for confident readers. Ask her to explain her working aloud.",
                          "Noted — parents' evening on October 1.", "Romans are great fun; a shield-making project at home could go down well.",
                          "Volcanoes are always a winner. Well done Tobi.", "Half-term from October 23 — will they spend time with Grace?",
                          "How exciting for her! Practice at bedtime would help her nerves.", "Enjoy it — maybe a day trip to the Science and Industry Museum?"],
            kid_pick="Zara would probably love the fort; Tobi might prefer being in charge of the baking.",
            kid_question=["why the moon follows the car.", "why Grandma keeps asking the same question.", "how vaccines work.",
                          "whether hamsters dream.", "why I'm changing jobs.", "why leaves change colour.", "what a half marathon is for.",
                          "if we can visit Nigeria next summer."],
            kid_answer=["It's so far away that as you move, it stays in nearly the same spot in the sky compared with nearby trees.",
                        "Her brain is having trouble storing new memories, so each time feels like the first time to her.",
                        "Vaccines show your immune system a harmless 'wanted poster' of a germ, so it recognises it later.",
                        "Scientists think many mammals, including rodents, do have dream-like brain activity during sleep.",
                        "You could say you want to spend more time at home and help people in their own houses.",
                        "The green chlorophyll breaks down in autumn, revealing the yellow and orange pigments that were there all along.",
                        "It's a challenge to see how far you can push yourself — and an excuse for a medal.",
                        "That's a lovely family conversation; maybe start by looking at photos of Lagos with Grandma."],
        ),
    },
    beats=[
        ("2026-09-02 07:40", "daniel_work", [
            ("Morning. Just off a night shift — I'm a nurse in A&E at St. Mary's in Manchester. I could use help keeping track of things: my mum's appointments, my running, the allotment.",
             "Happy to help, Daniel. Get some sleep first — then tell me about your mum whenever you're ready."),
        ]),
        ("2026-09-02 19:10", "caregiving", [
            ("My mum Grace is 74 and lives on her own in Stretford. She's been getting confused lately and has left the gas on twice. We've got a memory clinic appointment on September 10.",
             "That sounds worrying. I'll keep September 10 in mind. Is anyone else in the family helping?"),
            ("My sister Ngozi is in Leeds, so it's mostly me. I'm married to Funmi, and we've got two kids: Tobi is 11 and Zara is 7.",
             "Got it — Funmi, Tobi (11) and Zara (7), with Ngozi helping from Leeds. That's a lot to juggle alongside nights in A&E."),
        ]),
        ("2026-09-10 16:20", "caregiving", [
            ("The memory clinic diagnosed Mum with early-stage Alzheimer's. They've started her on donepezil, 5 mg at night, and they'll review her in eight weeks.",
             "I'm sorry, Daniel. Early diagnosis does mean treatment and planning can start now. How did your mum take the news?"),
            ("Better than me, honestly. She said 'God knows what He's doing' and asked what's for dinner.",
             "That sounds like a woman with a lot of faith and a good sense of priorities. Look after yourself tonight too."),
        ]),
        ("2026-09-14 21:05", "daniel_work", [
            ("I've got an interview on Thursday the 17th for a band 6 community nurse post with the Trafford district nursing team. Days only, no nights.",
             "That would be a huge change for your sleep and your family time. Want to practise some answers?"),
        ]),
        ("2026-09-19 10:30", "running", [
            ("New 5k PR at Chorlton parkrun: 25:55! Knocked 45 seconds off my old best of 26:40.",
             "Brilliant, Daniel. That 5k time suggests a sub-2 half on October 11 is well within reach."),
        ]),
        ("2026-09-22 13:40", "daniel_work", [
            ("They offered me the job! Band 6 community nurse with the Trafford district nursing team, starting October 6. I'm handing in my notice at St. Mary's tomorrow.",
             "Congratulations! No more nights, and more time for your mum and the kids. How are you feeling about leaving A&E?"),
            ("Mixed. I've been there nine years. But I can't keep doing nights with Mum the way she is.",
             "Nine years is a long time; it's okay to grieve it a little. It sounds like the right move for this stage of your life."),
        ]),
        ("2026-09-28 20:15", "caregiving", [
            ("Mum missed two doses of donepezil last week because the pill organiser got moved into the wrong cupboard, so now a carer from Homecare Plus comes every morning at 9 to check she's taken her tablets.",
             "That's a sensible fix. A daily visit also gives you a second pair of eyes on how she's doing."),
        ]),
        ("2026-10-06 18:20", "daniel_work", [
            ("First day as a district nurse done. Nine home visits around Sale and Stretford: leg ulcers, a catheter change and a lot of tea.",
             "Welcome to community nursing! How did it feel compared with A&E?"),
            ("Slower, calmer, and I actually got to know my patients. I was home for tea with the kids for the first time in ages.",
             "That's exactly what you were hoping for. Enjoy the family dinners."),
        ]),
        ("2026-10-09 19:00", "kids", [
            ("Zara turned 8 today! We finally got her the hamster — she's named it Pudding.",
             "Happy birthday to Zara! Eight and a hamster called Pudding sounds like a perfect day."),
        ]),
        ("2026-10-11 13:05", "running", [
            ("Manchester Half done in 1:57:48! Sub-2 hours. Funmi and the kids were at mile 11 with a sign that said 'RUN DADDY RUN'.",
             "1:57:48 — you smashed the under-two-hours goal! A sign from the family at mile 11 is the best fuel there is."),
        ]),
        ("2026-10-16 20:40", "caregiving", [
            ("We finally sent the lasting power of attorney forms for Mum's health and finances to the Office of the Public Guardian. Ngozi and I are both attorneys.",
             "That's a big weight off. Registration usually takes a few months, so it's good you started now. Keep copies in ~/Documents/mum/ with the care notes."),
        ]),
        ("2026-10-24 11:30", "garden", [
            ("Took Mum to the allotment this morning. She sat in the sun with a flask of tea and told the kids how she grew okra in Lagos.",
             "What a lovely morning for all of you. Maybe a small okra experiment next summer, in her honour?"),
        ]),
    ],
    callbacks=[
        ("2026-09-12", "2026-09-17", "How is your mum getting on with the donepezil so far?"),
        ("2026-10-07", "2026-10-10", "How are the first days with the district nursing team going?"),
        ("2026-10-12", "2026-10-15", "How are your legs after the half on Sunday?"),
        ("2026-09-18", "2026-09-21", "How did the interview on Thursday go?"),
    ],
))

# ---------------------------------------------------------------- Priya Raman, Berlin
POOLS["priya_travel"] = [
    T("Kyoto planning: {trip_task}.",
      "{trip_reply}",
      "Good progress. {trip_reply}", when="pre"),
    T("Should I get a JR Pass for Osaka, Kyoto, Nara and one day trip to Himeji?",
      "Probably not — since the 2023 price rise, a pass rarely pays off for a Kansai-only trip. An ICOCA card plus a single return Shinkansen ticket to Himeji is cheaper.", when="pre"),
    T("I booked two nights at a ryokan in Arashiyama for October 16 and 17. It includes a kaiseki dinner and they said they can do it vegetarian.",
      "Lovely. Confirm the vegetarian request again by email a week before — and ask whether dashi is made with bonito, since that's the usual hidden fish.", when="pre"),
    T("How much cash should I bring to Japan? I've read a lot of places don't take cards.",
      "Card acceptance is much better than it was, but small temples, shrines and older restaurants are often cash-only. Around ¥30,000 to start and withdrawing at 7-Eleven ATMs works well.", when="pre"),
    T("Packing question: how many layers for Kyoto in mid-October?",
      "Expect about 15–24 °C: T-shirts, one warm layer for evenings and a light rain jacket. Shoes you can slip off easily for temples and the ryokan.", when="pre"),
    T("Vegetarian food in Kyoto — where do I even start?",
      "Shōjin ryōri, the Buddhist temple cuisine, is fully vegetarian — try it at a temple in Arashiyama. Otherwise, look for tofu restaurants and ask about dashi.", when="pre"),
    T("Today in Japan: {japan_note}",
      "{japan_reply}",
      "That sounds wonderful, Priya. {japan_reply}", when=lambda st: D("2026-10-13") <= st["day"] <= D("2026-10-23")),
    T("Back in Berlin and jet-lagged. {home_note}",
      "{home_reply}", when=lambda st: st["day"] >= D("2026-10-24")),
]

POOLS["priya_work"] = [
    T("Standup today was about {ticket}.",
      "{ticket_reply}",
      "Sounds like a typical sprint. {ticket_reply}"),
    T("My manager {manager} asked me to {ask}.",
      "{ask_reply}",
      "Okay. {ask_reply}"),
    T("Interview prep: they want a system design round on {design_topic}.",
      "Start with requirements and scale, sketch the main components, then dig into the hardest part — for {design_topic}, that's {design_hard}.",
      "Talk through trade-offs out loud. For {design_topic}, expect questions about {design_hard}.", when=lambda st: st["day"] <= D("2026-09-23")),
    T("Is it rude to negotiate a job offer from a startup?",
      "Not at all — startups expect it. Ask politely with a specific number and a reason, and negotiate equity and start date too, not just salary.", when=lambda st: D("2026-09-18") <= st["day"] <= D("2026-09-24")),
    T("Notice period update: {notice_note}",
      "{notice_reply}", when=lambda st: D("2026-09-28") <= st["day"] <= D("2026-10-11")),
    T("Loomline runs its services on Kubernetes and I'm the one everyone asks about Helm charts.",
      "Being the Helm person is useful and a little dangerous — write down what you know before you leave for Cartwheel.",
      "That's a classic 'bus factor of one' situation. A short runbook would protect the team.", when=lambda st: D("2026-09-24") <= st["day"] <= D("2026-10-09")),
]

POOLS["climbing"] = [
    T("Bouldering session at {gym}: {climb_note}",
      "{climb_reply}",
      "Nice session. {climb_reply}"),
    T("How often should I climb per week without wrecking my fingers?",
      "Two or three sessions with at least a rest day in between is a sensible ceiling for most people. Fingers adapt much more slowly than muscles.",
      "Three at most, never on consecutive days — tendons need time to catch up."),
    T("Should I start hangboarding?",
      "Only once you've been climbing consistently for a year or more, and start with very low loads. For now, climbing itself is the best finger training.",
      "Wait until your finger feels completely normal, then start very gently with a structured plan.", when=lambda st: st["day"] < D("2026-10-02")),
    T("Finger update: {finger_note}",
      "{finger_reply}", when=lambda st: D("2026-10-03") <= st["day"] <= D("2026-10-27")),
    T("My climbing partner {partner} {partner_note}",
      "{partner_reply}"),
]

PERSONAS.append(dict(
    id="priya-raman", name="Priya",
    tz=[("2026-09-01", 2), ("2026-10-13", 9), ("2026-10-24", 2), ("2026-10-25", 1)],
    weekday_slots=[(8, 9, 1), (12, 14, 2), (19, 24, 4)],
    weekend_slots=[(10, 13, 2), (16, 19, 1), (21, 24, 3)],
    sessions=(3, 4),
    topics={"coding": 4, "language": 3, "priya_travel": 3, "priya_work": 3, "climbing": 2},
    topic_off={"climbing": [("2026-09-29", "2026-10-02"), ("2026-10-12", "2026-10-23")],
               "priya_work": [("2026-10-10", "2026-10-27")]},
    facts=dict(first="Priya", city="Berlin", manager="Jonas", partner="Lea", gym="the bouldering hall on Hermannstraße"),
    arcs={
        "coding": dict(
            project="ledgerline", lang="Rust", repo_url="https://example.org/priya/ledgerline",
            code_file=["src/parse.rs", "src/categorise.rs", "src/parse.rs", "src/rules.rs", "src/main.rs", "src/report.rs", "src/rules.rs", "src/categorise.rs"],
            code_task=["Adding support for the N26 CSV export.", "Writing the rules engine that maps merchants to categories.",
                       "Trying to make the parser borrow instead of clone.", "Adding a --month flag to the report.",
                       "Setting up GitHub Actions with cargo test and clippy.", "Adding colour output to the monthly report.",
                       "Fixing the date parsing for DKB exports.", "Writing the README examples."],
            code_reply=["Each bank's CSV has its own quirks, so one fixture file per bank is worth it.",
                        "Keep the rules in a TOML file so you can edit them without recompiling.",
                        "Borrowing from the input buffer usually means putting a lifetime on the record struct.",
                        "A --month flag is a nice small win; use chrono to parse it.",
                        "clippy in CI catches a lot of small things before they pile up.",
                        "Respect NO_COLOR and detect non-terminal output so pipes stay clean.",
                        "German banks love DD.MM.YYYY — parse with an explicit format string.",
                        "Good READMEs lead with one copy-pasteable example."],
            tests=[12, 19, 24, 31, 38, 44, 47, 52], stars=[3, 5, 8, 14, 21, 27, 30, 36],
            version=["v0.1.1", "v0.2.0", "v0.2.0", "v0.2.0", "v0.2.1", "v0.3.0", "v0.3.0", "v0.3.1"],
            next_feature=["N26 support", "the rules engine", "borrowed parsing", "the --month flag", "colour output",
                          "DKB support", "budgets", "JSON output"],
            edge_case="empty files, BOM headers and negative amounts with commas",
            issue=["the parser crashes on a UTF-8 BOM", "someone wants Revolut support", "amounts with a comma as decimal separator come out wrong",
                   "a request for JSON output", "the binary is 9 MB", "a typo in the README", "categories are case-sensitive",
                   "a feature request for budget alerts"],
            issue_reply=["Strip the BOM before handing bytes to the CSV reader.", "Ask them for an anonymised sample export.",
                         "Parse amounts with the bank's locale in mind rather than assuming a dot.", "serde_json makes that a small change.",
                         "Set opt-level and strip symbols in the release profile; it usually halves the size.", "Easy first merge — thank them.",
                         "Normalise to lowercase when loading the rules.", "Label it as a good idea for later; budgets are a bigger feature."],
            bug_story=["The BOM was making the first column name invisible-different.", "I was sorting by string, so 10 came before 9.",
                       "A trailing semicolon in Sparkasse exports added an empty column.", "Rules matched 'Rewe' inside 'Brewery'.",
                       "The test only failed in CI because of the timezone.", "Colour codes leaked into the CSV output.",
                       "chrono was parsing 03.10 as March 10.", "A missing newline at the end of the file dropped the last row."],
            bug_reply=["BOMs are invisible until they aren't.", "Sort numerically or zero-pad — string sorting bites everyone once.",
                       "Trailing delimiters are a classic CSV trap; enable flexible mode or trim.", "Use word boundaries in the matcher.",
                       "Pin the timezone in tests with an explicit offset.", "Only emit colour when stdout is a terminal.",
                       "Always give chrono the explicit format: %d.%m.%Y.", "The csv crate handles that if you don't split lines yourself."],
            loc=[280, 340, 410, 460, 520, 380, 300, 320],
        ),
        "language": dict(
            pivot=D("2026-10-13"), lang="Japanese", tutor="Haruka-sensei", lesson_day="Monday", app="WaniKani",
            streak=[38, 45, 52, 59, 66, 73, 80, 87], words=[300, 360, 420, 480, 540, 600, 700, 760],
            phrase=["すみません、駅はどこですか？", "これをください", "予約しています", "ベジタリアンです",
                    "お会計をお願いします", "大丈夫です", "写真を撮ってもいいですか？", "ありがとうございました"],
            phrase_en=["excuse me, where is the station?", "this one, please", "I have a reservation", "I'm vegetarian",
                       "the bill, please", "I'm fine / no thank you", "may I take a photo?", "thank you very much (for what you did)"],
            struggle=["particles, especially は versus が", "reading katakana quickly", "counting things with the right counters",
                      "keigo, the polite forms", "listening at natural speed", "remembering kanji I learned last week",
                      "the te-form", "speaking without translating in my head first"],
            ask_en=["I'm vegetarian, no fish or meat please", "where is the bus stop for Arashiyama?", "is there dashi in this?",
                    "I'd like to buy an ICOCA card", "can I leave my luggage here?", "two tickets to Nara, please",
                    "this is delicious", "I'll come back next year"],
            ask_answer=["「ベジタリアンです。肉と魚はだめです。」 (Bejitarian desu. Niku to sakana wa dame desu.)",
                        "「嵐山行きのバス停はどこですか？」 (Arashiyama-iki no basutei wa doko desu ka?)",
                        "「これにだしは入っていますか？」 (Kore ni dashi wa haitte imasu ka?)",
                        "「イコカを買いたいです。」 (Ikoka o kaitai desu.)",
                        "「荷物を預けてもいいですか？」 (Nimotsu o azukete mo ii desu ka?)",
                        "「奈良まで二枚お願いします。」 (Nara made nimai onegaishimasu.)",
                        "「とてもおいしいです！」 (Totemo oishii desu!)",
                        "「また来年来ます。」 (Mata rainen kimasu.)"],
            lesson_focus=["self-introductions", "ordering in restaurants", "asking for directions", "counters for people and tickets",
                          "polite requests with ください and お願いします", "role-playing a ryokan check-in", "talking about my trip",
                          "describing what I did in Kyoto"],
            tiny_convo=["I said hello to the owner of the Japanese grocery on Kantstraße and she replied in Japanese",
                        "I introduced myself to Haruka-sensei's cat, which didn't count but felt good",
                        "I asked the ramen place for a vegetarian option and understood the answer",
                        "I ordered at the Japanese café in Mitte without pointing",
                        "I asked a station guard in Osaka for the right platform",
                        "the ryokan host and I talked about the weather for two whole minutes",
                        "I bought a bus pass in Nara and only needed one gesture",
                        "I told Haruka-sensei about my trip, all in Japanese"],
            grammar_q=["what's the difference between は and が?", "why are there three writing systems?", "how do counters work?",
                       "when do I use です versus ます?", "how do I make a verb polite-negative?", "what does the te-form actually do?",
                       "how do I say 'I want to go'?", "how do I talk about the past politely?"],
            grammar_a=["は marks the topic ('as for X'), が marks the subject, often new or emphasised information.",
                       "Kanji carry meaning, hiragana handles grammar and native words, and katakana is mostly for loanwords.",
                       "Japanese counts objects with a counter that depends on their shape or type: 枚 for flat things, 本 for long things, 人 for people.",
                       "です follows nouns and adjectives; ます is the polite ending for verbs.",
                       "Replace ます with ません: 行きます becomes 行きません.",
                       "It links actions and makes requests: 見てください means 'please look'.",
                       "Use the verb stem plus たい: 行きたいです means 'I want to go'.",
                       "Change ます to ました: 行きました means 'I went'."],
            goal_event="my Kyoto trip", goal_date="October 12",
            lang_reason="you want to order food, read signs and thank people properly on your trip to Kyoto",
        ),
        "priya_travel": dict(
            pivot=D("2026-10-12"),
            trip_task=["booked the flights, Berlin to Osaka via Helsinki on October 12, back on October 24",
                       "reserved four nights at a guesthouse near Kyoto station", "booked the ryokan in Arashiyama",
                       "bought an eSIM with 10 GB", "made a list of vegetarian restaurants in Kyoto",
                       "printed the ryokan confirmation in Japanese", "packed", "-"],
            trip_reply=["October 12 to 24 gives you nearly two weeks — plenty for Kansai.",
                        "Kyoto station is a great base for day trips.", "Arashiyama at dawn, before the crowds, is magical.",
                        "10 GB is enough unless you stream video.", "Save them offline in a maps list so you can find them without signal.",
                        "A Japanese printout makes check-in smooth.", "Remember your adapter — Japan uses Type A plugs.", "-"],
            japan_note=["I went to Fushimi Inari at 7am and had the upper gates almost to myself.",
                        "I ate shōjin ryōri at Tenryū-ji and it was the best meal of my life.",
                        "The ryokan in Arashiyama gave me a yukata and the onsen was perfect after a day of walking.",
                        "I took the train to Nara and a deer bowed to me before stealing my map.",
                        "I got rained on in Gion but the lanterns in the rain looked unreal.",
                        "I did a day trip to Himeji and the castle is even whiter than in photos.",
                        "I found a tiny jazz bar in Osaka run by a man in his eighties.",
                        "I spoke only Japanese at dinner and the chef gave me extra pickles."],
            japan_reply=["Early starts are the secret to Fushimi Inari.", "Temple food in Tenryū-ji's garden is something special.",
                         "An onsen after a long day is the perfect reward.", "Nara deer have excellent manners and no shame.",
                         "Gion in the rain is a photographer's dream.", "Himeji is worth every minute on the Shinkansen.",
                         "Those little bars are some of the best memories people bring home.", "Extra pickles are the highest compliment."],
            home_note=S("I keep waking up at 4am.", "2026-10-25", "I brought back three kinds of matcha and a knife from Aritsugu.",
                        "2026-10-26", "I already miss konbini onigiri.", "2026-10-27", "I unpacked and found a deer-chewed map in my bag."),
            home_reply=S("Morning light and a fixed bedtime will reset you within a few days.",
                         "2026-10-25", "An Aritsugu knife is a beautiful souvenir — keep it dry and sharpen it on a whetstone.",
                         "2026-10-26", "Konbini withdrawal is real.", "2026-10-27", "That's a souvenir worth framing."),
        ),
        "priya_work": dict(
            ticket=["the routing service migration", "flaky integration tests", "the Postgres upgrade", "my handover docs",
                    "an incident where the queue backed up", "the last sprint before I leave", "-", "-"],
            ticket_reply=["Migrations always take one sprint longer than planned.", "Flaky tests are worth a quarantine label and a ticket.",
                          "Test the upgrade on a restored backup first.", "Handover docs are the best parting gift.",
                          "Was there a postmortem? Queue backlogs usually have a root cause upstream.", "Wrap it up cleanly and celebrate.", "-", "-"],
            manager="Jonas", ask=["mentor the new junior developer", "lead the on-call rotation this month", "give a tech talk about ledgerline",
                                  "write up the routing service design", "write a handover plan for the routing service", "pair with whoever inherits my services",
                                  "-", "-"],
            ask_reply=["Mentoring is a great thing to mention in interviews too.", "Make sure the runbooks are up to date before your first page.",
                       "A talk about a side project is a fun way to share what you've learned.", "A design doc is useful and makes handover easier.",
                       "Name an owner for each part of the service in the plan.", "Pairing is the best form of handover.", "-", "-"],
            design_topic=["a payments ledger", "an idempotent payments API", "a rate limiter", "a notification service", "-", "-", "-", "-"],
            design_hard=["consistency and double-entry guarantees", "idempotency keys and retries", "distributed counters",
                         "fan-out and delivery guarantees", "-", "-", "-", "-"],
            notice_note=S("Loomline accepted my resignation; last day is October 9.", "2026-10-01", "Jonas asked if a counter-offer would change my mind. It won't.",
                          "2026-10-05", "I'm documenting the Helm charts so nobody has to page me after I'm gone.", "2026-10-08", "Last day is tomorrow!"),
            notice_reply=S("October 9 gives you a few days before Japan — perfect.", "2026-10-01", "Good that you're clear. Decline politely and keep the relationship.",
                           "2026-10-05", "Future-you and your ex-colleagues will thank you.", "2026-10-08", "Congratulations on finishing well."),
        ),
        "climbing": dict(
            climb_note=["sent my first V4, a slopey traverse in the cave.", "I spent an hour on the same crimpy V4 and fell off the last move every time.",
                        "flashed two V3s and felt strong.", "worked on technique only, lots of drop knees.", "I just watched — still resting the finger.",
                        "I only did mobility work and watched Lea climb.", "-", "first proper session since Japan: easy V2s with the finger taped, and everything felt heavy."],
            climb_reply=["First V4 — congratulations!", "Leave it for a week; projects often go on a fresh day.",
                         "Flashing is a great sign of reading routes well.", "Technique days pay off more than strength days.",
                         "Resting is the right call. Patience now saves months later.", "Watching still teaches you beta — and the finger gets its rest.",
                         "-", "After two weeks off that's normal; strength comes back quickly."],
            finger_note=S("still sore to press, no climbing.", "2026-10-06", "it feels better but I can't crimp yet.",
                          "2026-10-10", "open-hand holds don't hurt anymore.", "2026-10-24", "I did easy climbs with H-taping and felt nothing.",
                          "2026-10-26", "it feels normal again, but I'm staying off small crimps."),
            finger_reply=S("Keep resting — pulley strains need two to three weeks before any load.",
                           "2026-10-06", "Good progress. Gentle open-hand grips and rubber-band extensions are fine.",
                           "2026-10-10", "That's a good sign. Build up slowly over the next two weeks.",
                           "2026-10-24", "Taped easy climbing is exactly the right next step.",
                           "2026-10-26", "Sensible — small crimps are the last thing to reintroduce."),
            partner_note=["is moving to Munich in January.", "got me into bouldering two years ago.", "thinks I should try lead climbing.",
                          "brought me tape and a chocolate bar after my finger injury.", "wants to go to Fontainebleau next spring.",
                          "is jealous of my Japan trip.", "will come to Frankenjura with me next summer.", "missed me while I was in Japan."],
            partner_reply=["You'll have an excuse for Munich trips.", "Good friends make the best climbing partners.",
                           "Lead climbing is a fun new challenge once the finger's fully healed.", "That's a good friend.",
                           "Font in spring is a classic — worth planning early.", "Bring her back some Japanese climbing chalk.",
                           "Frankenjura is perfect for a summer trip from Berlin.", "Sounds like the feeling is mutual."],
        ),
    },
    beats=[
        ("2026-09-01 21:30", "coding", [
            ("Hey! I'm Priya. I'm a backend engineer at Loomline in Berlin and I live in Neukölln. Vegetarian, boulder twice a week, and in October I'm going to Japan for the first time — flying to Osaka on October 12 and spending most of the trip in Kyoto.",
             "Hi Priya! Japan in October is a great choice. Are you learning any Japanese before the trip?"),
            ("Yes, with a tutor called Haruka on Mondays. And I'm building a Rust side project called ledgerline: a CLI that parses bank CSV exports and categorises my spending.",
             "Nice — a very Berlin combination of hobbies. I'll remember Haruka on Mondays and ledgerline in Rust."),
        ]),
        ("2026-09-03 22:15", "coding", [
            ("Can you help with a lifetime error? In ~/code/ledgerline/src/parse.rs I have:\n```rust\npub struct Record<'a> {\n    pub date: &'a str,\n    pub payee: &'a str,\n    pub amount: f64,\n}\n\npub fn parse_line(line: &str) -> Record {\n    let fields: Vec<&str> = line.split(';').collect();\n    Record { date: fields[0], payee: fields[1], amount: fields[2].replace(',', \".\").parse().unwrap() }\n}\n```\nand the compiler says \"missing lifetime specifier\" on the return type.",
             "The returned Record borrows from `line`, so say so: `pub fn parse_line<'a>(line: &'a str) -> Record<'a>`. Also replace that `unwrap()` with a `Result` so one bad row doesn't crash the whole import."),
            ("That fixed it. Lifetimes finally clicked a bit.",
             "Good — the rule of thumb is that the output can't outlive the input it borrows from, and the signature just has to say which input that is."),
        ]),
        ("2026-09-08 20:40", "priya_work", [
            ("I'm interviewing with Cartwheel, a payments startup, for a senior backend role. First round is Friday.",
             "Exciting! What's pulling you towards Cartwheel — the domain, the seniority, or leaving Loomline?"),
            ("Mostly that I've been at Loomline three years and I want to work on payments. Also they use Rust in production.",
             "Rust in production plus a domain you're curious about is a strong reason. Let's prep for system design questions this week."),
        ]),
        ("2026-09-18 19:20", "priya_work", [
            ("We shipped the routing service a day late because the build server was down all Wednesday — the CI runners ran out of disk space, so nothing could merge.",
             "So a full disk on the runners blocked merges, which pushed the release by a day. Worth adding a disk-usage alert on the runners so it can't happen silently again."),
        ]),
        ("2026-09-24 18:50", "priya_work", [
            ("I accepted the Cartwheel offer! Senior backend engineer, starting November 2. I'm telling Jonas tomorrow.",
             "Congratulations, Priya! So you'll be a senior engineer at Cartwheel from November 2 — that leaves room for Japan in between."),
        ]),
        ("2026-09-28 21:10", "coding", [
            ("Released ledgerline v0.2.0 tonight: rules engine, N26 support, and a --month flag. Release notes are at https://example.org/priya/ledgerline/releases/v0.2.0",
             "Congrats on v0.2.0! Rules plus a second bank format makes it genuinely useful to other people now."),
        ]),
        ("2026-10-02 21:45", "climbing", [
            ("Felt a pop in my left ring finger on a crimpy V4 tonight. It's swollen and hurts to press at the base.",
             "A pop with pain at the base of the finger often means a pulley strain. Stop climbing, ice it, and if it's very swollen or bruised get it checked — usually it's two to three weeks off crimping."),
        ]),
        ("2026-10-05 21:20", "language", [
            ("Haruka-sensei made me write a self-introduction: 「はじめまして、プリヤです。ベルリンに住んでいます。エンジニアです。十月に京都へ行きます。よろしくお願いします。」 Is it natural?",
             "Very natural! One small tweak: 「十月に京都に行きます」 with に is slightly more common than へ in speech, but both are correct. よろしくお願いします is the perfect ending."),
        ]),
        ("2026-10-12 07:30", "priya_travel", [
            ("At BER waiting for the Helsinki flight ✈️ Then Osaka tomorrow morning. I have a notebook of vegetarian phrases and one very full suitcase.",
             "Have a wonderful trip, Priya! いってらっしゃい — off you go and come back safely."),
        ]),
        ("2026-10-26 20:30", "coding", [
            ("Released ledgerline v0.3.1 on the train from the airport: JSON output and a fix for DKB dates. 36 stars now.",
             "Shipping on a train after two weeks in Japan is very on-brand. Congratulations on v0.3.1."),
        ]),
    ],
    callbacks=[
        ("2026-10-06", "2026-10-11", "How's the ring finger — still resting it?"),
        ("2026-10-24", "2026-10-27", "Welcome back from Japan! Did the ryokan in Arashiyama live up to the photos?"),
        ("2026-09-12", "2026-09-15", "How did the first Cartwheel interview go on Friday?"),
    ],
))

# ---------------------------------------------------------------- Tom Becker, Austin
TOM_NOTES = (
    "Pasting my raw notes from this morning's partner meeting with Northpine Ventures so you have them. Can you pull out the action items?\n\n"
    "Northpine partner meeting, Sept 4, 10:00–11:15, Zoom. Present: Tom Becker, Aisha Grant (Fernhill CTO), "
    "Dana Whitfield and Marco Ruiz (Northpine).\n"
    "1. Traction. We walked through the numbers: 14 paying warehouses, $41k MRR, 9% month-over-month growth since March, "
    "net revenue retention 118%. Dana asked why two pilots in Ohio churned; answer: both were acquired by a competitor "
    "who runs their own WMS. She seemed satisfied but wants it in writing.\n"
    "2. Product. Aisha demoed the dock scheduler and the new labour forecast. Marco liked the forecast accuracy chart "
    "(MAPE 11% on the last 60 days) and asked how much of it is still manual tuning. Honest answer: about a third.\n"
    "3. Round. We're raising $2.5M on a post-money SAFE or priced seed. Northpine would want to lead with $1.5M and a "
    "board observer seat, not a full board seat. They asked about the cap; we said we're targeting $12M post.\n"
    "4. Concerns. (a) Customer concentration: our top customer, Lone Star Cold Storage, is 22% of revenue. "
    "(b) Hiring plan: they want to see a senior engineer hired before the money runs out, not after. "
    "(c) Founder bandwidth with the baby coming in October; Dana was kind about it but clearly noted it.\n"
    "5. Next steps. Northpine wants a data room by Sept 11: cohort retention, pipeline with stage probabilities, "
    "the 18-month hiring plan and unit economics per warehouse. Partner meeting decision expected the week of Sept 21.\n"
    "Action items I noted: Tom to build the data room; Aisha to write up how the forecast model is tuned; "
    "Tom to get a reference call set up with Lone Star; both of us to draft the hiring plan."
)

POOLS["tom_fund"] = [
    T("Investor update: {fund_note}",
      "{fund_reply}",
      "Thanks for keeping me posted. {fund_reply}"),
    T("Pitch meeting with {vc} today. {pitch_note}",
      "{pitch_reply}",
      "{pitch_reply}", when=lambda st: st["day"] <= D("2026-09-30")),
    T("How do I answer 'why now' in the pitch without sounding like every other logistics startup?",
      "Anchor it in something specific to your customers: labour costs and same-day shipping expectations both rose while warehouse tools stayed built for the 2000s. Show one chart, not five.", when="pre"),
    T("What's a reasonable board structure for a seed round?",
      "Most seed rounds keep the board at two founders, sometimes adding one investor seat. An observer seat, like Northpine asked for, is a lighter commitment.", when="pre"),
    T("Our runway is about {runway} months at the current burn. Should I be worried?",
      "{runway} months while fundraising is workable but tight — rounds usually take longer than planned. Keep a cut-costs plan in a drawer, just in case.",
      "It's enough if the round closes on schedule. Update the board-ready cash plan every month so you're not surprised."),
    T("Data room checklist: {dataroom_item}.",
      "Good. Keep the folder structure simple — {dataroom_path} with one folder per topic makes investors' lives easy.",
      "Noted. Investors mostly care that numbers in the data room match the deck exactly.", when="pre"),
    T("Wire instructions came through for the close. How do I make sure it's not a scam?",
      "Call the investor on a number you already have — never one in the email — and confirm the account details verbally before anyone sends money.", when=lambda st: D("2026-10-01") <= st["day"] <= D("2026-10-09")),
    T("Now that the round is closed, what should the first 90 days look like?",
      "Hire the senior engineer, put a simple monthly investor update on the calendar, and pick the two metrics the money is supposed to move.", when="post"),
]

POOLS["tom_reno"] = [
    T("Kitchen update: {reno_note}",
      "{reno_reply}",
      "Thanks for the update. {reno_reply}"),
    T("We're at ${reno_spent}k spent on the kitchen so far, against a budget of {reno_budget}.",
      "Keep a running sheet of changes; it's usually the small upgrades that push it over. Where's the biggest remaining spend?",
      "That's {reno_budget} of room to watch closely. Have you set aside a contingency for anything hidden behind the walls?"),
    T("Quartz or butcher block for the island countertop?",
      "Quartz for the main run since it's near the sink; butcher block on the island can be lovely if you're okay oiling it every few months.",
      "Quartz is lower-maintenance. With a newborn coming, I'd pick whatever needs the least care."),
    T("Ray the contractor {ray_note}",
      "{ray_reply}",
      "Sounds like Ray. {ray_reply}"),
    T("We've been cooking on a hot plate in the dining room for {hotplate_weeks} weeks.",
      "That gets old fast. Slow cooker meals and a rice cooker can make the temporary kitchen much less miserable.",
      "Hang in there — {hotplate_weeks} weeks of hot-plate cooking deserves a takeout night."),
    T("The plumber says {plumber_note}",
      "{plumber_reply}"),
]

POOLS["tom_baby"] = [
    T("Baby prep: {baby_task}.",
      "{baby_reply}",
      "Good, {first}. {baby_reply}", when="pre"),
    T("Lena is {lena_weeks} weeks along. {lena_note}",
      "{lena_reply}", when="pre"),
    T("How long does a newborn actually sleep in one go?",
      "In the first weeks, usually two to four hours at a time, around 14–17 hours a day in total. It gets more predictable after about six weeks.", when="pre"),
    T("Is it normal to be scared I'll be bad at this?",
      "Very normal — most first-time parents feel it. Caring enough to worry is already a good sign.", when="pre"),
    T("Hannah update: {hannah_note}",
      "{hannah_reply}",
      "Thanks for the update, {first}. {hannah_reply}", when="post"),
    T("Night shift update from the Becker house: {night_note}",
      "{night_reply}", when="post"),
]

POOLS["tom_work"] = [
    T("Hiring: {hire_note}",
      "{hire_reply}",
      "{hire_reply}"),
    T("Our CTO Aisha and I disagreed about {disagreement}.",
      "Co-founder disagreements are healthy if you decide how to decide. Who owns that call by default?",
      "Write both options down with the cost of being wrong for each; that usually makes the answer obvious."),
    T("Customer call with {customer} today. {customer_note}",
      "{customer_reply}",
      "Good to hear from the front line. {customer_reply}"),
    T("What's a good interview question for a senior backend engineer at a 6-person startup?",
      "Ask them to walk through a system they built end to end and what they'd change now. Follow up on trade-offs; seniors talk about constraints, not just tools."),
    T("How do I take parental leave as a CEO without the company falling apart?",
      "Name who decides what while you're out, schedule one 30-minute check-in a week, and tell customers in advance. Aisha can own day-to-day product decisions."),
]

PERSONAS.append(dict(
    id="tom-becker", name="Tom",
    tz=[("2026-09-01", -5)],
    weekday_slots=[(6, 8, 2), (12, 14, 2), (21, 24, 3)],
    weekend_slots=[(8, 11, 2), (14, 17, 2), (20, 23, 2)],
    sessions=(3, 4),
    topics={"tom_fund": 4, "tom_reno": 3, "tom_baby": 3, "pet": 2, "tom_work": 3},
    facts=dict(first="Tom", city="Austin"),
    arcs={
        "tom_fund": dict(
            pivot=D("2026-10-09"), vc=["Northpine Ventures", "Caliche Capital", "Bluebonnet Partners", "-", "-", "-", "-", "-"],
            pitch_note=["They asked about churn in Ohio again.", "They passed — said logistics isn't a fit for their fund right now.",
                        "Great energy; they want to follow if someone else leads.", "The partner meeting went well and they want to move fast.",
                        "-", "-", "-", "-"],
            pitch_reply=["Put the Ohio explanation in the data room so it stops coming up.", "Fund fit is real — don't take it personally.",
                         "Followers are useful once there's a lead. Keep them warm.", "Moving fast is a great sign. Make sure your lawyer is ready.",
                         "-", "-", "-", "-"],
            fund_note=["Northpine wants the data room by September 11.", "We hit $44k MRR this month.",
                       "Northpine's partners vote next Tuesday.", "We signed the Northpine term sheet: $2.5M at a $12M post-money cap.",
                       "Bluebonnet wants in for $200k, which takes the round to $2.7M.", "The round is closed and the money is in the bank.",
                       "I sent the first monthly investor update.", "Dana from Northpine sent a baby gift for Hannah."],
            fund_reply=["A week is tight but doable — start with the cohort retention table.", "That's another month of 9%-plus growth.",
                        "Fingers crossed for Tuesday.", "Congratulations! A clean cap with a lead you like is a great outcome.",
                        "An oversubscribed round is a nice problem to have.", "Well done, Tom — that's a huge milestone.",
                        "Regular updates build trust with investors.", "That's a thoughtful investor."],
            runway=[9, 8, 8, 7, 7, 24, 24, 23], dataroom_path="~/Fernhill/dataroom/",
            dataroom_item=["cohort retention by signup month", "pipeline with stage probabilities", "the 18-month hiring plan",
                           "unit economics per warehouse", "cap table after the SAFE conversion", "-", "-", "-"],
        ),
        "tom_reno": dict(
            reno_budget=["$48k", "$48k", "$53k", "$53k", "$53k", "$53k", "$53k", "$53k"],
            reno_spent=[19, 24, 29, 33, 37, 42, 46, 51],
            reno_note=["The old cabinets are out and we found original hardwood under the linoleum.",
                       "Electrical passed inspection.", "We rigged a temporary sink in the garage and it actually works.",
                       "Drywall is up and the room finally looks like a room.", "The cabinets arrived! One is the wrong colour.",
                       "Countertop template is done; install is next Thursday.", "Backsplash tile is going up.",
                       "The kitchen is basically done and we cooked a real dinner in it."],
            reno_reply=["Original hardwood is a great find — worth refinishing.", "Passing inspection first time is a win.",
                        "A working sink changes everything in a renovation.",
                        "That's the stage where it starts feeling real.", "Photograph it and get the replacement ordered today.",
                        "Templates are the point of no return. Double-check the sink cut-out.",
                        "Tile is the fun part. Is it the green zellige you picked?", "What a milestone, especially with a newborn."],
            ray_note=["showed up at 7am sharp with donuts.", "disappeared for three days without texting.", "found rot under the sink.",
                      "is now saying the end of October for completion.", "brought his daughter to help, she's great with tile.",
                      "and his crew worked Saturday to catch up.", "gave us a discount for the cabinet delay.", "handed over the keys to the new pantry."],
            ray_reply=["Donuts are how contractors earn loyalty.", "Set a clear expectation for daily updates.",
                       "Better to find rot now than after the cabinets are in.", "Get that in writing with the payment schedule.",
                       "A family tile crew — nice.", "That's generous of them.", "A good contractor fixes problems before you ask.",
                       "A walk-in pantry is a luxury."],
            hotplate_weeks=[2, 3, 4, 5, 6, 7, 8, 9],
            plumber_note=S("the main shut-off valve is original to the 1950s house and should be replaced.",
                           "2026-09-20", "the new sink can't go under the window without moving the vent.",
                           "2026-10-05", "the dishwasher line is done and the gas range is connected."),
            plumber_reply=S("Replace it now while the walls are open; it's cheap insurance.",
                            "2026-09-20", "Moving a vent adds cost — get the number before deciding.",
                            "2026-10-05", "Both done means you're close to a working kitchen."),
        ),
        "tom_baby": dict(
            pivot=D("2026-10-15"), lena_weeks=[33, 34, 35, 36, 37, 38, 39, 40],
            baby_task=["we toured St. David's labor and delivery", "the car seat is installed and inspected by the fire station",
                       "Lena's mom is flying in from Milwaukee on October 14", "we washed a mountain of tiny clothes",
                       "the hospital bag is packed", "we chose a pediatrician in Crestview", "-", "-"],
            baby_reply=["Knowing the route and the parking saves stress on the day.", "A checked car seat is one less worry.",
                        "Having her mom there will help a lot.", "Tiny clothes are ridiculously cute.",
                        "Phone charger and snacks for you too.", "Good — the first check-up is usually within a few days of birth.", "-", "-"],
            lena_note=["She's uncomfortable sleeping.", "Her feet are swollen by evening.", "She's nesting hard and reorganised the garage.",
                       "The baby is head down.", "She's on maternity leave from tomorrow.", "The doctor says the baby could come any day.", "-", "-"],
            lena_reply=["A pregnancy pillow can help a lot at this stage.", "Feet up in the evening; mention it at the next check-up if it gets worse.",
                        "Nesting is real — and useful.", "Head down at 36 weeks is great news.", "She's earned the rest.",
                        "Keep the phone charged and the bag by the door.", "-", "-"],
            hannah_note=S("she's feeding every two to three hours and has the loudest hiccups.", "2026-10-18", "she slept four hours straight last night.",
                          "2026-10-21", "she has a sniffly nose, nothing serious.", "2026-10-23", "Biscuit sleeps by her crib like a guard dog.",
                          "2026-10-25", "she smiled at Lena, probably gas but we're counting it."),
            hannah_reply=S("Hiccups are harmless at this age, if dramatic.", "2026-10-18", "Four hours is a gift at this age.",
                           "2026-10-21", "Keep an eye on her breathing and feeding; call the pediatrician if either changes.",
                           "2026-10-23", "Beagles make devoted nannies.", "2026-10-25", "Counting it is the right call."),
            night_note=S("Lena feeds, I change diapers and do the 3am walk.", "2026-10-20", "We're trying shifts so each of us gets five hours.",
                         "2026-10-23", "I fell asleep on a Zoom call with a customer.", "2026-10-26", "Hannah slept from 11 to 3, which felt like a holiday."),
            night_reply=S("A clear split makes nights much easier.", "2026-10-20", "Shifts are the most sustainable setup for two parents.",
                          "2026-10-23", "Everyone on that call has either been there or will be.", "2026-10-26", "A four-hour stretch is a milestone."),
        ),
        "pet": dict(
            pet="Biscuit", pet_kind="beagle", vet_date=S("September 12", "2026-09-13", "October 21"),
            pet_note=["howled at the contractor's saw for an hour.", "ate a sock and we ended up at the emergency vet.",
                      "is recovering and very sorry for himself.", "stole a bagel off the counter while I was on a call.",
                      "sniffed every single cabinet box when they arrived.", "has figured out that the baby's room is off limits.",
                      "sat by Hannah's bassinet all night.", "got a new harness because he pulls towards every squirrel."],
            pet_reply=["Construction noise is stressful for dogs; a quiet room with a chew helps.",
                       "Scary! Did he have to have surgery or did it pass?", "Bland food and short walks for a few days.",
                       "Beagles are professional thieves.", "Beagle nose, beagle priorities.", "Clear boundaries now will help later.",
                       "He's appointed himself the guardian.", "A front-clip harness helps a lot with pulling."],
            pet_exercise="A beagle needs at least an hour a day, ideally split into two walks with plenty of sniffing time.",
            treat=["peanut butter", "grapes", "cooked sweet potato", "a bit of brisket", "apple slices", "cheese", "carrots", "bagel"],
            treat_answer=["Plain peanut butter is fine — but check the label for xylitol, which is toxic to dogs.",
                          "No — grapes and raisins can cause kidney failure in dogs.", "Yes, plain cooked sweet potato is a great treat.",
                          "A small piece of unseasoned meat is fine, but brisket rubs often contain onion and garlic, which are toxic.",
                          "Yes, without the core and seeds.", "A little is fine; many dogs tolerate cheese but it's fatty.",
                          "Carrots are a great low-calorie treat.", "Plain bagel is okay in tiny amounts, but avoid onion or garlic bagels."],
        ),
        "tom_work": dict(
            hire_note=["we opened a senior backend engineer role.", "we got 140 applications in four days.",
                       "two strong candidates made it to the final round.", "I made an offer to Marisol, a senior engineer from Dallas.",
                       "Marisol accepted and starts October 19.", "we're writing Marisol's onboarding plan.", "Marisol started today.",
                       "Marisol already found a bug in our scheduling engine."],
            hire_reply=["What's the must-have for this hire?", "Screen on a short take-home or a 20-minute call to keep it manageable.",
                        "Reference calls often break the tie.", "Good luck — a fast, warm offer usually wins.",
                        "Great — October 19 means she'll start just after the baby arrives, so plan who onboards her.",
                        "A first-week plan with one shipped change is a great start.", "Welcome to Marisol! Who is her buddy this week?",
                        "That's the sign of a good hire."],
            disagreement=["whether to build an API before the mobile app", "pricing per warehouse versus per user",
                          "how fast to hire after the round", "whether to support on-prem installs", "-", "-", "-", "-"],
            customer=["Lone Star Cold Storage", "a 3PL in Houston", "Lone Star Cold Storage", "a new prospect in Phoenix",
                      "Gulf Freight", "a 3PL in Houston", "Lone Star Cold Storage", "Gulf Freight"],
            customer_note=["They want dock scheduling for a second warehouse.", "They complained about the mobile app being slow.",
                           "They agreed to be a reference for Northpine.", "They run 300 trucks a day and are curious.",
                           "They signed a one-year contract.", "The slow app issue is fixed and they noticed.",
                           "They sent congratulations on the baby.", "They want the labour forecast in their Monday report."],
            customer_reply=["Expansion revenue is the best kind.", "Speed complaints are worth fixing fast — they drive churn.",
                            "A happy reference customer is worth a lot in a raise.", "Big operations are great design partners if they commit.",
                            "Congratulations on the new contract.", "Closing the loop with customers builds a lot of trust.",
                            "That's a nice relationship.", "That sounds like a small export feature worth building."],
        ),
    },
    beats=[
        ("2026-09-01 08:15", "tom_fund", [
            ("Morning. I'm Tom, co-founder and CEO of Fernhill — we make scheduling software for warehouses. I live in Austin with my wife Lena and our beagle Biscuit, and Lena is due with our first baby on October 20.",
             "Nice to meet you, Tom — and congratulations to you both. What's on your plate this autumn besides the baby?"),
            ("We're raising a $2.5M seed round and renovating our kitchen at the same time, which in hindsight was ambitious.",
             "That's a lot at once: a seed round, a kitchen and a newborn by late October. Let's keep track of the dates so nothing collides."),
        ]),
        ("2026-09-04 13:30", "tom_fund", [
            (TOM_NOTES,
             "Action items: (1) you build the data room by September 11 — cohort retention, pipeline with probabilities, 18-month hiring plan, unit economics per warehouse; (2) Aisha documents how the forecast is tuned; (3) you set up a Lone Star reference call; (4) you both draft the hiring plan. Decision is expected the week of September 21."),
        ]),
        ("2026-09-11 21:30", "pet", [
            ("Biscuit ate one of Lena's socks this afternoon and threw up twice, so we're at the emergency vet on Burnet Road.",
             "Poor Biscuit. Socks can cause blockages, so the vet is the right place. Did they mention an X-ray?"),
            ("They did an X-ray and induced vomiting. The sock came out in one piece. He's fine, just sheepish.",
             "What a relief. Keep him on bland food for a day and socks in a closed hamper from now on."),
        ]),
        ("2026-09-15 20:45", "tom_reno", [
            ("The kitchen cabinets are delayed three weeks because the supplier's factory in Monterrey flooded, so the kitchen won't be done until late October instead of October 9. Budget's up to $53k from $48k because we had to change the countertop order too.",
             "So the flood pushed the cabinets, which pushed the countertop, which pushed the finish to late October — right around the due date. Can Ray prioritise the sink and stove so you have a working kitchen when the baby arrives?"),
        ]),
        ("2026-09-23 18:10", "tom_fund", [
            ("We got the term sheet! Northpine leads with $1.5M of a $2.5M round at a $12M post-money cap, with an observer seat.",
             "Congratulations, Tom! That's exactly the structure you were hoping for. Get your lawyer reviewing it today."),
        ]),
        ("2026-10-09 16:00", "tom_fund", [
            ("The wire hit this morning. Fernhill's seed round is closed at $2.7M — Bluebonnet came in for the extra $200k.",
             "Huge congratulations! That gives you about two years of runway and closes a week before the due date. Celebrate tonight."),
        ]),
        ("2026-10-15 09:40", "tom_baby", [
            ("She's here 👶💛 Hannah Rose Becker, born at 4:12 this morning, 7 lb 3 oz. Five days early. Lena is doing great and so is Hannah.",
             "Congratulations, Tom! Welcome to the world, Hannah Rose 💛 Get some sleep when Lena does, and let the rest of the world wait."),
        ]),
        ("2026-10-22 14:00", "tom_work", [
            ("I'm working mornings only until mid-November. Aisha is running product and Marisol's onboarding while I'm out.",
             "Sensible. A clear split means you can be present at home without the company stalling."),
        ]),
        ("2026-10-26 19:20", "tom_reno", [
            ("The kitchen is finished! Final cost was $52,400, so slightly under the revised budget. We cooked Lena's mom's schnitzel recipe to christen it.",
             "Under budget after a flood and a baby — impressive. Enjoy the first proper dinners in the new kitchen."),
        ]),
    ],
    callbacks=[
        ("2026-09-12", "2026-09-17", "How's Biscuit doing after the sock incident?"),
        ("2026-10-16", "2026-10-21", "How are Lena and Hannah doing?"),
        ("2026-09-24", "2026-09-29", "Has the lawyer been through the Northpine term sheet yet?"),
    ],
))

# ---------------------------------------------------------------- Sofia Álvarez, Seattle
POOLS["sofia_teach"] = [
    T("AP Chemistry today: {lesson}.",
      "{lesson_reply}",
      "Sounds like a good class. {lesson_reply}"),
    T("I have {grading} papers to grade this weekend.",
      "Grade in batches of ten with a short break between. A one-page rubric with three common comments saves a lot of writing.",
      "Try grading one question across all papers before moving on — it's faster and fairer."),
    T("One of my students, {student}, {student_note}",
      "{student_reply}",
      "{student_reply} You clearly know your students well."),
    T("How do I explain {concept} to sixteen-year-olds without losing half the room?",
      "{concept_answer}",
      "{concept_answer} A quick demo beats a slide every time."),
    T("Department meeting ran long again. {dept_note}",
      "{dept_reply}"),
    T("Parent-teacher conferences are on October 22. I have 34 families booked.",
      "Open each one with something specific the student does well, then one goal. Five minutes goes fast, so keep notes in a single sheet.",
      "That's a long evening. Pre-write a one-line strength and one goal for each student so you're not improvising.",
      when=lambda st: D("2026-10-12") <= st["day"] < D("2026-10-22")),
]

POOLS["choir"] = [
    T("Choir rehearsal tonight: {choir_note}",
      "{choir_reply}",
      "Sounds like a good rehearsal. {choir_reply}"),
    T("How do I practise the alto line when I can't read music very fast?",
      "Use a learning track of just the alto part, sing along at half speed, then drop the track for one run-through each evening.",
      "Mark your breaths in pencil and learn one page at a time with a learning track."),
    T("Dr. Hsu wants the German pronunciation cleaner in the Brahms. Any tricks for 'Selig sind'?",
      "Keep the 'S' soft like a 'z', and in 'sind' put the 'd' on the release, very lightly. Speaking the text slowly in rhythm before singing helps a lot.",
      when=lambda st: st["day"] <= D("2026-10-24")),
    T("Concert countdown: {concert_countdown} until we perform the Brahms Requiem at St. Mark's.",
      "With {concert_countdown} left, focus on the entries you're least sure of and let the rest be.",
      "You'll be ready. Sleep and water matter for voices too.", when=lambda st: st["day"] < D("2026-10-24")),
]

PERSONAS.append(dict(
    id="sofia-alvarez", name="Sofia",
    tz=[("2026-09-01", -7)],
    weekday_slots=[(6, 7, 2), (15, 17, 2), (19, 22, 4)],
    weekend_slots=[(8, 11, 2), (13, 17, 2), (19, 21, 1)],
    sessions=(3, 4),
    topics={"sofia_teach": 3, "caregiving": 4, "running": 4, "garden": 3, "choir": 2},
    topic_off={"garden": [("2026-09-14", "2026-09-20")], "choir": [("2026-09-14", "2026-09-20")]},
    facts=dict(first="Sofia", city="Seattle"),
    arcs={
        "sofia_teach": dict(
            lesson=["lab safety and goggles, the eternal battle", "significant figures, which everyone hates",
                    "the first titration lab", "stoichiometry with cookie recipes", "electron configurations",
                    "a flame test demo with lithium and copper", "gas laws with a can-crush demo", "reviewing for the unit test"],
            lesson_reply=["Goggle enforcement is half of chemistry teaching.", "Sig figs are easier with a real measurement in their hands.",
                          "First titrations are always a mess of pink flasks.", "Cookie stoichiometry is a classic for a reason.",
                          "An orbital-filling relay race can make it stick.", "Flame tests never fail to impress.",
                          "The can-crush always gets a gasp.", "A practice test with the actual format reduces anxiety a lot."],
            grading=["-", 62, "-", 93, "-", 31, 93, 62],
            student=["Marcus", "Aaliyah", "Jonah", "Priscilla", "Dev", "Marcus", "Aaliyah", "Jonah"],
            student_note=["asked if we could make meth 'like in the show'.", "stayed after class to ask about chemical engineering.",
                          "set his notebook on fire with a Bunsen burner. Small fire, big lesson.", "is acing everything but never speaks.",
                          "built a pH indicator from red cabbage at home.", "apologised for the meth joke and now wants to be a pharmacist.",
                          "got into the summer research program at UW.", "hasn't handed anything in for two weeks."],
            student_reply=["Every chemistry teacher has heard that one. Turning it into a lesson on lab ethics can work.",
                           "Worth pointing her to the UW chemical engineering open house.", "No one hurt and a lesson learned — that's a good outcome.",
                           "Quiet students often appreciate written feedback more than being called on.", "That's curiosity worth celebrating in class.",
                           "What a turnaround.", "What a great outcome for her.", "Worth checking in privately; a sudden change often has a reason at home."],
            concept=["moles", "equilibrium", "electronegativity", "entropy", "limiting reagents", "reaction rates", "pH", "intermolecular forces"],
            concept_answer=["A mole is just a chemist's dozen, only much bigger — 6.02 × 10²³ things.",
                            "Equilibrium is like a busy escalator: people go up and down constantly, but the numbers on each floor stay the same.",
                            "Electronegativity is a tug-of-war for electrons; the stronger atom pulls the shared pair closer.",
                            "Entropy is roughly the number of ways things can be arranged — a messy bedroom has more ways to be messy than tidy.",
                            "Use sandwiches: if you have ten slices of bread and three slices of cheese, cheese limits the sandwiches.",
                            "Reaction rates are about collisions: more heat, more concentration and more surface area mean more collisions.",
                            "pH is a log scale, so each step is ten times more acidic — lemon juice versus water is a big jump.",
                            "Intermolecular forces are the 'stickiness' between molecules, which is why water beads up and boils so late."],
            dept_note=["We're short two lab aides this year.", "The budget for consumables was cut by 15%.",
                       "Our department head Greg is retiring in June.", "We're piloting a new grading policy with no zeros.",
                       "Greg asked me if I'd consider applying for department head.", "We voted to keep paper lab notebooks.",
                       "Conference scheduling took forty minutes.", "We planned the spring chemistry olympiad team."],
            dept_reply=["That puts a lot more prep on teachers. Maybe ask for student volunteers.", "Microscale labs can stretch the consumables budget.",
                        "That opens up a leadership question in the department.", "No-zero policies are controversial; it'll be interesting to see the data.",
                        "Would you want it? It's a lot of admin, but you'd shape the department.", "Paper notebooks are still great practice.",
                        "Meetings like that deserve an agenda with time limits.", "Olympiad teams are a great way to stretch strong students."],
        ),
        "caregiving": dict(
            parent="Dad", parent_name="Rafael", age=81, sibling="my brother Luis",
            condition=S("arthritis and a bad hip", "2026-09-14", "a broken hip"),
            med=S("amlodipine", "2026-09-15", "oxycodone", "2026-10-01", "acetaminophen"),
            parent_home=S("his house in Spokane", "2026-09-14", "Providence Sacred Heart in Spokane",
                          "2026-09-19", "the rehab unit in Spokane", "2026-10-10", "Ballard Gardens"),
            care_doc="~/Documents/dad/care-log.md",
            call_note=["He'd mowed the lawn himself, which he absolutely shouldn't.", "He was irritated that I asked about his blood pressure.",
                       "He's bored in the hospital and wants his crossword books.", "He did his rehab exercises and was proud of himself.",
                       "He asked whether Ballard Gardens lets residents have a garden plot.", "He's finally unpacked his books at Ballard Gardens.",
                       "He says the food at Ballard Gardens is 'edible, barely'.", "He's playing dominoes with the other residents every afternoon."],
            call_reply=["Hard to stop an independent man. Maybe ask a neighbour to do the lawn as a favour.", "Asking is still the right thing to do.",
                        "Crosswords are a great way to keep his mind busy during recovery.", "Pride in rehab is the best motivator.",
                        "Worth asking — many places have raised beds for residents.", "Books make a room feel like home.",
                        "That's a good sign, actually — he has the energy to complain.", "Dominoes every afternoon is a great social anchor."],
            next_appt=["his cardiologist on September 10", "a follow-up with his GP on the 15th", "the orthopedic follow-up on September 29",
                       "the discharge planning meeting on October 2", "the move to Ballard Gardens on October 10",
                       "a new primary care doctor visit on October 16", "an orthopedic check in Seattle on October 27",
                       "an orthopedic check in Seattle on October 27"],
            next_appt_short=["the cardiologist", "the GP", "the orthopedic follow-up", "the discharge meeting", "the move",
                             "the new doctor", "the orthopedic check", "the orthopedic check"],
            insists=["on driving himself to the store", "he doesn't need a walker", "on cooking his own menudo on Sundays",
                     "he'll be back home in Spokane by Christmas", "on keeping his old truck", "on walking to the mailbox without the walker",
                     "on doing his own laundry", "on tipping the staff at Ballard Gardens"],
            side_effect=["have swollen ankles", "have swollen ankles", "drowsy", "constipated", "foggy in the mornings",
                         "a bit nauseous", "a bit nauseous", "sleepy after lunch"],
            paperwork=["his Medicare supplement", "the hospital discharge paperwork", "his long-term care insurance claim",
                       "the Ballard Gardens admission forms", "the durable power of attorney", "changing his mailing address",
                       "selling his truck", "the house in Spokane, which we might rent out"],
            visit_note=["-", "-",
                        "He was grumpy about hospital food but sharp as ever.", "He walked 40 meters with the walker.",
                        "The physical therapist says he's ready for discharge planning.", "He moved in on Saturday and the staff gave him a window room.",
                        "He's befriended a retired fisherman called Walt.", "He came to watch the choir dress rehearsal."],
            visit_reply=["Maybe it's time to talk about help with the yard.", "A weekly organiser is a small thing that prevents a lot of mistakes.",
                         "Sharp as ever is the best news after surgery.", "Forty meters is real progress after a hip fracture.",
                         "That's great — discharge planning means he's recovering well.", "A window room is a good start.",
                         "A friend in the first week makes a big difference.", "What a lovely thing for him to see."],
            help_note=S("his cardiologist visits", "2026-09-14", "the hospital, the rehab and Luis's visits",
                        "2026-10-10", "his move to Ballard Gardens, the paperwork and daily visits"),
        ),
        "running": dict(
            pivot=D("2026-10-25"), race="the Lake Union Half", race_date="Sunday, October 25", goal="under 2:10",
            goal_pace="6:10", long_km=[12, 13, 10, 14, 16, 17, 18, 10], weekly_km=[28, 30, 18, 32, 34, 36, 38, 25],
            pace=["6:55", "6:50", "7:05", "6:45", "6:40", "6:38", "6:35", "6:30"],
            route=["around Green Lake", "along the Burke-Gilman Trail", "along the Spokane River Centennial Trail",
                   "out to Golden Gardens and back", "along the Ship Canal trail", "around Discovery Park",
                   "over the Fremont Bridge and around Lake Union", "through the Arboretum"],
            run_note=["the mountain was out the whole way", "I ran it in the rain and loved it",
                      "I ran near the hospital in Spokane, which was oddly calming", "I was thinking about Dad the entire time",
                      "I negative-split without meaning to", "the Brahms was stuck in my head the whole run",
                      "I practised race pace for 8 km and held it", "just a shakeout with four strides"],
            niggle=["my left heel is stiff first thing in the morning, the old plantar fasciitis", "the heel is better if I stretch before getting out of bed",
                    "I haven't run much this week because of Dad, so nothing hurts", "the heel twinged on the downhills",
                    "my heel is quiet and my calves are tight", "everything feels strong", "legs are fresh and the heel is fine",
                    "I'm sore after the race, but it's a happy sore"],
            niggle_part="left heel", physio_ex="towel scrunches, calf stretches and rolling a frozen water bottle under my foot",
            club="my Ballard women's running group", club_day="Wednesday", shoe="Ghost 16s", shoe_km=[300, 320, 330, 360, 380, 400, 420, 440],
            pr_label="half marathon", pr=S("2:14:30", "2026-10-25", "2:08:55"), rhr=[56, 57, 62, 56, 55, 54, 54, 57],
            vo2=[38, 38, 38, 39, 39, 40, 40, 40],
            skip_reason=["I had a faculty meeting until six", "I spent the evening on the phone with the hospital in Spokane",
                         "I was driving back from Spokane", "I had grading piled to the ceiling", "choir ran late",
                         "it was pouring and dark", "conference prep ate my evening", "I'm tapering and felt twitchy"],
            gel="Gu gels", next_goal="the Mercer Island half in March",
        ),
        "garden": dict(
            plot="my backyard beds in Ballard", garden_log="~/garden/beds-2026.csv", garden_region="Seattle",
            garden_task=["Deadheaded the dahlias and picked a huge bunch for school.", "Pulled the spent bean plants.",
                         "-", "Lifted the onions and braided them.", "Planted garlic and shallots.",
                         "Dug up the dahlia tubers to store over winter.", "Mulched every bed with leaves from the maple.",
                         "Planted tulip bulbs for spring."],
            garden_reply=["Dahlias in a chemistry classroom must brighten it up.", "Chop them and leave the roots — they add nitrogen.",
                          "-", "Braided onions store beautifully.", "Perfect timing for the Pacific Northwest.",
                          "Store them in barely damp peat in the garage.", "Maple leaf mulch is perfect for your beds.",
                          "Tulips planted now will be a lovely spring surprise."],
            harvest=["tomatoes, dahlias and the last zucchini", "Sungold tomatoes and green beans", "nothing, I've been in Spokane",
                     "the last tomatoes and a pumpkin", "kale, chard and a few late raspberries", "kale and leeks",
                     "kale and a handful of green tomatoes", "kale, and that's it"],
            slug_target=["lettuce", "dahlias", "lettuce", "kale seedlings", "garlic shoots", "chard", "winter lettuce", "tulip shoots"],
            problem_crop=["tomatoes", "zucchini", "tomatoes", "dahlias", "kale", "garlic", "leeks", "raspberries"],
            problem=["split skins after the rain", "powdery mildew", "late blight", "earwig holes in the petals", "aphids",
                     "birds pulling the cloves out", "rust spots", "canes that need cutting back"],
            problem_reply=["Splitting comes from irregular watering or heavy rain after dry weeks — pick them a little early.",
                           "Mildew this late is normal. Remove the worst leaves and enjoy the last fruits.",
                           "Late blight spreads fast in the rain; pull the plants and don't compost them.",
                           "Earwigs love dahlias. Upturned pots stuffed with straw make good traps.",
                           "A firm spray of water knocks aphids off kale.", "Cover the bed with netting until the shoots are up.",
                           "Rust is mostly cosmetic on leeks.", "Cut the fruited canes to the ground and tie in the new ones."],
            layout_note=["More Sungolds, fewer beefsteaks.", "A cutting bed just for dahlias.", "-", "A raised bed Dad can reach from a chair.",
                         "Move the garlic to the sunny corner.", "A small herb bed by the kitchen door.", "Trellis for the beans.", "A bench under the apple tree."],
            frost_date=["November", "November", "November", "early November", "early November", "late October", "this weekend", "Monday night"],
            tender="the dahlias, any tomatoes and the geraniums in pots",
            seed_crop=["Sungold tomatoes", "calendula", "-", "beans", "cosmos", "sunflowers", "nasturtiums", "poppies"],
        ),
        "choir": dict(
            choir_note=["we started the Brahms Requiem and I'm in over my head.", "sectionals for the altos, we finally nailed bar 140.",
                        "-", "Dr. Hsu made us sing the second movement standing.", "we sang through the whole Requiem for the first time.",
                        "my voice cracked on the high E and everyone laughed, kindly.", "dress rehearsal with the orchestra, I nearly cried.",
                        "concert night!"],
            choir_reply=["Everyone feels that at the first rehearsal of a big work.", "Bar 140 conquered!", "-",
                         "Standing changes the breath support — he knows what he's doing.", "A first full run-through is a big moment.",
                         "Kind laughter means a good choir.", "An orchestra changes everything.", "Enjoy every minute of it."],
            concert_countdown=["seven weeks", "six weeks", "five weeks", "four weeks", "three weeks", "two weeks", "one week", "two days"],
        ),
    },
    beats=[
        ("2026-09-01 19:05", "sofia_teach", [
            ("Hi Somna, I'm Sofia. I teach chemistry at Lincoln High in Seattle and school starts Thursday. I'm 52, I sing alto in the Ballard Community Chorus, and I'm training for a half marathon — the Lake Union Half on October 25.",
             "Hi Sofia! That's a full autumn. What's your goal for the Lake Union Half?"),
            ("Under 2:10. My best is 2:14:30 from 2019, before plantar fasciitis took me out for a year.",
             "Beating a five-year-old PR after an injury would be a great comeback. I'll keep your heel in mind when we talk training."),
        ]),
        ("2026-09-03 16:20", "sofia_teach", [
            ("First day done. I have three sections of AP Chemistry with 31 students each, and one general chemistry class. My feet hurt more than after a long run.",
             "Ninety-three AP students is a big load. Comfortable shoes and a sit-down lunch will matter this month."),
        ]),
        ("2026-09-14 22:10", "caregiving", [
            ("My dad Rafael fell at home in Spokane last night and broke his hip. He's 81. My brother Luis is flying up from Phoenix and I'm driving over tomorrow morning.",
             "I'm so sorry, Sofia. Drive safely and take breaks — it's nearly five hours. Do you need help with sub plans for school?"),
            ("I've already emailed the sub. Can you remind me to call the school office at 7am?",
             "I can't set alarms, but put it on your phone now: 'Call Lincoln High office, 7am.' Focus on getting to your dad safely."),
        ]),
        ("2026-09-16 20:00", "caregiving", [
            ("Dad's surgery went well — they pinned the hip. He's groggy and cranky, which means he's himself. He'll go to the rehab unit in a few days.",
             "That's a relief. Cranky is a good sign! How are you holding up?"),
        ]),
        ("2026-09-22 21:15", "caregiving", [
            ("Luis and I decided Dad can't live alone in Spokane anymore. He's moving to Ballard Gardens, an assisted living place ten minutes from my house, on October 10.",
             "That's a big decision, and having him ten minutes away will make everything easier. How did your dad take it?"),
            ("He grumbled, then asked whether they allow dominoes. I think that's a yes.",
             "Dominoes as the condition of acceptance — that sounds like a good negotiation."),
        ]),
        ("2026-10-10 18:30", "caregiving", [
            ("Dad moved into Ballard Gardens today. Luis drove the truck with his recliner and his books, and Dad complained about the stairs even though there's an elevator.",
             "Moving day done! Familiar things like his recliner will help a lot. Give yourself a quiet evening."),
        ]),
        ("2026-10-24 23:00", "choir", [
            ("The Brahms concert was tonight at St. Mark's. Dad came in his good jacket and cried during 'Wie lieblich sind deine Wohnungen'. So did I.",
             "What a beautiful evening — singing that movement with your dad in the audience. Sleep well, and remember the race is tomorrow!"),
        ]),
        ("2026-10-25 12:40", "running", [
            ("Lake Union Half: 2:08:55! A new PR by five and a half minutes, six years after my old one. Singing last night and racing this morning was not the smartest plan, but it worked.",
             "Congratulations, Sofia! Under 2:10 and a PR after plantar fasciitis — fantastic. Your new half-marathon best is 2:08:55."),
        ]),
    ],
    callbacks=[
        ("2026-09-17", "2026-09-21", "How is your dad doing after the surgery?"),
        ("2026-10-11", "2026-10-15", "How's your dad settling in at Ballard Gardens?"),
        ("2026-10-26", "2026-10-27", "How are the legs after the Lake Union Half?"),
    ],
))

# ---------------------------------------------------------------- Kenji Watanabe, Melbourne
POOLS["cycling"] = [
    T("Long ride today: {ride_km} km {ride_route}. {ride_note}",
      "{ride_km} km with {countdown} until {ride_event} is right on schedule. {ride_reply}",
      "Solid ride, {first}. {ride_reply}", when="pre"),
    T("How much should I eat on a 210 km ride?",
      "Aim for 60–90 grams of carbohydrate per hour from the start — a mix of drink, bars and real food like rice cakes. Eat before you're hungry.", when="pre"),
    T("Headwind from {wind_dir} the whole way back along Beach Road. Soul-destroying.",
      "Port Phillip winds are brutal in spring. Tuck into a group if you can; sitting in the draft saves about 30% of the effort.",
      "Beach Road in a spring headwind is a rite of passage. Lower cadence, lower expectations, and a coffee stop."),
    T("Should I get a bike fit before {ride_event}? My lower back aches after about {ache_km} km.",
      "Yes — back pain after a set distance is often saddle height or reach. A fit now gives you a few weeks to adapt before {ride_date}.",
      "Probably worth it. Until then, try raising the bars a few millimetres and doing some core work.", when="far"),
    T("My FTP test came out at {ftp} watts.",
      "{ftp} watts at your weight is good for a long sportive. Pace the climbs at about 75% of that and you'll have legs for the end.",
      "Nice. For {ride_event}, ride the climbs at three-quarters of {ftp} and stay patient."),
    T("Rode with the {bunch} this morning. {bunch_note}",
      "{bunch_reply}",
      "Sounds like a good bunch ride. {bunch_reply}"),
    T("Recovering from {ride_event}: {post_ride_note}",
      "{post_ride_reply}", when="post"),
    T("Tyre question: should I run 28 mm or 30 mm for {ride_event}?",
      "On Melbourne roads, 30 mm at slightly lower pressure is more comfortable over 210 km, with almost no speed penalty.",
      "Go 30 mm if your frame clears them; comfort beats a few watts over eight hours.", when="pre"),
]

POOLS["kenji_photo"] = [
    T("Shoot this weekend: {shoot}.",
      "{shoot_reply}",
      "Sounds like a busy weekend. {shoot_reply}"),
    T("Editing backlog: {backlog} galleries still to deliver.",
      "{backlog} galleries is a lot — deliver the oldest first and send clients a quick date estimate so they're not wondering.",
      "Batch the culling for all of them first, then edit one gallery per evening."),
    T("A client hasn't paid the invoice from {invoice_month}. It's {invoice_amount}.",
      "Send a polite reminder with the invoice attached and a specific due date. If that fails, a phone call usually works better than a second email.",
      "Friendly reminder first, then a firm one in a week. Add late-fee terms to your contracts going forward."),
    T("My Lightroom catalogue lives at {catalog_path} and it's getting slow.",
      "Optimise the catalogue, rebuild smart previews, and split it per year if it's over 100,000 photos.",
      "Try 'Optimize Catalog' and keep previews on the SSD. One catalogue per year also helps."),
    T("Updated my portfolio at {portfolio_url}.",
      "Nice. Lead with your strongest ten images rather than everything; clients decide in seconds.",
      "Good — make sure the contact page is two clicks away at most."),
    T("I'm lecturing at RMIT on Thursdays this semester. This week's topic: {lecture}.",
      "{lecture} is a great topic for students. A real before-and-after from your own work usually lands best.",
      "Students love seeing your actual workflow on {lecture}."),
    T("Should I raise my wedding prices for next year? I'm at {price} for a full day.",
      "If you're booking out most weekends, yes — 10–15% is normal. Existing enquiries can keep this year's price.",
      "A full calendar is the signal to raise prices. Try a new package at a higher price and see how enquiries respond."),
]

PERSONAS.append(dict(
    id="kenji-watanabe", name="Kenji",
    tz=[("2026-09-01", 10), ("2026-10-04", 11)],
    weekday_slots=[(6, 8, 2), (12, 14, 1), (20, 23, 4)],
    weekend_slots=[(7, 9, 1), (13, 17, 2), (19, 22, 2)],
    sessions=(3, 4),
    topics={"sourdough": 3, "cycling": 4, "kenji_photo": 3, "kids": 3, "coding": 2},
    facts=dict(first="Kenji", city="Melbourne"),
    arcs={
        "sourdough": dict(
            starter="Hokusai", feed_time=["9pm", "8am", "7am", "10pm", "6am", "9am", "8pm", "7am"],
            starter_note=["He's slow because the kitchen is still cold at night.", "Doubled in eight hours.", "He smells like green apples.",
                          "Leo fed him for the first time.", "He's been very active now that spring is here.",
                          "I built up a big batch for the market loaves.", "Back in the fridge for a lazy week.", "Leo named him properly: Hokusai-san."],
            starter_mood=["slow but healthy", "steady", "happy", "well looked after", "vigorous", "ready for a big bake", "sleepy", "honoured"],
            kitchen_temp=[17, 18, 18, 19, 20, 21, 21, 22], peak_hours=[10, 9, 9, 8, 7, 6, 6, 6], bulk_hours=[10, 9, 9, 8, 7, 7, 6, 6],
            hydration=[75, 75, 78, 78, 80, 78, 78, 80],
            flour=["Laucke Wallaby bakers flour", "Wallaby with 15% wholemeal", "Wallaby with 10% rye", "a stone-milled flour from Tasmania",
                   "Wallaby with 20% spelt", "Wallaby for the market batch", "Wallaby with 15% wholemeal", "the Tasmanian flour again"],
            loaf_note=["Crumb was tight — cold kitchen again.", "Good oven spring, thin crust.", "Nice and sour, Claire loved it.",
                       "Stone-milled flour drank more water than expected.", "Open crumb but it spread a bit.", "Twenty loaves, all roughly the same!",
                       "Just one loaf this week, for Leo's lunches.", "Best crust I've ever made."],
            loaf_tip=["In a cold kitchen, a proofing box or the oven with the light on will help.", "Try a longer bake for a thicker crust.",
                      "Sour flavour comes from longer, cooler fermentation — you nailed it.", "Fresh stone-milled flour is thirstier; add water slowly.",
                      "Spreading at 80% hydration often means shaping needs more tension.", "Consistency across twenty loaves is a real skill.",
                      "Toast for school lunches is a worthy cause.", "Note the bake time and oven temperature for that one."],
            log_path="~/baking/hokusai-log.md",
            experiment=["black sesame", "miso and spring onion", "seeded rye", "furikake crust", "olive", "pumpkin and pepita", "matcha swirl", "seeded rye"],
            score="shallow curved cut", bake_minutes=[45, 45, 48, 45, 42, 40, 45, 45], oven_temp=[245, 245, 250, 245, 240, 240, 245, 250],
            flour_brand="Laucke", shape_time=["8pm", "9pm", "9:30pm", "8:30pm", "10pm", "6pm", "9pm", "8pm"],
            gift_to=["my neighbour Colin", "Leo's teacher", "the Saturday bunch ride", "my mum via video call — well, a photo of it",
                     "Claire's colleagues", "the market organiser", "the couple whose wedding I shot", "my students at RMIT"],
            gift_note=["He paid me in lemons from his tree.", "She asked if I'd bake for the school fete.", "It disappeared at the café stop.",
                       "She said my crumb is better than the bakery near her flat in Osaka.", "They now want a subscription.",
                       "She offered me a permanent spot.", "They sent a thank-you photo with it on their wedding platter.",
                       "They asked for a lecture on bread photography."],
            gift_reply=["Lemons for bread is a fine exchange rate.", "The school fete could be your next market.", "Cyclists are a hungry crowd.",
                        "High praise from Osaka.", "A subscription sounds like the start of a small business.", "That's a great vote of confidence.",
                        "What a lovely way to stay in touch with clients.", "Bread photography is a real niche — why not?"],
        ),
        "cycling": dict(
            pivot=D("2026-10-18"), ride_event="Around the Bay", ride_date="October 18",
            ride_km=[100, 120, 90, 140, 160, 180, 60, 70],
            ride_route=["down Beach Road to Frankston", "up the 1 in 20 in the Dandenongs", "to Kinglake and back",
                        "out to Sorrento along the bay", "around the Yarra Valley loop", "to Geelong and back on the train",
                        "an easy spin along the Capital City Trail", "along the Merri Creek trail"],
            ride_note=["Legs good, bum sore.", "The climb was misery but the descent made up for it.", "Rain for the last hour.",
                       "Longest ride of my life.", "Averaged 27 km/h.", "Tested the full race nutrition plan.", "Legs felt fresh.", "Just cruising."],
            ride_reply=["Saddle time will sort out the soreness.", "The 1 in 20 is a rite of passage.", "Wet rides build character and clean chains.",
                        "A new longest ride is a big confidence boost.", "That's a good pace for the distance.",
                        "Testing nutrition in training is exactly right.", "That's what a taper should feel like.", "Easy days make the hard days possible."],
            wind_dir=["the south", "the south-west", "the south", "the west", "the south-west", "the south", "the north", "the south"],
            ache_km=[80, 90, 100, 120, 130, 140, 150, 150], ftp=[245, 248, 250, 254, 258, 260, 260, 258],
            bunch="Brunswick Cycling Club Saturday bunch",
            bunch_note=["Someone crashed at a roundabout, thankfully no injuries.", "I got dropped on the hill again.",
                        "I did turns on the front for the first time.", "A magpie swooped us on the trail.",
                        "They sprinted for the town sign and I won!", "We talked about Around the Bay logistics the whole way.",
                        "A gentle coffee ride after the big event.", "I rode with Leo on the tag-along for the first 10 km."],
            bunch_reply=["Glad everyone was okay.", "Hills get easier with weight on the right side of the power curve — and time.",
                         "Doing turns means you're strong enough to contribute.", "Spring magpie season — cable ties on the helmet help.",
                         "Town sign sprints are sacred.", "Good to plan the day with people who've ridden it before.", "Coffee rides are the best rides.",
                         "What a great way to share the sport."],
            post_ride_note=S("I slept ten hours.", "2026-10-20", "my legs are fine but my hands are numb.",
                             "2026-10-23", "I'm already looking at the 250 km option for next year.",
                             "2026-10-25", "Claire says I can't buy a new bike as a reward."),
            post_ride_reply=S("Your body knows what it needs.", "2026-10-20", "Numb hands usually mean too much weight on the bars; worth mentioning at a bike fit.",
                              "2026-10-23", "The 250 is a big step — a year is enough time to build for it.",
                              "2026-10-25", "New bar tape is a reasonable compromise."),
        ),
        "kenji_photo": dict(
            shoot=["a wedding at a winery in the Yarra Valley", "a corporate headshot day in the CBD", "a wedding in Fitzroy Gardens",
                   "a family session in Edinburgh Gardens", "a brewery's new product launch", "two weddings back to back",
                   "a wedding in Daylesford", "a restaurant menu shoot in Brunswick"],
            shoot_reply=["Winery light in the late afternoon is beautiful.", "Headshot days are good, steady income.",
                         "Fitzroy Gardens in spring will be gorgeous.", "Family sessions in parks are all about patience and snacks.",
                         "Product launches are great for your commercial portfolio.", "Back-to-back weddings are exhausting; eat properly in between.",
                         "Daylesford is a lovely spot — but plan for the cold evening.", "Food photography in natural light can look stunning."],
            backlog=[3, 4, 5, 4, 3, 5, 6, 4],
            invoice_month=["July", "August", "August", "August", "September", "September", "September", "September"],
            invoice_amount=["$1,800", "$2,400", "$2,400", "$2,400", "$950", "$3,200", "$3,200", "$950"],
            catalog_path="~/Pictures/Lightroom/Kenji-2026.lrcat", portfolio_url="https://example.com/kenji-watanabe/portfolio",
            lecture=["available light", "flash in small rooms", "editing skin tones", "the business side of photography",
                     "storytelling in a wedding gallery", "shooting in harsh midday sun", "black and white conversion", "client communication"],
            price=["$3,800", "$3,800", "$3,800", "$3,800", "$3,800", "$3,800", "$3,800", "$3,800"],
        ),
        "kids": dict(
            kid_a=["Leo"] * 8,
            kid_a_note=["can now read all of hiragana and is starting katakana.", "wants to be a professional cyclist.",
                        "asked my mum on video call why she lives in Osaka and not with us.", "made a bread roll shaped like a dinosaur.",
                        "got a merit certificate at Japanese school.", "helped at the market stall and counted change perfectly.",
                        "made me a 'good luck' card for Around the Bay.", "has been hinting that he wants a camera for his birthday."],
            kid_a_reply=["That's a big milestone — katakana opens up all the loanwords.", "Start with the tag-along and see.",
                         "That's a tender question. Maybe a video tour of her neighbourhood would help him picture it.",
                         "Dinosaur rolls are the best rolls.", "Congratulations to him!", "Maths in the wild!",
                         "Put it in your jersey pocket for the ride.", "A photographer's son wanting a camera — perfect."],
            school_note=["Leo's class is learning about the Murray–Darling basin.", "Saturday Japanese school has a speech contest in October.",
                         "Leo's teacher says he's great at maths but rushes his writing.", "It's the school holidays for the next two weeks.",
                         "School's back and Leo has a new teacher for Japanese.", "Leo is practising his speech for the Japanese school contest.",
                         "Leo came third in the speech contest!", "Camp is next month and he's very excited."],
            school_reply=["Rivers are a great topic for a weekend trip.", "A speech contest is great practice.",
                          "A lot of maths kids rush writing; a checklist might help.", "Holidays — maybe a ride to the zoo?",
                          "How does he like the new teacher?", "Practising in front of the family will help.",
                          "Third place — what a result!", "Camp is a great step in independence."],
            kids_phrase="Leo", kid_pick="Leo might like making a stop-motion film with your camera.",
            kid_question=["why bread rises.", "how cameras capture colour.", "why the bay is called Port Phillip.",
                          "why Japanese has three alphabets.", "how bikes stay upright.", "why spring is so windy in Melbourne.",
                          "how far 210 km is.", "what a megapixel is."],
            kid_answer=["Yeast and bacteria in the starter eat sugar and burp gas, which gets trapped in the dough like tiny balloons.",
                        "The sensor has tiny red, green and blue filters, and the camera mixes them to work out every colour.",
                        "It's named after Arthur Phillip, the first governor of New South Wales.",
                        "Kanji came from Chinese characters, and hiragana and katakana were developed later to write sounds.",
                        "Moving wheels act like spinning tops, and the rider constantly steers to stay balanced.",
                        "In spring, cold fronts from the Southern Ocean meet warming land, so the wind picks up.",
                        "About the distance from your school to Geelong and back — twice.",
                        "A megapixel is a million tiny dots of colour that make up the photo."],
        ),
        "coding": dict(
            project="rawsort", lang="Python", repo_url="https://example.com/kenji-watanabe/rawsort",
            code_file=["rawsort/cli.py", "rawsort/exif.py", "rawsort/rename.py", "rawsort/cli.py", "rawsort/exif.py",
                       "rawsort/rename.py", "rawsort/cli.py", "rawsort/exif.py"],
            code_task=["Making it rename RAW files by shoot date and client name.", "Reading EXIF data with exifread.",
                       "Adding a --dry-run flag because I almost renamed 4,000 photos wrongly.", "Adding a progress bar.",
                       "Handling the new camera's file format.", "Sorting into folders by client.", "Writing tests, finally.",
                       "Packaging it with pyproject.toml."],
            code_reply=["A dry run first is always wise with bulk renames.", "exifread is a solid choice for reading RAW metadata.",
                        "A --dry-run flag should be the default for anything touching thousands of files.", "tqdm is the easy option for progress bars.",
                        "Check whether exifread supports the new RAW format or if you need exiftool.", "Client folders make delivery much easier.",
                        "pytest with a few tiny sample files goes a long way.", "pyproject.toml plus pipx install is a nice setup."],
            tests=["-", "-", 2, 4, 6, 9, 14, 16], stars=["-", "-", 1, 1, 2, 3, 4, 5],
            version=["v0.0.1", "v0.1.0", "v0.1.0", "v0.2.0", "v0.2.0", "v0.3.0", "v0.3.0", "v0.4.0"],
            next_feature=["EXIF reading", "the dry-run flag", "progress bars", "new camera support", "client folders", "tests", "packaging", "a GUI"],
            edge_case="duplicate timestamps, missing EXIF and filenames with spaces",
            issue=["-", "-", "-", "-", "a photographer friend wants Fujifilm support", "the dry run prints too much", "-", "a request for a Windows build"],
            issue_reply=["-", "-", "-", "-", "Ask for a sample RAF file to test with.", "Add a --quiet flag or summarise counts.", "-",
                         "pipx works on Windows too; test it in a VM."],
            bug_story=["Files from two cameras had the same timestamp and one overwrote the other.", "EXIF dates were in local time without a timezone.",
                       "Spaces in client names broke the folder creation.", "The progress bar counted sidecar files twice.",
                       "The new camera's files have a different extension case.", "Renaming across drives was copying instead of moving.",
                       "A test passed only on my laptop because of file ordering.", "pyproject was missing the entry point."],
            bug_reply=["Add the camera serial or a counter to the filename to avoid collisions.", "Treat EXIF time as naive local time and attach Melbourne's timezone.",
                       "Use pathlib and quote nothing — let it handle spaces.", "Filter by extension before counting.",
                       "Compare extensions case-insensitively.", "Moving across filesystems is a copy plus delete; that's expected.",
                       "Sort directory listings explicitly; order isn't guaranteed.", "Add a [project.scripts] entry for the command."],
            loc=[60, 120, 180, 240, 300, 350, 360, 380],
        ),
    },
    beats=[
        ("2026-09-02 21:00", "cycling", [
            ("G'day. I'm Kenji — freelance photographer in Melbourne, living in Brunswick with my partner Claire and our son Leo, who's 9. I bake sourdough most weekends and I'm training for Around the Bay, the 210 km ride around Port Phillip on October 18.",
             "Hi Kenji! 210 km is a serious ride. How long have you been training for it?"),
            ("Since June. My longest ride so far is 100 km. I'm also teaching Leo Japanese — my mum lives in Osaka and calls him every Sunday.",
             "That leaves about seven weeks to build from 100 to 210 km, which is doable. Sunday calls with his grandmother are great motivation for Leo's Japanese."),
        ]),
        ("2026-09-06 15:30", "kids", [
            ("Leo goes to Japanese Saturday school in Carlton. Today he told my mum 「おばあちゃん、だいすき！」 on the phone and she cried.",
             "「おばあちゃん、だいすき」 — 'Grandma, I love you' — no wonder she cried. That's the best possible reason to keep going with Saturday school."),
        ]),
        ("2026-09-12 22:10", "kenji_photo", [
            ("Shot a wedding today and my second camera body died halfway through the ceremony because the battery door snapped. I finished on one body, so the family photos are all on a single card.",
             "A single card with all the family photos is stressful — back it up tonight in two places before you sleep."),
        ]),
        ("2026-09-19 20:40", "kenji_photo", [
            ("I bought a new camera to replace the broken one: a Sony A7 IV. Everything's now Sony, so I sold the old Nikon kit.",
             "One system means shared batteries and lenses on wedding days — a smart consolidation."),
        ]),
        ("2026-09-26 21:20", "coding", [
            ("Wrote a Python script to rename my RAW files by shoot date. It's in ~/bin/rawsort.py:\n```python\nimport sys\nfrom pathlib import Path\nimport exifread\n\nfor p in Path(sys.argv[1]).glob('*.ARW'):\n    with p.open('rb') as f:\n        tags = exifread.process_file(f, stop_tag='DateTimeOriginal')\n    stamp = str(tags['EXIF DateTimeOriginal']).replace(':', '').replace(' ', '_')\n    p.rename(p.with_name(f'{stamp}_{p.name}'))\n```\nIt crashes on some files with a KeyError.",
             "Some files have no DateTimeOriginal tag (edited exports, screenshots), so `tags['EXIF DateTimeOriginal']` raises KeyError. Use `tags.get(...)` and skip or log files without it — and add a --dry-run before renaming thousands of photos."),
        ]),
        ("2026-10-03 19:00", "sourdough", [
            ("Decision made: I'm selling sourdough at the Brunswick farmers market on October 10 as a trial. Twenty loaves, $12 each.",
             "Exciting! Twenty loaves means baking in batches — plan your starter build and bake schedule backwards from Saturday morning."),
        ]),
        ("2026-10-10 13:15", "sourdough", [
            ("Sold out of all twenty loaves in under two hours at the market! The sesame ones went first. I've been asked to come back every second Saturday.",
             "Sold out in two hours — that's a strong signal. Every second Saturday is a manageable rhythm alongside weddings."),
        ]),
        ("2026-10-18 19:45", "cycling", [
            ("Around the Bay done: 210 km, 8 hours 41 minutes of riding. The headwind from Sorrento to Queenscliff was brutal but the ferry across was the best rest stop of my life.",
             "Congratulations, Kenji! Going from 100 km in September to 210 km today is a huge achievement. Enjoy a few days off the bike."),
        ]),
        ("2026-10-23 20:30", "kids", [
            ("Leo turned 10 today. We gave him my old Fujifilm X100 and he's already photographed the cat 300 times.",
             "Happy birthday to Leo! A ten-year-old with an X100 — the family photographer's apprentice has arrived."),
        ]),
    ],
    callbacks=[
        ("2026-09-13", "2026-09-17", "Did the single-card wedding backup work out okay?"),
        ("2026-10-19", "2026-10-23", "How are the legs — and hands — after Around the Bay?"),
        ("2026-10-05", "2026-10-09", "How are the preparations for the market stall going?"),
    ],
))

# --------------------------------------------------------------------------------------
# everyday life: preferences and weekend plans (one list entry per week, per persona)
# --------------------------------------------------------------------------------------

POOLS["life"] = [
    T("Something you should know about me: {pref}", "{pref_reply}", "Noted, {first}. {pref_reply}"),
    T("Plan for the weekend: {weekend}.", "{weekend_reply}", "Sounds good. {weekend_reply}",
      when=lambda st: st["day"].weekday() in (3, 4, 5)),
]

LIFE = {
    "maya-chen": dict(
        pref=["I drink my coffee black, no sugar, and never after 3pm.", "I hate running with music; I like hearing my breathing.",
              "I'm vegetarian on weekdays and eat fish at weekends.", "I'd rather get feedback in writing than in a meeting.",
              "I hate phone calls — text me, basically.", "I prefer early mornings for deep work; my brain is mush after 4pm.",
              "I can't stand coriander; it tastes like soap to me.", "I like my bread very dark, almost burnt."],
        pref_reply=["Black coffee before 3pm — got it.", "Running without music, just your breathing. I'll keep that in mind for race-day tips.",
                    "Weekday vegetarian, fish at weekends — I'll suggest recipes accordingly.", "Written feedback it is.",
                    "Text over calls — understood.", "Deep work in the morning; I'll avoid suggesting afternoon focus blocks.",
                    "No coriander. The soap gene is real.", "A dark bake — good to know for loaf advice."],
        weekend=["brunch in Príncipe Real and a long run on Sunday", "the Feira da Ladra flea market for cheap furniture",
                 "a slow weekend, the knee needs it", "viewing the flat again to measure for curtains", "moving boxes, all weekend",
                 "exploring Arroios and finding a new café", "race weekend, nothing else", "sleeping, eating, and more sleeping"],
        weekend_reply=["Brunch as long-run fuel is a solid strategy.", "The flea market is perfect for a new flat.",
                       "Rest is training too.", "Measuring before buying curtains saves a second trip.", "Ask friends to help and feed them pastries.",
                       "A good neighbourhood café is essential.", "Keep it calm and carb-heavy.", "You've more than earned it."],
    ),
    "daniel-okafor": dict(
        pref=["I don't drink alcohol; haven't for ten years.", "I like to do the big food shop on Sunday mornings before church.",
              "I'm a morning runner; evenings just don't happen with the kids.", "I always take jollof to family gatherings, it's non-negotiable.",
              "I prefer podcasts to music when I'm driving between visits.", "I can't eat anything spicy after a shift, weirdly.",
              "I'd rather have one long phone call with Ngozi than lots of messages.", "I like my tea strong with two sugars."],
        pref_reply=["No alcohol — noted, I won't suggest a celebratory pint.", "Sunday mornings for the shop — good to know when we plan.",
                    "Morning runs only. That fits the new day-shift pattern.", "Jollof at every gathering, understood.",
                    "Podcasts for the drive — want a few recommendations?", "Plain food after shifts — noted.",
                    "One long call with Ngozi rather than messages; worth scheduling weekly.", "Strong, two sugars. Builder's tea."],
        weekend=["parkrun, then the allotment with Tobi", "church on Sunday and lunch at Mum's", "Zara's swimming lesson and a long run",
                 "Ngozi's coming from Leeds to see Mum", "a shift on Saturday, then sleep", "parkrun, then Zara's birthday party prep",
                 "a lie-in for the first time in months", "half-term trip to the Lake District"],
        weekend_reply=["A classic Daniel Saturday.", "Lunch at your mum's is good for everyone.", "Busy but good.",
                       "Good — she'll see your mum with fresh eyes.", "Sleep first, everything else second.", "Party prep with a hamster on the way — brave.",
                       "Enjoy every minute of it.", "The Lakes at half-term will be gorgeous if the weather holds."],
    ),
    "priya-raman": dict(
        pref=["I'm vegetarian, and I don't eat eggs either.", "I prefer tea to coffee — masala chai if I can get it.",
              "I like dark mode in everything.", "I work best late at night; mornings are for emails only.",
              "I prefer trains to planes inside Europe whenever I can.", "I'm not a fan of open-plan offices; I'd take headphones over people.",
              "I love spicy food — the spicier the better.", "I don't like surprises on trips; I plan every day."],
        pref_reply=["Vegetarian and no eggs — I'll keep that in mind for Japan, where egg is everywhere.", "Chai over coffee, noted.",
                    "Dark mode everywhere, understood.", "Late-night focus, mornings for email — good to know.",
                    "Trains over planes in Europe when possible.", "Headphones over open-plan chatter — noted.",
                    "The spicier the better; Japan may disappoint you there.", "Planner, not improviser — I'll help with detailed itineraries."],
        weekend=["bouldering Saturday, Tempelhof picnic Sunday", "a Rust meetup on Saturday", "packing up my desk drawer of cables",
                 "a day trip to Potsdam with Lea", "doing nothing with my finger in a splint", "last weekend before Japan — packing",
                 "Nara and Osaka", "jet lag and laundry"],
        weekend_reply=["Tempelhof in September is perfect for picnics.", "Meetups are great for ledgerline feedback.",
                       "Everyone has that drawer.", "Sanssouci is lovely this time of year.", "Boring but necessary — let it heal.",
                       "Pack light; you'll want space for souvenirs.", "Enjoy the deer!", "The classic post-trip weekend."],
    ),
    "tom-becker": dict(
        pref=["I drink way too much cold brew and I'm not going to stop.", "I'd rather have bad news early than good news late.",
              "I take my meetings walking whenever I can.", "I hate Slack threads longer than ten messages; just call me.",
              "I'm a breakfast tacos person, not a bagels person.", "I don't work Saturdays, except in emergencies.",
              "I like to write investor updates on Sunday nights.", "I prefer one-page docs over slide decks."],
        pref_reply=["Cold brew — understood, no lectures.", "Bad news early — that's a great operating principle.",
                    "Walking meetings, noted.", "Long Slack threads become calls — got it.", "Breakfast tacos, the Austin answer.",
                    "Saturdays off, barring emergencies.", "Sunday-night investor updates — I'll keep it in mind.", "One-pagers over decks."],
        weekend=["Barton Springs with Biscuit", "picking tile at the showroom", "a babymoon in Fredericksburg", "Lena's baby shower",
                 "setting up the nursery", "closing paperwork and a nap", "nothing — newborn weekend", "a walk around the neighbourhood with the stroller"],
        weekend_reply=["Biscuit will love it.", "Tile choices can take hours — bring snacks.", "A short getaway before the baby is a great idea.",
                       "Enjoy being celebrated.", "Assemble the crib early; instructions always lie.", "You deserve the nap.",
                       "Newborn weekends are their own thing.", "First stroller walk — a milestone."],
    ),
    "sofia-alvarez": dict(
        pref=["I grade with a green pen, never red — red feels punitive.", "I like my coffee with oat milk.",
              "I'm not a morning person, even though I teach first period.", "I prefer to run alone; the group is for Wednesdays only.",
              "I read mysteries to relax, never anything about chemistry.", "I hate driving in the dark.",
              "I'd rather cook a big pot of soup on Sunday than cook every night.", "I like to make decisions slowly and talk them through."],
        pref_reply=["Green pen — a kind choice.", "Oat milk, noted.", "First period as a non-morning person — that takes grit.",
                    "Solo runs, with the group on Wednesdays.", "Mysteries only — I'll keep the recommendations away from chemistry.",
                    "No driving in the dark; I'll remember that for Spokane trips.", "Sunday soup for the week — very sensible.",
                    "Slow decisions, talked through — I'm happy to be a sounding board."],
        weekend=["farmers market in Ballard and a long run", "a choir workshop on Saturday and a long run on Sunday", "hospital visits in Spokane",
                 "visiting Ballard Gardens with Dad on a video call", "choir sectionals and grading", "helping Dad move in",
                 "grading and a 17 km run", "the concert and the race, back to back"],
        weekend_reply=["The Ballard market in September is the best.", "A singing day and a long run — a very Sofia weekend.", "Look after yourself too.",
                       "A virtual tour will help him picture it.", "A full but productive weekend.", "Moving weekends are long; eat something proper.",
                       "A good mix.", "That's a huge weekend. Hydrate!"],
    ),
    "kenji-watanabe": dict(
        pref=["I only drink flat whites; Melbourne has ruined me for other coffee.", "I'd rather shoot in natural light than use flash.",
              "I don't post on social media on weekends.", "I like my bread with a very dark, crackly crust.",
              "I prefer riding in the early morning before the traffic.", "I hate editing in the evenings; my eyes are done by then.",
              "I'd rather rent a lens for a job than buy it.", "I cook Japanese food at home most nights — curry rice is Leo's favourite."],
        pref_reply=["Flat whites only — very Melbourne.", "Natural light first, noted.", "No social media on weekends — healthy boundary.",
                    "Dark and crackly, like your market loaves.", "Early rides, before the traffic.", "Editing in the mornings, then.",
                    "Renting over buying — sensible for occasional lenses.", "Curry rice for Leo — a classic."],
        weekend=["a wedding Saturday, long ride Sunday", "Japanese school drop-off and a bake", "a ride to Kinglake",
                 "school holidays — the zoo with Leo", "a bunch ride and a market bake", "the first market stall",
                 "Around the Bay", "Leo's birthday party"],
        weekend_reply=["A big weekend — eat well between them.", "A good rhythm.", "Kinglake is a serious climb.",
                       "Werribee or the city zoo?", "Plan the bake around the ride.", "Good luck with the stall!", "Ride steady and enjoy it.",
                       "Ten is a big birthday."],
    ),
}
for _p in PERSONAS:
    _p["arcs"]["life"] = LIFE[_p["id"]]
    _p["topics"]["life"] = 2


# Replies to the assistant's follow-up questions (see each persona's `callbacks`).
CALLBACK_ANSWERS = {
    "Last week your left knee was hurting — are the physio exercises helping?":
        ("Yes! The clamshells are boring but the knee only complains on stairs now.",
         "That's real progress in a week. Keep them going through the taper."),
    "How is Miso settling into the Arroios flat?":
        ("She's finally out from under the bed and has claimed the balcony chair.",
         "A cat with a balcony chair is a settled cat."),
    "How are your legs feeling a few days after the marathon?":
        ("Stairs are still a negotiation, but I walked to the café without limping today.",
         "Right on schedule — most people feel human again within a week."),
    "Did the onboarding release go out on Monday after the staging outage?":
        ("It did, with one small bug in the Portuguese copy that we hot-fixed the same afternoon.",
         "A same-day fix for one copy bug is a pretty clean release."),
    "How is your mum getting on with the donepezil so far?":
        ("She's a bit nauseous in the mornings, so the GP suggested taking it after her evening meal.",
         "Taking it with food often helps — keep an eye on it for a couple of weeks."),
    "How are the first days with the district nursing team going?":
        ("Really well, actually. The patch is big, but my mentor Priyanka knows every shortcut in Sale.",
         "A mentor with local knowledge is gold in the first month."),
    "How are your legs after the half on Sunday?":
        ("Quads are sore, but I did a slow 3 km with Tobi on his bike.",
         "An easy jog with company is the perfect recovery run."),
    "How did the interview on Thursday go?":
        ("I think it went well. They asked a lot about wound care and working alone.",
         "Those are exactly the strengths A&E gives you. Fingers crossed."),
    "How's the ring finger — still resting it?":
        ("Still resting. It's less swollen and I can make a fist without pain.",
         "Good sign. Give it the full two weeks before any crimping."),
    "Welcome back from Japan! Did the ryokan in Arashiyama live up to the photos?":
        ("Better. They made me a vegetarian kaiseki with eleven courses and a yuzu dessert I still think about.",
         "Eleven vegetarian courses — they clearly took your request seriously."),
    "How did the first Cartwheel interview go on Friday?":
        ("Good! The first round was mostly about idempotency in payment APIs. I'm through to the system design round.",
         "Great — we can practise ledger and idempotency designs before the next round."),
    "How's Biscuit doing after the sock incident?":
        ("Totally back to normal, which means he's trying to eat socks again.",
         "Classic beagle. Closed hampers it is."),
    "How are Lena and Hannah doing?":
        ("Both good. Lena's recovering well and Hannah has very strong opinions about 2am.",
         "Strong opinions at 2am are normal. Glad they're both doing well."),
    "Has the lawyer been through the Northpine term sheet yet?":
        ("Yes. Only one change: pro-rata rights for Bluebonnet too.",
         "That's a small, reasonable change — good to have it clean."),
    "How is your dad doing after the surgery?":
        ("He's up with a walker already, grumbling about the hospital coffee.",
         "Grumbling is a very good sign after hip surgery."),
    "How's your dad settling in at Ballard Gardens?":
        ("He's found the dominoes table and a man called Walt who fished in Alaska.",
         "Dominoes and a new friend in the first week — that's a great start."),
    "How are the legs after the Lake Union Half?":
        ("Sore but happy. I walked around Green Lake with Dad's old cap on.",
         "A lap of Green Lake in his cap is a lovely way to recover."),
    "Did the single-card wedding backup work out okay?":
        ("Yes, every file copied fine. I've ordered a second battery door and a spare body strap.",
         "Glad to hear it. A spare for the weakest part of the kit is cheap insurance."),
    "How are the legs — and hands — after Around the Bay?":
        ("Legs are fine, but two fingers on my left hand are still numb.",
         "That's usually pressure on the ulnar nerve; padded gloves and a bike fit should help."),
    "How are the preparations for the market stall going?":
        ("I've got a bake schedule on the fridge and Leo made a sign that says 'Hokusai Bread'.",
         "A sign by Leo is the best branding you could ask for."),
}


# --------------------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------------------


class NoDash(dict):
    def __getitem__(self, key):
        v = dict.__getitem__(self, key)
        if v is None or v == "-":
            raise KeyError(key)
        return v


def fill_state(tpl: str, st: dict) -> str:
    return string.Formatter().vformat(tpl, (), NoDash(st))


def utc_offset(p: dict, day: dt.date) -> int:
    off = p["tz"][0][1]
    for d, o in p["tz"]:
        if day >= D(d):
            off = o
    return off


def build_state(p: dict, topic: str, day: dt.date) -> dict:
    week = week_of(day)
    st: dict = {}
    for src in (p["facts"], p["arcs"].get(topic, {})):
        for k, v in src.items():
            st[k] = resolve(v, day, week)
            if isinstance(v, list) and week >= 1:
                st["prev_" + k] = v[week - 1]
    st["day"] = day
    st["week"] = week
    st["month"] = f"{day:%B}"
    if "pivot" in st:
        days_left = (st["pivot"] - day).days
        st["days_left"] = days_left
        st["countdown"] = countdown(days_left)
    if isinstance(st.get("weekly_km"), int) and isinstance(st.get("prev_weekly_km"), int):
        r = (st["weekly_km"] - st["prev_weekly_km"]) / st["prev_weekly_km"]
        if r < -0.05:
            st["trend"] = "a step back, which your legs will thank you for"
        elif r <= 0.02:
            st["trend"] = "about the same, which is fine"
        elif r <= 0.12:
            st["trend"] = "a sensible build"
        else:
            st["trend"] = "a big jump — more than ten percent"
    for k, v in list(st.items()):
        if isinstance(v, str) and v:
            st[k + "_cap"] = v[0].upper() + v[1:]
    return st


def when_ok(t: T, st: dict) -> bool:
    if t.when is None:
        return True
    if callable(t.when):
        try:
            return bool(t.when(st))
        except KeyError:
            return False
    if "days_left" not in st:
        return False
    d = st["days_left"]
    return {"pre": d > 0, "post": d <= 0, "near": 0 < d <= 8, "far": d > 8}[t.when]


class Generator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.counts: collections.Counter = collections.Counter()

    # -- the repetition guard -------------------------------------------------------
    def fits(self, *texts: str) -> bool:
        c = collections.Counter()
        for t in texts:
            c.update(sentences(t))
        return all(self.counts[s] + n <= MAX_SENTENCE_REPEATS for s, n in c.items())

    def commit(self, *texts: str) -> None:
        for t in texts:
            self.counts.update(sentences(t))

    # -- templated exchanges --------------------------------------------------------
    def pick_exchange(self, p: dict, topic: str, day: dt.date):
        st = build_state(p, topic, day)
        week = st["week"]
        used = p["_used"]
        cands = []
        for idx, t in enumerate(POOLS[topic]):
            key = (topic, idx)
            limit = 1 if "?" in t.user else MAX_TEMPLATE_USES  # questions are asked once per persona
            if used[key][0] >= limit or used[key][1] == week or not when_ok(t, st):
                continue
            try:
                u = fill_state(t.user, st)
            except (KeyError, IndexError):
                continue
            if u in p["_texts"]:
                continue
            cands.append((used[key][0], self.rng.random(), idx, t, u))
        cands.sort(key=lambda c: (c[0], c[1]))
        for _, _, idx, t, u in cands:
            alts = list(t.assistant)
            self.rng.shuffle(alts)
            for a_tpl in alts:
                try:
                    a = fill_state(a_tpl, st)
                except (KeyError, IndexError):
                    continue
                if a not in p["_texts"] and self.fits(u, a):
                    self.commit(u, a)
                    p["_texts"].update((u, a))
                    used[(topic, idx)] = (used[(topic, idx)][0] + 1, week)
                    return u, a
        return None

    def topic_available(self, p: dict, topic: str, day: dt.date) -> bool:
        for a, b in p.get("topic_off", {}).get(topic, []):
            if D(a) <= day <= D(b):
                return False
        return True

    def choose_topic(self, p: dict, day: dt.date, exclude=()) -> str | None:
        items = [(t, w) for t, w in p["topics"].items() if t not in exclude and self.topic_available(p, t, day)]
        if not items:
            return None
        total = sum(w for _, w in items)
        x = self.rng.uniform(0, total)
        for t, w in items:
            x -= w
            if x <= 0:
                return t
        return items[-1][0]

    # -- sessions -------------------------------------------------------------------
    def plan_sessions(self, p: dict):
        """Return [(local_datetime, beat_or_None)], sorted by time."""
        rng = self.rng
        beats = []
        for when, topic, exchanges in p["beats"]:
            beats.append((dt.datetime.strptime(when, "%Y-%m-%d %H:%M"), (topic, exchanges)))
        beat_days = {b[0].date() for b in beats}
        sessions = list(beats)
        for w in range(WEEKS):
            days = [START + dt.timedelta(days=7 * w + i) for i in range(7)]
            if w == WEEKS - 1:
                days.append(END)
            k = rng.randint(*p["sessions"])
            for day in sorted(rng.sample(days, k)):
                if day in beat_days:
                    continue
                slots = p["weekend_slots"] if day.weekday() >= 5 else p["weekday_slots"]
                a, b, _ = rng.choices(slots, weights=[s[2] for s in slots])[0]
                t = dt.datetime.combine(day, dt.time(rng.randrange(a, b), rng.randrange(60)))
                sessions.append((t, None))
        for start, end, _ in p.get("callbacks", []):
            window = [D(start) + dt.timedelta(days=i) for i in range((D(end) - D(start)).days + 1)]
            if not any(s[0].date() in window for s in sessions):
                day = rng.choice(window)
                slots = p["weekend_slots"] if day.weekday() >= 5 else p["weekday_slots"]
                a, b, _ = rng.choices(slots, weights=[s[2] for s in slots])[0]
                sessions.append((dt.datetime.combine(day, dt.time(rng.randrange(a, b), rng.randrange(60))), None))
        sessions.sort(key=lambda s: s[0])
        return sessions

    def opener(self, local: dt.datetime) -> str | None:
        h = local.hour
        key = "morning" if 5 <= h < 11 else "midday" if 11 <= h < 17 else "evening" if 17 <= h < 23 else "night"
        options = list(OPENERS[key])
        self.rng.shuffle(options)
        for o in options:
            if self.fits(o):
                return o
        return None

    def persona_messages(self, p: dict):
        rng = self.rng
        p["_used"] = collections.defaultdict(lambda: (0, -1))
        p["_texts"] = set()
        callbacks = list(p.get("callbacks", []))
        out = []
        last_utc = None
        topic_turns = collections.Counter()
        for local, beat in self.plan_sessions(p):
            day = local.date()
            exchanges = []  # (user, assistant, topic)
            if beat:
                topic, fixed = beat
                for u, a in fixed:
                    self.commit(u, a)
                    exchanges.append([u, a, topic])
                extra = rng.randint(0, 2)
            else:
                topic = self.choose_topic(p, day)
                extra = rng.randint(3, 6)
            current = topic
            tried = set()
            while extra > 0:
                if exchanges and rng.random() < 0.3:
                    nxt = self.choose_topic(p, day, exclude={current})
                    current = nxt or current
                ex = self.pick_exchange(p, current, day) if current else None
                if ex is None:
                    tried.add(current)
                    current = self.choose_topic(p, day, exclude=tried)
                    if current is None:
                        break
                    continue
                exchanges.append([ex[0], ex[1], current])
                extra -= 1
            if not exchanges:
                continue
            if not beat and rng.random() < 0.35:
                o = self.opener(local)
                if o:
                    self.commit(o)
                    exchanges[0][0] = o + " " + exchanges[0][0]
            for cb in callbacks:
                start, end, question = cb
                if D(start) <= day <= D(end):
                    ans_u, ans_a = CALLBACK_ANSWERS[question]
                    i = min(len(exchanges) - 1, rng.randint(0, 1))
                    exchanges[i][1] = exchanges[i][1] + " " + question
                    exchanges.insert(i + 1, [ans_u, ans_a, exchanges[i][2]])
                    self.commit(question, ans_u, ans_a)
                    callbacks.remove(cb)
                    break
            # timestamps
            t = local - dt.timedelta(hours=utc_offset(p, day))
            t = t.replace(second=rng.randrange(60))
            lo = dt.datetime.combine(START, dt.time(0, 0))
            hi = dt.datetime.combine(END, dt.time(22, 0))
            if t < lo:  # keep every timestamp inside the dataset's UTC date range
                t = lo + dt.timedelta(minutes=rng.randrange(60, 480))
            elif t > hi:
                t = hi - dt.timedelta(minutes=rng.randrange(60, 480))
            if last_utc and t <= last_utc:
                t = last_utc + dt.timedelta(minutes=45)
            for u, a, tp in exchanges:
                out.append(dict(conversation=p["id"], role="user", name=p["name"], ts=t, content=u, topic=tp))
                t += dt.timedelta(seconds=rng.randint(6, 25) + len(a) // 12)
                out.append(dict(conversation=p["id"], role="assistant", name=ASSISTANT, ts=t, content=a, topic=tp))
                topic_turns[tp] += 2
                t += dt.timedelta(seconds=rng.randint(30, 150) + len(u) // 6)
            last_utc = t
        if callbacks:
            print(f"WARNING {p['id']}: unused callbacks {callbacks}", file=sys.stderr)
        p["_topic_turns"] = topic_turns
        return out


def rfc3339(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def validate(path: Path) -> dict:
    required = ("conversation", "role", "name", "timestamp", "content")
    last: dict = {}
    per_conv = collections.Counter()
    sent = collections.Counter()
    first_ts, last_ts = None, None
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            obj = json.loads(line)
            assert list(obj) == list(required), f"line {n}: fields {list(obj)}"
            assert all(isinstance(obj[k], str) and obj[k].strip() for k in required), f"line {n}: empty field"
            assert obj["role"] in ("user", "assistant"), f"line {n}: role"
            assert obj["timestamp"].endswith("Z"), f"line {n}: not UTC"
            ts = dt.datetime.fromisoformat(obj["timestamp"].replace("Z", "+00:00"))
            c = obj["conversation"]
            assert c not in last or ts > last[c], f"line {n}: timestamp not increasing in {c}"
            last[c] = ts
            per_conv[c] += 1
            sent.update(sentences(obj["content"]))
            first_ts = ts if first_ts is None or ts < first_ts else first_ts
            last_ts = ts if last_ts is None or ts > last_ts else last_ts
    total = sum(per_conv.values())
    assert total >= 1000, f"only {total} turns"
    worst = sent.most_common(1)[0]
    assert worst[1] <= MAX_SENTENCE_REPEATS, f"sentence repeated {worst[1]} times: {worst[0]!r}"
    return dict(per_conv=per_conv, total=total, first=first_ts, last=last_ts, sentences=sent, worst=worst)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()

    gen = Generator(SEED)
    rows = []
    for p in PERSONAS:
        rows.extend(gen.persona_messages(p))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            rec = {"conversation": r["conversation"], "role": r["role"], "name": r["name"],
                   "timestamp": rfc3339(r["ts"]), "content": r["content"]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    v = validate(args.out)
    size = args.out.stat().st_size
    sessions = collections.Counter()
    prev = {}
    for r in rows:
        c = r["conversation"]
        if c not in prev or r["ts"] - prev[c] > dt.timedelta(hours=2):
            sessions[c] += 1
        prev[c] = r["ts"]
    print(f"wrote {args.out} ({size:,} bytes, {size / 1024:.0f} KiB)")
    print(f"personas/conversations: {len(v['per_conv'])}, turns: {v['total']}, "
          f"user: {sum(r['role'] == 'user' for r in rows)}, assistant: {sum(r['role'] == 'assistant' for r in rows)}")
    print(f"date range (UTC): {rfc3339(v['first'])} .. {rfc3339(v['last'])}")
    for p in PERSONAS:
        c = p["id"]
        topics = ", ".join(f"{t} {n}" for t, n in p["_topic_turns"].most_common())
        print(f"  {c:16} {v['per_conv'][c]:4} turns, {sessions[c]:2} sessions | {topics}")
    distinct = len(v["sentences"])
    twice = sum(1 for n in v["sentences"].values() if n == 2)
    print(f"sentences: {sum(v['sentences'].values())} total, {distinct} distinct, {twice} appear twice, "
          f"max repeats {v['worst'][1]} (limit {MAX_SENTENCE_REPEATS}) — OK")
    print("validation: all lines parse, required fields present, timestamps RFC 3339 UTC and increasing per conversation — OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
